import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { createCertificate, type IssuedCertificate } from '../server/index.js';
import {
  createOrchClient, createSubjectAccessReview, createTokenReview, loadOrchconfig, resolveOrchconfig, ORCHCLIENT_CONFIG_INVALID,
} from './index.js';
import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { waitFor } from '../../../test/helpers/wait.js';

let ca: IssuedCertificate;
let serving: IssuedCertificate;
let client: IssuedCertificate;
let dir: string;

before(async () => {
  ca = await createCertificate({ subject: { commonName: 'ca' }, isCA: true, keyType: 'ecdsa' });
  serving = await createCertificate({ subject: { commonName: 'api' }, issuer: ca, serverAuth: true, keyType: 'ecdsa', altNames: ['127.0.0.1', 'localhost'] });
  client = await createCertificate({ subject: { commonName: 'node', organizations: ['nodes'] }, issuer: ca, clientAuth: true, keyType: 'ecdsa' });
  dir = await mkdtemp(join(tmpdir(), 'orchclient-test-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const b64 = (s: string): string => Buffer.from(s).toString('base64');

void describe('the connection file', () => {
  void it('resolves the current context: inline CA and client certificate, token', async () => {
    const c = await resolveOrchconfig({
      clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443/', 'certificate-authority-data': b64(ca.certPem), 'tls-server-name': 'api' } }],
      users: [{ name: 'u', user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem), token: 't0k' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }, { name: 'y', context: { cluster: 'nope' } }],
      'current-context': 'x',
    }, '/etc/orchconfig');
    assert.equal(c.server, 'https://10.0.0.1:6443');
    assert.equal(c.ca?.toString(), ca.certPem);
    assert.equal(c.clientKey?.toString(), client.keyPem);
    assert.equal(c.token, 't0k');
    assert.equal(c.tlsServerName, 'api');
    assert.equal(c.insecureSkipTLSVerify, false);
  });

  void it('reads files relative to the connection file, and a token file', async () => {
    await writeFile(join(dir, 'ca.crt'), ca.certPem);
    await writeFile(join(dir, 'tok'), 'abc\n');
    await writeFile(join(dir, 'cfg.yaml'), [
      'apiVersion: v1', 'kind: Config', 'clusters:', '- name: c', '  cluster: {server: "https://127.0.0.1:1", certificate-authority: ca.crt}',
      'users:', '- name: u', '  user: {tokenFile: tok}', 'contexts:', '- name: x', '  context: {cluster: c, user: u}', 'current-context: x', '',
    ].join('\n'));
    const c = await loadOrchconfig(join(dir, 'cfg.yaml'));
    assert.equal(c.ca?.toString(), ca.certPem);
    assert.equal(c.tokenFile, join(dir, 'tok'));
  });

  void it('names what is wrong', async () => {
    const bad = async (doc: unknown, text: RegExp): Promise<void> => {
      await assert.rejects(resolveOrchconfig(doc, '/x/cfg'), (err: unknown) => err instanceof OrchError && err.code === ORCHCLIENT_CONFIG_INVALID && text.test(err.message));
    };
    await bad({ clusters: [], contexts: [], 'current-context': 'a' }, /context "a" not found/);
    await bad({ clusters: [{ name: 'c', cluster: {} }], contexts: [{ name: 'a', context: { cluster: 'c' } }], 'current-context': 'a' }, /has no server/);
    await bad({ clusters: [{ name: 'c', cluster: { server: 'ftp://x' } }], contexts: [{ name: 'a', context: { cluster: 'c' } }], 'current-context': 'a' }, /https:\/\//);
    await bad({
      clusters: [{ name: 'c', cluster: { server: 'https://x' } }], users: [{ name: 'u', user: { 'client-certificate-data': b64(client.certPem) } }],
      contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }], 'current-context': 'a',
    }, /needs its key/);
    await bad({ clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority': 'missing.crt' } }] }, /cannot read certificate-authority \/x\/missing.crt/);
    await assert.rejects(loadOrchconfig(join(dir, 'absent.yaml')), /cannot read it/);
  });
});

void describe('the client', () => {
  let url: string;
  const seen: { path: string; auth: string; cn: string; body: unknown }[] = [];
  let failures = 0;
  let server: ReturnType<typeof createServer>;

  before(async () => {
    server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        const socket = req.socket;
        // An empty object when the client sent no certificate.
        const peer = socket instanceof TLSSocket ? socket.getPeerCertificate() : undefined;
        const subject = peer === undefined || Object.keys(peer).length === 0 ? undefined : peer.subject;
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { spec?: unknown };
        seen.push({ path: req.url ?? '', auth: req.headers.authorization ?? '', cn: typeof subject?.CN === 'string' ? subject.CN : '', body });
        if (req.url === '/flaky' && failures++ < 2) {
          res.writeHead(503).end('{"kind":"Status","message":"try later"}');
          return;
        }
        if (req.url === '/denied') {
          res.writeHead(403).end('{"kind":"Status","message":"no way"}');
          return;
        }
        if (req.url?.endsWith('tokenreviews') === true) {
          res.writeHead(201).end(JSON.stringify({ kind: 'TokenReview', status: { authenticated: true, user: { username: 'bob', groups: ['g'] } } }));
          return;
        }
        if (req.url?.endsWith('subjectaccessreviews') === true) {
          res.writeHead(201).end(JSON.stringify({ kind: 'SubjectAccessReview', status: { allowed: false, reason: 'nope' } }));
          return;
        }
        res.writeHead(200).end(JSON.stringify({ echo: body }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => { server.close(); server.closeAllConnections(); });

  void it('posts JSON with the client certificate and the bearer token, and decodes the answer', async () => {
    const c = createOrchClient({ connection: { server: url, ca: Buffer.from(ca.certPem), insecureSkipTLSVerify: false, clientCert: Buffer.from(client.certPem), clientKey: Buffer.from(client.keyPem), token: 'tkn' }, clock: new FakeClock() });
    assert.deepEqual(await c.postJson('/echo', { a: 1 }), { echo: { a: 1 } });
    assert.deepEqual(seen.at(-1), { path: '/echo', auth: 'Bearer tkn', cn: 'node', body: { a: 1 } });
    const tr = await createTokenReview(c, 'secret');
    assert.deepEqual(tr, { authenticated: true, user: { username: 'bob', groups: ['g'] } });
    assert.deepEqual(seen.at(-1)?.body, { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token: 'secret' } });
    const sar = await createSubjectAccessReview(c, { user: 'bob', resourceAttributes: { verb: 'get', resource: 'nodes' } });
    assert.deepEqual(sar, { allowed: false, reason: 'nope' });
    assert.equal(seen.at(-1)?.path, '/apis/authorization.orch.io/v1/subjectaccessreviews');
    c.close();
  });

  void it('retries transient failures, maps statuses to categories, and reads a token file', async () => {
    await writeFile(join(dir, 'token'), 'from-file\n');
    const clock = new FakeClock();
    const c = createOrchClient({ connection: { server: url, ca: Buffer.from(ca.certPem), insecureSkipTLSVerify: false, tokenFile: join(dir, 'token') }, retryDelayMs: 100, clock });
    let answer: unknown;
    const flaky = c.postJson('/flaky', {}).then((a) => { answer = a; });
    // Each retry waits on the clock: moved on once the failed attempt's pause is pending.
    await waitFor('the answer after two retries', async () => {
      const next = clock.untilNext();
      if (next !== undefined) await clock.advance(next);
      return answer !== undefined;
    }, { timeoutMs: 5000, intervalMs: 5 });
    await flaky;
    assert.deepEqual(answer, { echo: {} });
    assert.deepEqual(clock.delays, [100, 200], 'the pause doubles');
    assert.equal(failures, 3);
    assert.equal(seen.at(-1)?.auth, 'Bearer from-file');
    await writeFile(join(dir, 'token'), 'rotated\n');
    await c.postJson('/echo', {});
    assert.equal(seen.at(-1)?.auth, 'Bearer from-file', 'the token file is read again only after a minute');
    await clock.advance(60_001);
    await c.postJson('/echo', {});
    assert.equal(seen.at(-1)?.auth, 'Bearer rotated');
    await assert.rejects(c.postJson('/denied', {}), (err: unknown) => err instanceof OrchError && err.category === 'forbidden' && /403 no way/.test(err.message));
    const untrusted = createOrchClient({ connection: { server: url, insecureSkipTLSVerify: false }, retries: 0, clock: new FakeClock() });
    await assert.rejects(untrusted.postJson('/echo', {}), (err: unknown) => err instanceof OrchError && err.category === 'unavailable');
    c.close();
    untrusted.close();
  });
});
