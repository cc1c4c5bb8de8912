import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPodStatusCache } from './status-cache.js';
import type { RuntimeContainerStatus, RuntimeContainerState, RuntimePodStatus, RuntimeSandboxStatus } from './types.js';

const sandbox = (id: string): RuntimeSandboxStatus => ({ id, state: 'ready', createdAt: 1, attempt: 0, ips: [], hostNetwork: true });
const container = (id: string, state: RuntimeContainerState): RuntimeContainerStatus => ({
  id, name: 'c', state, createdAt: 1, startedAt: 2, finishedAt: 0, exitCode: 0, reason: '', message: '', image: 'busybox', imageRef: 'sha256:1', restartCount: 0, hash: 'h', init: false,
});
const status = (n: number): RuntimePodStatus => ({ uid: 'u', name: 'p', namespace: 'default', ips: [], sandboxes: [], containers: [], timestamp: n });

void describe('pod status cache', () => {
  void it('reuses a status only once a later relist vouched for it, until the pod is invalidated', async () => {
    let t = 1000;
    const cache = createPodStatusCache({ now: () => t });
    let reads = 0;
    const reader = (): Promise<RuntimePodStatus> => Promise.resolve(status(++reads));
    assert.equal((await cache.read('u', reader)).timestamp, 1);
    assert.equal((await cache.read('u', reader)).timestamp, 2, 'no relist since the read: read again');
    t = 1001;
    cache.relisted(1001);
    assert.equal((await cache.read('u', reader)).timestamp, 2, 'a relist began after the read: kept');
    cache.invalidate('u');
    assert.equal((await cache.read('u', reader)).timestamp, 3, 'invalidated: read again');
    t = 1002;
    cache.relisted(1002);
    assert.equal((await cache.read('u', reader)).timestamp, 3);
    t = 1002 + 5001;
    assert.equal((await cache.read('u', reader)).timestamp, 4, 'the PLEG stalled: read again');
  });

  void it('does not keep a read that an invalidation overtook', async () => {
    let t = 1000;
    const cache = createPodStatusCache({ now: () => t });
    let release: () => void = () => undefined;
    const slow = cache.read('u', () => new Promise((resolve) => { release = () => { resolve(status(1)); }; }));
    cache.invalidate('u');
    release();
    assert.equal((await slow).timestamp, 1);
    t = 1001;
    cache.relisted(1001);
    assert.equal((await cache.read('u', () => Promise.resolve(status(2)))).timestamp, 2);
  });

  void it('answers `absent` without a read only for a pod the last fresh relist did not see and nothing touched since', async () => {
    let t = 1000;
    const cache = createPodStatusCache({ now: () => t });
    let reads = 0;
    const reader = (): Promise<RuntimePodStatus> => Promise.resolve(status(++reads));
    const absent = (): RuntimePodStatus => status(-1);
    assert.equal((await cache.read('u', reader, absent)).timestamp, 1, 'no relist yet: read');
    cache.relisted(1000, new Set(['other']));
    assert.equal((await cache.read('new', reader, absent)).timestamp, -1, 'unseen and untouched: absent');
    assert.equal((await cache.read('new', reader)).timestamp, 2, 'no absent given: read');
    assert.equal((await cache.read('other', reader, absent)).timestamp, 3, 'seen by the relist: read');
    t = 1005;
    cache.invalidate('new');
    assert.equal((await cache.read('new', reader, absent)).timestamp, 4, 'touched after the relist began: read');
    cache.relisted(1004, new Set(['other']));
    assert.equal((await cache.read('new', reader, absent)).timestamp, 5, 'a relist that began before the touch vouches for nothing');
    cache.invalidate('new');
    t = 1010;
    cache.relisted(1010, new Set(['other']));
    assert.equal((await cache.read('gone', reader, absent)).timestamp, -1);
    assert.equal((await cache.read('new', reader, absent)).timestamp, -1, 'a later relist found nothing of it: absent again');
    t = 1010 + 5001;
    assert.equal((await cache.read('new', reader, absent)).timestamp, 6, 'the PLEG stalled: read');
    cache.relisted(6011);
    assert.equal((await cache.read('x', reader, absent)).timestamp, 7, 'a relist that did not report what it saw: read');
  });

  void it('holds a PLEG observation exactly when the kept status shows the same sandboxes and containers in the same states, all ready or running', async () => {
    const t = 1000;
    const cache = createPodStatusCache({ now: () => t });
    const kept: RuntimePodStatus = {
      ...status(1),
      sandboxes: [sandbox('s1')],
      containers: [container('c1', 'running')],
    };
    assert.equal(cache.holds('u', ['c1 CONTAINER_RUNNING', 's1 SANDBOX_READY']), false, 'nothing kept');
    await cache.read('u', () => Promise.resolve(kept));
    assert.equal(cache.holds('u', ['c1 CONTAINER_RUNNING', 's1 SANDBOX_READY']), true);
    assert.equal(cache.holds('u', ['c1 CONTAINER_EXITED', 's1 SANDBOX_READY']), false, 'a state changed');
    const exited: RuntimePodStatus = { ...kept, containers: [container('c1', 'exited')] };
    await cache.read('e', () => Promise.resolve(exited));
    assert.equal(cache.holds('e', ['c1 CONTAINER_EXITED', 's1 SANDBOX_READY']), false, 'an exited container may want a restart: never held');
    assert.equal(cache.holds('u', ['c1 CONTAINER_RUNNING', 'c2 CONTAINER_CREATED', 's1 SANDBOX_READY']), false, 'a container more');
    assert.equal(cache.holds('u', ['s1 SANDBOX_READY']), false, 'a container less');
    cache.invalidate('u');
    assert.equal(cache.holds('u', ['c1 CONTAINER_RUNNING', 's1 SANDBOX_READY']), false, 'invalidated');
  });

  void it('explains a PLEG observation from before the kept status was read, when that status is all ready and running and holds every object observed', async () => {
    let t = 1000;
    const cache = createPodStatusCache({ now: () => t });
    const sandboxOnly = ['s1 SANDBOX_READY'];
    cache.invalidate('u'); // as the agent does when the PLEG reports the pod
    assert.equal(cache.explains('u', sandboxOnly, 1000), false, 'nothing kept');
    t = 1100;
    await cache.read('u', () => Promise.resolve({ ...status(1), sandboxes: [sandbox('s1')], containers: [container('c1', 'running')] }));
    assert.equal(cache.explains('u', sandboxOnly, 1000), true, 'the sandbox seen before its container started');
    assert.equal(cache.explains('u', ['c1 CONTAINER_CREATED', 's1 SANDBOX_READY'], 1000), true, 'a container seen created, read running since');
    assert.equal(cache.explains('u', sandboxOnly, 1100), false, 'seen no earlier than the read');
    assert.equal(cache.explains('u', ['c0 CONTAINER_EXITED', 's1 SANDBOX_READY'], 1000), false, 'an object the status does not hold');
    assert.equal(cache.explains('u', ['c1 CONTAINER_EXITED', 's1 SANDBOX_READY'], 1000), false, 'an exit seen');
    await cache.read('e', () => Promise.resolve({ ...status(2), sandboxes: [sandbox('s1')], containers: [container('c1', 'exited')] }));
    assert.equal(cache.explains('e', sandboxOnly, 1000), false, 'a status with an exited container');
  });
});
