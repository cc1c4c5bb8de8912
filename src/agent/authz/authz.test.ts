import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { SubjectAccessReviewSpec } from '../orchclient/index.js';
import { alwaysAllow, createWebhookAuthorizer, forbiddenMessage, nodeRequestAttributes, reviewSpec, subresourceOf, verbOf } from './index.js';

const bob = { name: 'bob', uid: 'u1', groups: ['devs', 'system:authenticated'], extra: {} };

void describe('request attributes', () => {
  void it('map methods to verbs and paths to subresources of the node', () => {
    assert.deepEqual(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map(verbOf), ['get', 'get', 'create', 'update', 'patch', 'delete', '']);
    const cases: [string, string][] = [
      ['/stats/summary', 'stats'], ['/stats', 'stats'], ['/statsx', 'proxy'], ['/metrics', 'metrics'], ['/metrics/cadvisor', 'metrics'],
      ['/logs/', 'log'], ['/logs/syslog', 'log'], ['/spec/', 'spec'], ['/checkpoint/a/b/c', 'checkpoint'],
      ['/pods', 'proxy'], ['/exec/a/b/c', 'proxy'], ['/containerLogs/a/b/c', 'proxy'], ['/healthz', 'proxy'], ['/configz', 'proxy'],
    ];
    for (const [path, sub] of cases) assert.equal(subresourceOf(path), sub, path);
    const a = nodeRequestAttributes(bob, 'POST', '/exec/ns/p/c', 'node1');
    assert.deepEqual({ ...a, user: a.user.name }, {
      user: 'bob', verb: 'create', namespace: '', apiGroup: '', apiVersion: 'v1', resource: 'nodes', subresource: 'proxy', name: 'node1', resourceRequest: true, path: '/exec/ns/p/c',
    });
    assert.equal(forbiddenMessage(a), 'Forbidden (user=bob, verb=create, resource=nodes, subresource=proxy)');
    assert.deepEqual(reviewSpec(a), {
      resourceAttributes: { verb: 'create', version: 'v1', resource: 'nodes', subresource: 'proxy', name: 'node1' },
      user: 'bob', groups: ['devs', 'system:authenticated'], uid: 'u1',
    });
  });
});

void describe('webhook authorization', () => {
  void it('caches allowed answers for cacheAuthorizedTTL and denied ones for cacheUnauthorizedTTL, never failures', async () => {
    const clock = new FakeClock(0);
    const asked: SubjectAccessReviewSpec[] = [];
    let fail = false;
    const authz = createWebhookAuthorizer({
      authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, clock,
      review: (spec) => {
        asked.push(spec);
        if (fail) return Promise.reject(new Error('down'));
        return Promise.resolve(spec.resourceAttributes?.subresource === 'stats' ? { allowed: true } : { allowed: false, reason: 'not you' });
      },
    });
    const stats = nodeRequestAttributes(bob, 'GET', '/stats/summary', 'n');
    const pods = nodeRequestAttributes(bob, 'GET', '/pods', 'n');
    assert.deepEqual(await authz.authorize(stats), { allowed: true, reason: '' });
    assert.deepEqual(await authz.authorize(pods), { allowed: false, reason: 'not you' });
    clock.set(29_000);
    await Promise.all([authz.authorize(stats), authz.authorize(pods)]);
    assert.equal(asked.length, 2);
    clock.set(31_000);
    await authz.authorize(stats);
    await authz.authorize(pods);
    assert.equal(asked.length, 3, 'the denied answer expired, the allowed one did not');
    clock.set(301_000);
    fail = true;
    await assert.rejects(authz.authorize(stats), /down/);
    fail = false;
    assert.equal((await authz.authorize(stats)).allowed, true);
    assert.equal(authz.reviews(), 5);
    assert.equal((await alwaysAllow().authorize(pods)).allowed, true);
  });
});
