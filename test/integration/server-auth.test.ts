/**
 * Authentication and authorization of the agent's secure port, end to end: the real nodeagent
 * binary on a private containerd, --orchconfig pointing to the review server of
 * test/helpers/review-server.ts, clients with certificates of a test CA (Node's https and
 * curl). Client certificates (valid, other CA, expired), bearer tokens (accepted, rejected,
 * cached), anonymous requests (off and on), SubjectAccessReview fields, 403 bodies and the
 * caching of allowed and denied answers, and an API server that stops answering.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE } from '../helpers/pods.js';
import { createTestPki, curl, httpsCall, startReviewServer, type ReviewServer, type TestClientCert, type TestPki } from '../helpers/review-server.js';
import { waitFor } from '../helpers/wait.js';

let containerd: ContainerdInstance;
let review: ReviewServer;
let pki: TestPki;
let alice: TestClientCert;
let rootDir: string;
const agents: AgentProcess[] = [];

async function startAgent(args: readonly string[]): Promise<{ agent: AgentProcess; port: number }> {
  for (const a of agents) await a.stop();
  const port = await freePort();
  const agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir,
    args: [`--hostname-override=${NODE}`, `--port=${port}`, `--orchconfig=${review.orchconfig}`, ...args],
  });
  agents.push(agent);
  return { agent, port };
}

before(async () => {
  containerd = await startContainerd();
  review = await startReviewServer({ tokenFile: true });
  pki = await createTestPki();
  alice = await pki.client('alice', ['admins', 'ops']);
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
  review.tokens.set('bob-token', { username: 'bob', uid: 'u-bob', groups: ['devs'] });
});

after(async () => {
  for (const a of agents) await a.stop();
  await review.close();
  await containerd.stop();
  await rm(rootDir, { recursive: true, force: true });
  await rm(pki.dir, { recursive: true, force: true });
});

void describe('the secure port with client certificates, token webhook and webhook authorization (anonymous off)', () => {
  let port: number;
  before(async () => {
    ({ port } = await startAgent([
      `--client-ca-file=${pki.caFile}`, '--authentication-token-webhook', '--authentication-token-webhook-cache-ttl=1h',
      '--anonymous-auth=false', '--authorization-mode=Webhook',
      '--authorization-webhook-cache-authorized-ttl=1h', '--authorization-webhook-cache-unauthorized-ttl=2s',
    ]));
  });

  void it('authenticates a client certificate of the client CA as its CommonName with its Organizations', async () => {
    const before = review.accessReviews.length;
    const r = await httpsCall({ port, path: '/stats/summary', cert: alice.certPem, key: alice.keyPem });
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(review.accessReviews.slice(before), [{
      resourceAttributes: { verb: 'get', version: 'v1', resource: 'nodes', subresource: 'stats', name: NODE },
      user: 'alice', groups: ['admins', 'ops', 'system:authenticated'],
    }]);
    const c = await curl(['-k', '--cert', alice.certFile, '--key', alice.keyFile, `https://127.0.0.1:${port}/healthz`]);
    assert.deepEqual(c, { status: 200, body: 'ok' });
    assert.equal(review.refused, 0, 'the agent presents its own token (from the token file) to the API server');
  });

  void it('refuses certificates of another CA and expired ones with 401, and requests without credentials', async () => {
    const other = await pki.client('mallory', [], { otherCA: true });
    const expired = await pki.client('alice', ['admins'], { expired: true });
    for (const c of [other, expired]) {
      const r = await httpsCall({ port, path: '/pods', cert: c.certPem, key: c.keyPem });
      assert.deepEqual([r.status, r.body], [401, 'Unauthorized']);
    }
    assert.equal((await curl(['-k', '--cert', other.certFile, '--key', other.keyFile, `https://127.0.0.1:${port}/pods`])).status, 401);
    assert.deepEqual(await curl(['-k', `https://127.0.0.1:${port}/pods`]), { status: 401, body: 'Unauthorized' });
  });

  void it('accepts a token the API server knows, refuses one it does not, and caches both answers', async () => {
    const first = review.tokenReviews.length;
    for (let i = 0; i < 3; i++) {
      assert.equal((await httpsCall({ port, path: '/pods', token: 'bob-token' })).status, 200);
      assert.deepEqual(await curl(['-k', '-H', 'Authorization: Bearer wrong-token', `https://127.0.0.1:${port}/pods`]), { status: 401, body: 'Unauthorized' });
    }
    assert.deepEqual(review.tokenReviews.slice(first), ['bob-token', 'wrong-token'], 'one review per token within the cache TTL');
    const last = review.accessReviews.at(-1);
    assert.deepEqual(last, {
      resourceAttributes: { verb: 'get', version: 'v1', resource: 'nodes', subresource: 'proxy', name: NODE },
      user: 'bob', uid: 'u-bob', groups: ['devs', 'system:authenticated'],
    });
  });

  void it('maps methods and paths to verbs and subresources', async () => {
    const before = review.accessReviews.length;
    const calls: [string, string][] = [['GET', '/metrics/cadvisor'], ['GET', '/spec/'], ['GET', '/logs/'], ['POST', '/run/default/x/y?cmd=ls'], ['PUT', '/debug/flags/v'], ['GET', '/configz']];
    for (const [method, path] of calls) await httpsCall({ port, path, method, cert: alice.certPem, key: alice.keyPem, ...(method === 'PUT' ? { body: '0' } : {}) });
    const seen = review.accessReviews.slice(before).map((s) => `${s.resourceAttributes?.verb ?? ''} ${s.resourceAttributes?.subresource ?? ''}`);
    assert.deepEqual(seen, ['get metrics', 'get spec', 'get log', 'create proxy', 'update proxy']);
    assert.equal(review.accessReviews.length - before, 5, '/configz is a GET on proxy: answered from the cache');
  });

  void it('answers 403 with upstream words for a denied review, caching denials for the unauthorized TTL and approvals for the authorized TTL', async () => {
    review.decide = (spec) => (spec.user === 'carol' && spec.resourceAttributes?.subresource === 'proxy' ? { allowed: false, reason: 'carol may not' } : { allowed: true });
    const carol = await pki.client('carol');
    const before = review.accessReviews.length;
    const denied = await httpsCall({ port, path: '/pods', cert: carol.certPem, key: carol.keyPem });
    assert.deepEqual([denied.status, denied.body], [403, 'Forbidden (user=carol, verb=get, resource=nodes, subresource=proxy)']);
    const curled = await curl(['-k', '--cert', carol.certFile, '--key', carol.keyFile, `https://127.0.0.1:${port}/pods`]);
    assert.deepEqual(curled, { status: 403, body: 'Forbidden (user=carol, verb=get, resource=nodes, subresource=proxy)' });
    assert.equal((await httpsCall({ port, path: '/stats/summary', cert: carol.certPem, key: carol.keyPem })).status, 200);
    assert.equal(review.accessReviews.length - before, 2, 'the second denial came from the cache');
    // The denial expires after 2 s (cacheUnauthorizedTTL); the approval does not (1 h).
    await waitFor('the denial to be reviewed again', async () => {
      await httpsCall({ port, path: '/pods', cert: carol.certPem, key: carol.keyPem });
      return review.accessReviews.length - before === 3;
    }, { timeoutMs: 10_000, intervalMs: 250 });
    assert.equal((await httpsCall({ port, path: '/stats/summary', cert: carol.certPem, key: carol.keyPem })).status, 200);
    assert.equal(review.accessReviews.length - before, 3);
    review.decide = () => ({ allowed: true });
  });
});

void describe('anonymous requests allowed', () => {
  let port: number;
  before(async () => {
    ({ port } = await startAgent(['--authentication-token-webhook', '--anonymous-auth=true', '--authorization-mode=Webhook']));
  });

  void it('treats a request without credentials as system:anonymous, and still refuses an invalid token', async () => {
    const r = await curl(['-k', `https://127.0.0.1:${port}/healthz`]);
    assert.deepEqual(r, { status: 200, body: 'ok' });
    assert.deepEqual(review.accessReviews.at(-1), {
      resourceAttributes: { verb: 'get', version: 'v1', resource: 'nodes', subresource: 'proxy', name: NODE },
      user: 'system:anonymous', groups: ['system:unauthenticated'],
    });
    assert.equal((await httpsCall({ port, path: '/healthz', token: 'not-a-token' })).status, 401);
    assert.equal((await httpsCall({ port, path: '/healthz', token: 'bob-token' })).status, 200);
  });

  void it('answers 401 for tokens and 500 for authorization when the API server is gone', async () => {
    review.tokens.set('new-token', { username: 'dave' });
    await review.close();
    const token = await httpsCall({ port, path: '/pods', token: 'new-token' });
    assert.equal(token.status, 401);
    const anonymous = await httpsCall({ port, path: '/spec/' });
    assert.deepEqual([anonymous.status, anonymous.body], [500, 'Authorization error (user=system:anonymous, verb=get, resource=nodes, subresource=spec)']);
  });
});
