import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { LogRoot } from '../logging/index.js';
import { OrchApiError } from '../orchclient/index.js';
import type { RestClient } from '../orchclient/rest-types.js';
import { createStatusManager } from '../status/index.js';
import { createMirrorPods, mirrorPodFor } from './mirror.js';
import { createStatusWriter, statusPatch } from './status-writer.js';

const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');

interface Call { readonly verb: string; readonly path: string; readonly body?: unknown }

function fakeRest(fail: (c: Call) => number | undefined = () => undefined): { rest: RestClient; calls: Call[] } {
  const calls: Call[] = [];
  const answer = <T>(c: Call): Promise<T> => {
    calls.push(c);
    const code = fail(c);
    if (code !== undefined) return Promise.reject(new OrchApiError(code, { code, reason: code === 409 ? 'AlreadyExists' : 'x' }, `failed ${code}`, c.path));
    return Promise.resolve({} as T);
  };
  const rest: RestClient = {
    get: (path) => answer({ verb: 'get', path }),
    list: (path) => answer({ verb: 'list', path }),
    create: (path, body) => answer({ verb: 'create', path, body }),
    update: (path, body) => answer({ verb: 'update', path, body }),
    patch: (path, _t, body) => answer({ verb: 'patch', path, body }),
    delete: (path, body) => answer({ verb: 'delete', path, body }),
    watch: () => ({ done: Promise.resolve({ reason: 'stopped' as const }), stop: () => undefined }),
    close: () => undefined,
  };
  return { rest, calls };
}

const apiPod = (uid: string, extra: Partial<NonNullable<Pod['metadata']>> = {}, status?: Pod['status']): Pod => ({
  metadata: { name: `p-${uid}`, namespace: 'ns', uid, annotations: { 'orch.io/config.source': 'api' }, ...extra },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
  ...(status === undefined ? {} : { status }),
});
const staticPod: Pod = {
  metadata: { name: 's-n1', namespace: 'default', uid: 'static-uid', annotations: { 'orch.io/config.source': 'file', 'orch.io/config.hash': 'h1', 'orch.io/config.seen': 't' } },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
};

void describe('status writer', () => {
  void it('writes changed statuses as merge patches that remove dropped fields, to the mirror for static pods', async () => {
    const { rest, calls } = fakeRest();
    const status = createStatusManager();
    const pods = new Map([['a', apiPod('a', {}, { phase: 'Pending', reason: 'old' })], ['static-uid', staticPod]]);
    const mirror = { ...mirrorPodFor(staticPod, 'n1', 'node-uid'), metadata: { ...mirrorPodFor(staticPod, 'n1', 'node-uid').metadata, uid: 'mirror-uid' } };
    const w = createStatusWriter({
      rest, status, logger, podOf: (uid) => pods.get(uid),
      apiObjectOf: (p) => (p.metadata?.uid === 'static-uid' ? mirror : pods.get(p.metadata?.uid ?? '')),
    });
    w.start();
    status.setPodStatus('a', { phase: 'Running' });
    status.setPodStatus('static-uid', { phase: 'Running' });
    await w.idle();
    await w.stop();
    assert.deepEqual(calls.map((c) => `${c.verb} ${c.path}`).sort(), ['patch /api/v1/namespaces/default/pods/s-n1/status', 'patch /api/v1/namespaces/ns/pods/p-a/status']);
    const a = calls.find((c) => c.path.includes('p-a'));
    assert.deepEqual(a?.body, { metadata: { uid: 'a' }, status: { phase: 'Running', reason: null } });
    assert.deepEqual(calls.find((c) => c.path.includes('s-n1'))?.body, { metadata: { uid: 'mirror-uid' }, status: { phase: 'Running' } });
    assert.deepEqual(statusPatch(undefined, { phase: 'Failed' }), { phase: 'Failed' });
  });

  void it('never moves a terminal API pod back to running, retries failures, and deletes finished deleting pods', async () => {
    let failing = true;
    const { rest, calls } = fakeRest((c) => (failing && c.verb === 'patch' && c.path.includes('p-b') ? 503 : undefined));
    const status = createStatusManager();
    const deleting = apiPod('b', { deletionTimestamp: '2026-01-01T00:00:00Z' });
    const pods = new Map([['t', apiPod('t', {}, { phase: 'Failed' })], ['b', deleting]]);
    const w = createStatusWriter({ rest, status, logger, podOf: (uid) => pods.get(uid), apiObjectOf: (p) => pods.get(p.metadata?.uid ?? ''), resyncMs: 60_000 });
    w.start();
    status.setPodStatus('t', { phase: 'Running' });
    status.setPodStatus('b', { phase: 'Succeeded' });
    w.podFinished(deleting);
    await w.idle();
    assert.equal(calls.filter((c) => c.path.includes('p-t')).length, 0);
    assert.equal(calls.filter((c) => c.verb === 'delete').length, 0, 'the final status is written before the delete');
    failing = false;
    w.requestWrite('b');
    await w.idle();
    const del = calls.find((c) => c.verb === 'delete');
    assert.deepEqual(del, { verb: 'delete', path: '/api/v1/namespaces/ns/pods/p-b', body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: 'b' } } });
    await w.stop();
  });
});

void describe('mirror pods', () => {
  void it('creates missing mirrors once the node is known, replaces stale ones and deletes orphans', async () => {
    const { rest, calls } = fakeRest();
    const node: { uid?: string } = {};
    const created: string[] = [];
    const stale = { ...mirrorPodFor(staticPod, 'n1', 'u'), metadata: { name: 's-n1', namespace: 'default', uid: 'm1', annotations: { 'orch.io/config.mirror': 'old' } } };
    const orphan = { ...stale, metadata: { name: 'gone-n1', namespace: 'default', uid: 'm2', annotations: { 'orch.io/config.mirror': 'x' } } };
    let mirrors: Pod[] = [];
    const m = createMirrorPods({
      rest, nodeName: 'n1', logger, desiredPods: () => [staticPod, apiPod('a')], mirrors: () => mirrors, nodeUID: () => node.uid,
      onCreated: (uid) => created.push(uid),
    });
    await m.sync();
    assert.equal(calls.length, 0, 'no mirror before the node is registered');
    node.uid = 'node-uid';
    await m.sync();
    const body = calls[0]?.body as Pod;
    assert.equal(calls[0]?.path, '/api/v1/namespaces/default/pods');
    const meta = body.metadata ?? {};
    const annotations: Record<string, string | undefined> = meta.annotations ?? {};
    assert.equal(annotations['orch.io/config.mirror'], 'h1');
    assert.equal(annotations['orch.io/config.seen'], undefined);
    assert.deepEqual(meta.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true }]);
    assert.equal(body.spec?.nodeName, 'n1');
    assert.deepEqual(created, ['static-uid']);
    calls.length = 0;
    mirrors = [stale, orphan];
    await m.sync();
    assert.deepEqual(calls.map((c) => `${c.verb} ${c.path}`).sort(), ['delete /api/v1/namespaces/default/pods/gone-n1', 'delete /api/v1/namespaces/default/pods/s-n1']);
  });
});
