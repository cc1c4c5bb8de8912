import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { formatTime } from '../../api/time.js';
import { ResourceRegistry, type WireObject } from '../registry/index.js';
import { podDefinition } from '../resources/pods/index.js';
import { secretDefinition } from '../resources/secrets/index.js';
import { serviceAccountDefinition } from '../resources/serviceaccounts/index.js';
import { StatusError } from '../status/index.js';
import { openSqliteStore, type ManagedStore } from '../storage/index.js';
import {
  answerTokenRequest, createServiceAccountAuthenticator, GENERATED_KEY_FILE, loadServiceAccountKeys, TokenIssuer, type ObjectLookup, type ServiceAccountKeys,
} from './index.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';

const ISSUER = 'https://orch.test';
const dir = mkdtempSync(join(syncedTmpdir(), 'sa-test-'));
after(() => { rmSync(dir, { recursive: true, force: true }); });

function keysIn(sub: string): ServiceAccountKeys {
  return loadServiceAccountKeys({ signingKeyFile: '', keyFiles: [], dataDir: join(dir, sub) });
}

void describe('service account keys', () => {
  void it('makes an ECDSA key once under the data directory and reads it back after', () => {
    const first = keysIn('gen');
    const file = join(dir, 'gen', GENERATED_KEY_FILE);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(readFileSync(file, 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
    assert.equal(first.signing.alg, 'ES256');
    assert.equal(keysIn('gen').signing.kid, first.signing.kid);
  });

  void it('signs with an RSA key file (RS256) and verifies with every key of the key files', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    writeFileSync(join(dir, 'rsa.key'), rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }));
    writeFileSync(join(dir, 'pub.pem'), `${other.publicKey.export({ type: 'spki', format: 'pem' }).toString()}\n`);
    const keys = loadServiceAccountKeys({ signingKeyFile: join(dir, 'rsa.key'), keyFiles: [join(dir, 'pub.pem')], dataDir: dir });
    assert.equal(keys.signing.alg, 'RS256');
    assert.deepEqual(keys.verifying.map((k) => k.alg), ['RS256', 'ES384']);
  });

  void it('names the flag and the file of a key it cannot use', () => {
    writeFileSync(join(dir, 'empty.pem'), 'nothing here\n');
    assert.throws(() => loadServiceAccountKeys({ signingKeyFile: '', keyFiles: [join(dir, 'empty.pem')], dataDir: join(dir, 'gen') }),
      (err: unknown) => isOrchError(err) && err.code === 'APISERVER_SERVICE_ACCOUNT_KEY_INVALID' && err.message.includes('empty.pem: no PEM-encoded'));
    assert.throws(() => loadServiceAccountKeys({ signingKeyFile: join(dir, 'missing.key'), keyFiles: [], dataDir: dir }), /--service-account-signing-key-file: cannot read/);
  });
});

void describe('bound tokens', () => {
  const issuer = new TokenIssuer({ keys: keysIn('tokens'), issuers: [ISSUER, 'https://old.test'] });
  const now = Date.UTC(2030, 0, 1);
  const subject = { namespace: 'ns', serviceAccount: { name: 'robot', uid: 'sa-uid' }, pod: { name: 'web', uid: 'pod-uid' } };

  void it('carries the subject, audiences and expiry, and verifies within the leeway only', async () => {
    const { token, expiresAt } = await issuer.issue({ ...subject, audiences: ['api'], expirationSeconds: 600, now });
    assert.equal(expiresAt, now + 600_000);
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
    assert.equal(payload.sub, 'system:serviceaccount:ns:robot');
    assert.deepEqual(payload['orch.io'], { namespace: 'ns', serviceaccount: { name: 'robot', uid: 'sa-uid' }, pod: { name: 'web', uid: 'pod-uid' } });
    const ok = await issuer.verify(token, now + 659_000);
    assert.ok(ok.kind === 'valid');
    assert.deepEqual({ pod: ok.token.pod, audiences: ok.token.audiences }, { pod: subject.pod, audiences: ['api'] });
    assert.deepEqual(await issuer.verify(token, now + 661_000), { kind: 'invalid', reason: 'service account token has expired' });
  });

  void it('leaves other tokens to other authenticators and refuses a signature of another key', async () => {
    assert.deepEqual(await issuer.verify('static-token', now), { kind: 'foreign' });
    const stranger = new TokenIssuer({ keys: keysIn('stranger'), issuers: ['https://elsewhere'] });
    assert.deepEqual(await issuer.verify((await stranger.issue({ ...subject, audiences: ['api'], expirationSeconds: 600, now })).token, now), { kind: 'foreign' });
    const forger = new TokenIssuer({ keys: keysIn('forger'), issuers: [ISSUER] });
    const forged = await issuer.verify((await forger.issue({ ...subject, audiences: ['api'], expirationSeconds: 600, now })).token, now);
    assert.equal(forged.kind, 'invalid');
  });
});

void describe('the service account authenticator', () => {
  const clock = new FakeClock(Date.UTC(2030, 0, 1));
  const issuer = new TokenIssuer({ keys: keysIn('authn'), issuers: [ISSUER] });
  const objects = new Map<string, WireObject>([
    ['serviceaccounts/ns/robot', { metadata: { name: 'robot', uid: 'sa-uid' } }],
    ['pods/ns/web', { metadata: { name: 'web', uid: 'pod-uid' } }],
  ]);
  const lookup: ObjectLookup = (resource, namespace, name) => Promise.resolve(objects.get(`${resource}/${namespace}/${name}`));
  const authn = createServiceAccountAuthenticator({ issuer, lookup, apiAudiences: [ISSUER], clock });
  const token = async (extra: { pod?: { name: string; uid: string }; audiences?: string[] } = {}): Promise<string> =>
    (await issuer.issue({ namespace: 'ns', serviceAccount: { name: 'robot', uid: 'sa-uid' }, ...(extra.pod === undefined ? {} : { pod: extra.pod }), audiences: extra.audiences ?? [ISSUER], expirationSeconds: 3600, now: clock.now() })).token;

  void it('answers the service account user, its groups and the bound pod', async () => {
    const result = await authn.authenticate(await token({ pod: { name: 'web', uid: 'pod-uid' } }));
    assert.ok(result.kind === 'user');
    assert.deepEqual({ ...result.user, extra: { ...result.user.extra, 'authentication.orch.io/credential-id': [] } }, {
      name: 'system:serviceaccount:ns:robot', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
      extra: { 'authentication.orch.io/pod-name': ['web'], 'authentication.orch.io/pod-uid': ['pod-uid'], 'authentication.orch.io/credential-id': [] },
    });
  });

  void it('refuses a token whose pod is gone or was replaced, whose account was replaced, or meant for another audience', async () => {
    const gone = await authn.authenticate(await token({ pod: { name: 'other', uid: 'x' } }));
    assert.deepEqual(gone, { kind: 'invalid', reason: 'service account token: pod ns/other has been deleted' });
    const replaced = await authn.authenticate(await token({ pod: { name: 'web', uid: 'old-uid' } }));
    assert.match(replaced.kind === 'invalid' ? replaced.reason : '', /pod UID \(pod-uid\) does not match the claim \(old-uid\)/);
    const aud = await authn.authenticate(await token({ audiences: ['vault'] }));
    assert.match(aud.kind === 'invalid' ? aud.reason : '', /audiences \["vault"\] are not among the accepted/);
    assert.equal((await authn.authenticate(await token({ audiences: ['vault'] }), ['vault'])).kind, 'user');
    objects.set('serviceaccounts/ns/robot', { metadata: { name: 'robot', uid: 'new-uid' } });
    const account = await authn.authenticate(await token());
    assert.match(account.kind === 'invalid' ? account.reason : '', /service account UID \(new-uid\) does not match the claim \(sa-uid\)/);
    objects.set('serviceaccounts/ns/robot', { metadata: { name: 'robot', uid: 'sa-uid' } });
  });

  void it('keeps accepting a token of a pod deleted less than a minute ago', async () => {
    const t = await token({ pod: { name: 'web', uid: 'pod-uid' } });
    objects.set('pods/ns/web', { metadata: { name: 'web', uid: 'pod-uid', deletionTimestamp: formatTime(clock.now()) } });
    await clock.advance(59_000);
    assert.equal((await authn.authenticate(t)).kind, 'user');
    await clock.advance(2_000);
    assert.equal((await authn.authenticate(t)).kind, 'invalid');
  });
});

void describe('TokenRequest', () => {
  let store: ManagedStore;
  let accounts: ResourceRegistry;
  let pods: ResourceRegistry;
  const issuer = new TokenIssuer({ keys: keysIn('request'), issuers: [ISSUER] });
  const now = new Date(Date.UTC(2030, 0, 1));
  const ctx = { user: { name: 'admin', uid: '', groups: ['system:masters'] }, now };
  const options = (max = 0): Parameters<typeof answerTokenRequest>[0] => ({
    issuer, apiAudiences: [ISSUER], maxExpirationSeconds: max, maxRequestBytes: 1 << 20, pods: () => pods, secrets: () => new ResourceRegistry({ def: secretDefinition, store }),
  });
  const request = (spec: WireObject = {}, metadata: WireObject = {}): WireObject => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata, spec });
  const status = async (p: Promise<unknown>): Promise<number> => p.then(() => 0, (err: unknown) => (err instanceof StatusError ? err.httpCode : -1));

  before(async () => {
    store = await openSqliteStore({ dataDir: join(dir, 'store'), compactionIntervalMs: 3_600_000 });
    accounts = new ResourceRegistry({ def: serviceAccountDefinition, store });
    pods = new ResourceRegistry({ def: podDefinition, store });
    await accounts.create(ctx, 'ns', { metadata: { name: 'robot' } }, { dryRun: false });
    await accounts.create(ctx, 'ns', { metadata: { name: 'other' } }, { dryRun: false });
    await pods.create(ctx, 'ns', { metadata: { name: 'web' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }] } }, { dryRun: false });
  });
  after(async () => { await store.close(); });

  void it('defaults the audiences and an hour, and answers the token and its expiry', async () => {
    const { answer, warnings } = await answerTokenRequest(options(), accounts, 'ns', 'robot', request(), now);
    assert.deepEqual(answer.spec, { audiences: [ISSUER], expirationSeconds: 3600 });
    assert.deepEqual(answer.metadata, { name: 'robot', namespace: 'ns', creationTimestamp: formatTime(now.getTime()) });
    const s = answer.status as { token: string; expirationTimestamp: string };
    assert.equal(s.expirationTimestamp, formatTime(now.getTime() + 3_600_000));
    assert.equal((await issuer.verify(s.token, now.getTime())).kind, 'valid');
    assert.deepEqual(warnings, []);
  });

  void it('binds to a pod of the account; refuses other pods, other kinds, stale UIDs, short or named-elsewhere requests', async () => {
    const pod = (extra: WireObject = {}): WireObject => request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', ...extra } });
    const bound = await answerTokenRequest(options(), accounts, 'ns', 'robot', pod(), now);
    const verified = await issuer.verify((bound.answer.status as { token: string }).token, now.getTime());
    assert.equal(verified.kind === 'valid' ? verified.token.pod?.name : '', 'web');
    assert.equal(await status(answerTokenRequest(options(), accounts, 'ns', 'other', pod(), now)), 400);
    assert.equal(await status(answerTokenRequest(options(), accounts, 'ns', 'robot', pod({ uid: 'stale' }), now)), 409);
    assert.equal(await status(answerTokenRequest(options(), accounts, 'ns', 'robot', request({ boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'n' } }), now)), 400);
    assert.equal(await status(answerTokenRequest(options(), accounts, 'ns', 'robot', request({ expirationSeconds: 599 }), now)), 422);
    assert.equal(await status(answerTokenRequest(options(), accounts, 'ns', 'robot', request({}, { name: 'other' }), now)), 422);
    assert.equal(await status(answerTokenRequest(options(), accounts, 'ns', 'nobody', request(), now)), 404);
  });

  void it('shortens a request above the maximum, with a warning', async () => {
    const { answer, warnings } = await answerTokenRequest(options(3600), accounts, 'ns', 'robot', request({ expirationSeconds: 7200 }), now);
    assert.equal((answer.spec as { expirationSeconds: number }).expirationSeconds, 3600);
    assert.deepEqual(warnings, ['requested expiration of 7200 seconds shortened to 3600 seconds']);
  });
});
