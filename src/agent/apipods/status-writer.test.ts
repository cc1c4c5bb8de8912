import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { LogRoot } from '../logging/index.js';
import { apiError, FakeRestClient } from '../orchclient/testing.js';
import { createStatusManager } from '../status/index.js';
import { createMirrorPods, mirrorPodFor } from './mirror.js';
import { createStatusWriter, statusPatch } from './status-writer.js';

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');

/** The API server with `pods` stored; a test adds failures with its responders. */
function fakeRest(...pods: Pod[]): FakeRestClient {
  const rest = new FakeRestClient();
  for (const p of pods) rest.put(`/api/v1/namespaces/${p.metadata?.namespace ?? ''}/pods/${p.metadata?.name ?? ''}`, p as Record<string, unknown>);
  return rest;
}

const apiPod = (uid: string, extra: Partial<NonNullable<Pod['metadata']>> = {}, status?: Pod['status']): NodePod => ({
  metadata: { name: `p-${uid}`, namespace: 'ns', uid, annotations: { 'orch.io/config.source': 'api' }, ...extra },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
  ...(status === undefined ? {} : { status }),
});
const staticPod: NodePod = {
  metadata: { name: 's-n1', namespace: 'default', uid: 'static-uid', annotations: { 'orch.io/config.source': 'file', 'orch.io/config.hash': 'h1', 'orch.io/config.seen': 't' } },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
};

void describe('status writer', () => {
  void it('writes changed statuses as merge patches that remove dropped fields, to the mirror for static pods', async () => {
    const status = createStatusManager();
    const pods = new Map([['a', apiPod('a', {}, { phase: 'Pending', reason: 'old' })], ['static-uid', staticPod]]);
    const body = mirrorPodFor(staticPod, 'n1', 'node-uid');
    const mirror: NodePod = { ...body, metadata: { ...body.metadata, uid: 'mirror-uid', name: 's-n1', namespace: 'default' } };
    const rest = fakeRest(pods.get('a')!, mirror);
    const calls = rest.calls;
    const w = createStatusWriter({
      rest, status, logger, clock: new FakeClock(), podOf: (uid) => pods.get(uid),
      apiObjectOf: (p) => (p.metadata.uid === 'static-uid' ? mirror : pods.get(p.metadata.uid)),
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
    const status = createStatusManager();
    const deleting = apiPod('b', { deletionTimestamp: '2026-01-01T00:00:00Z' });
    const pods = new Map([['t', apiPod('t', {}, { phase: 'Failed' })], ['b', deleting]]);
    const rest = fakeRest(...pods.values());
    rest.responders.push((c) => (failing && c.verb === 'patch' && c.path.includes('p-b') ? apiError(503) : undefined));
    const calls = rest.calls;
    const clock = new FakeClock();
    const w = createStatusWriter({ rest, status, logger, clock, podOf: (uid) => pods.get(uid), apiObjectOf: (p) => pods.get(p.metadata.uid), resyncMs: 60_000 });
    w.start();
    status.setPodStatus('t', { phase: 'Running' });
    status.setPodStatus('b', { phase: 'Succeeded' });
    w.podFinished(deleting);
    await w.idle();
    assert.equal(calls.filter((c) => c.path.includes('p-t')).length, 0);
    assert.equal(calls.filter((c) => c.verb === 'delete').length, 0, 'the final status is written before the delete');
    failing = false;
    const patches = (): number => calls.filter((c) => c.verb === 'patch' && c.path.includes('p-b')).length;
    const tried = patches();
    await clock.advance(59_999);
    await w.idle();
    assert.equal(patches(), tried, 'no retry before resyncMs');
    await clock.advance(1);
    await w.idle();
    assert.equal(patches(), tried + 1, 'the failed write is retried after resyncMs');
    const del = calls.find((c) => c.verb === 'delete');
    assert.deepEqual(del, { verb: 'delete', path: '/api/v1/namespaces/ns/pods/p-b', body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: 'b' } } });
    await w.stop();
  });
});

void describe('mirror pods', () => {
  void it('creates missing mirrors once the node is known, replaces stale ones and deletes orphans', async () => {
    const rest = fakeRest();
    const calls = rest.calls;
    const node: { uid?: string } = {};
    const created: string[] = [];
    const stale = { ...mirrorPodFor(staticPod, 'n1', 'u'), metadata: { name: 's-n1', namespace: 'default', uid: 'm1', annotations: { 'orch.io/config.mirror': 'old' } } };
    const orphan = { ...stale, metadata: { name: 'gone-n1', namespace: 'default', uid: 'm2', annotations: { 'orch.io/config.mirror': 'x' } } };
    let mirrors: NodePod[] = [];
    const m = createMirrorPods({
      rest, nodeName: 'n1', logger, clock: new FakeClock(), desiredPods: () => [staticPod, apiPod('a')], mirrors: () => mirrors, nodeUID: () => node.uid,
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
    for (const p of mirrors) rest.put(`/api/v1/namespaces/default/pods/${p.metadata.name}`, { ...p });
    await m.sync();
    assert.deepEqual(calls.map((c) => `${c.verb} ${c.path}`).sort(), ['delete /api/v1/namespaces/default/pods/gone-n1', 'delete /api/v1/namespaces/default/pods/s-n1']);
  });

  void it('checks the mirrors at start and every periodMs, until stopped', async () => {
    const clock = new FakeClock();
    let passes = 0;
    const m = createMirrorPods({
      rest: fakeRest(), nodeName: 'n1', logger, clock, periodMs: 5000,
      desiredPods: () => { passes++; return []; }, mirrors: () => [], nodeUID: () => undefined,
    });
    m.start();
    await settle();
    assert.equal(passes, 1);
    await clock.advance(4999);
    assert.equal(passes, 1);
    await clock.advance(1);
    assert.equal(passes, 2);
    await m.stop();
    assert.deepEqual(clock.pending(), []);
  });
});

void describe('status writer after an agent restart', () => {
  void it('writes nothing for a pod whose status the API server already holds', async () => {
    const held = { phase: 'Running', startTime: '2026-11-22T03:00:00Z', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-22T03:00:00Z' }] };
    const pods = new Map([['a', apiPod('a', {}, held)], ['b', apiPod('b', {}, { ...held, phase: 'Pending' })]]);
    const rest = fakeRest(...pods.values());
    const status = createStatusManager();
    const w = createStatusWriter({ rest, status, logger, clock: new FakeClock(), podOf: (uid) => pods.get(uid), apiObjectOf: (p) => pods.get(p.metadata.uid) });
    w.start();
    // Key order differs from what the API server returned: the same status all the same.
    status.setPodStatus('a', { conditions: held.conditions, startTime: held.startTime, phase: 'Running' });
    status.setPodStatus('b', { ...held });
    await w.idle();
    await w.stop();
    assert.deepEqual(rest.calls.map((c) => `${c.verb} ${c.path}`), ['patch /api/v1/namespaces/ns/pods/p-b/status']);
  });
});
