import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { createPodStatusCache, type ObservedObject } from './status-cache.js';
import type { RuntimeContainerStatus, RuntimeContainerState, RuntimePodStatus, RuntimeSandboxStatus } from './types.js';

const sandbox = (id: string): RuntimeSandboxStatus => ({ id, state: 'ready', createdAt: 1, attempt: 0, ips: [], hostNetwork: true });
const container = (id: string, state: RuntimeContainerState): RuntimeContainerStatus => ({
  id, name: 'c', state, createdAt: 1, startedAt: 2, finishedAt: 0, exitCode: 0, reason: '', message: '', image: 'busybox', imageRef: 'sha256:1', restartCount: 0, hash: 'h', init: false,
});
const obs = (id: string, state: ObservedObject['state']): ObservedObject => ({ id, state });
const status = (n: number): RuntimePodStatus => ({ uid: 'u', name: 'p', namespace: 'default', ips: [], sandboxes: [], containers: [], timestamp: n });

void describe('pod status cache', () => {
  void it('reuses a status only once a later relist vouched for it, until the pod is invalidated', async () => {
    const clock = new FakeClock(1000);
    const cache = createPodStatusCache({ clock });
    let reads = 0;
    const reader = (): Promise<RuntimePodStatus> => Promise.resolve(status(++reads));
    assert.equal((await cache.read('u', reader)).timestamp, 1);
    assert.equal((await cache.read('u', reader)).timestamp, 2, 'no relist since the read: read again');
    clock.set(1001);
    cache.relisted(1001);
    assert.equal((await cache.read('u', reader)).timestamp, 2, 'a relist began after the read: kept');
    cache.invalidate('u');
    assert.equal((await cache.read('u', reader)).timestamp, 3, 'invalidated: read again');
    clock.set(1002);
    cache.relisted(1002);
    assert.equal((await cache.read('u', reader)).timestamp, 3);
    clock.set(1002 + 5001);
    assert.equal((await cache.read('u', reader)).timestamp, 4, 'the PLEG stalled: read again');
  });

  void it('does not keep a read that an invalidation overtook', async () => {
    const clock = new FakeClock(1000);
    const cache = createPodStatusCache({ clock });
    let release: () => void = () => undefined;
    const slow = cache.read('u', () => new Promise((resolve) => { release = () => { resolve(status(1)); }; }));
    cache.invalidate('u');
    release();
    assert.equal((await slow).timestamp, 1);
    clock.set(1001);
    cache.relisted(1001);
    assert.equal((await cache.read('u', () => Promise.resolve(status(2)))).timestamp, 2);
  });

  void it('answers `absent` without a read only for a pod the last fresh relist did not see and nothing touched since', async () => {
    const clock = new FakeClock(1000);
    const cache = createPodStatusCache({ clock });
    let reads = 0;
    const reader = (): Promise<RuntimePodStatus> => Promise.resolve(status(++reads));
    const absent = (): RuntimePodStatus => status(-1);
    assert.equal((await cache.read('u', reader, absent)).timestamp, 1, 'no relist yet: read');
    cache.relisted(1000, new Set(['other']));
    assert.equal((await cache.read('new', reader, absent)).timestamp, -1, 'unseen and untouched: absent');
    assert.equal((await cache.read('new', reader)).timestamp, 2, 'no absent given: read');
    assert.equal((await cache.read('other', reader, absent)).timestamp, 3, 'seen by the relist: read');
    clock.set(1005);
    cache.invalidate('new');
    assert.equal((await cache.read('new', reader, absent)).timestamp, 4, 'touched after the relist began: read');
    cache.relisted(1004, new Set(['other']));
    assert.equal((await cache.read('new', reader, absent)).timestamp, 5, 'a relist that began before the touch vouches for nothing');
    cache.invalidate('new');
    clock.set(1010);
    cache.relisted(1010, new Set(['other']));
    assert.equal((await cache.read('gone', reader, absent)).timestamp, -1);
    assert.equal((await cache.read('new', reader, absent)).timestamp, -1, 'a later relist found nothing of it: absent again');
    clock.set(1010 + 5001);
    assert.equal((await cache.read('new', reader, absent)).timestamp, 6, 'the PLEG stalled: read');
    cache.relisted(6011);
    assert.equal((await cache.read('x', reader, absent)).timestamp, 7, 'a relist that did not report what it saw: read');
  });

  void it('asks no sync for a change the kept status shows exactly, every sandbox ready and every container running', async () => {
    const cache = createPodStatusCache({ clock: new FakeClock(1000) });
    const kept: RuntimePodStatus = { ...status(1), sandboxes: [sandbox('s1')], containers: [container('c1', 'running')] };
    const running = [obs('c1', 'CONTAINER_RUNNING'), obs('s1', 'SANDBOX_READY')];
    assert.notEqual(cache.observe('u', running, 1000), undefined, 'nothing kept: sync');
    await cache.read('u', () => Promise.resolve(kept));
    assert.equal(cache.observe('u', running, 1000), undefined, 'the agent\'s own start, read back');
    await cache.read('u', () => Promise.resolve(kept));
    assert.notEqual(cache.observe('u', [obs('c1', 'CONTAINER_EXITED'), obs('s1', 'SANDBOX_READY')], 1000), undefined, 'a state changed');
    await cache.read('u', () => Promise.resolve(kept));
    assert.notEqual(cache.observe('u', [...running, obs('c2', 'CONTAINER_CREATED')], 1000), undefined, 'a container more');
    await cache.read('u', () => Promise.resolve(kept));
    assert.notEqual(cache.observe('u', [obs('s1', 'SANDBOX_READY')], 1000), undefined, 'a container less');
    await cache.read('e', () => Promise.resolve({ ...kept, containers: [container('c1', 'exited')] }));
    assert.notEqual(cache.observe('e', [obs('c1', 'CONTAINER_EXITED'), obs('s1', 'SANDBOX_READY')], 1000), undefined, 'an exited container may want a restart');
  });

  void it('forgets the kept status of a changed pod', async () => {
    let reads = 0;
    const cache = createPodStatusCache({ clock: new FakeClock(1000) });
    const reader = (): Promise<RuntimePodStatus> => Promise.resolve(status(++reads));
    await cache.read('u', reader);
    cache.relisted(1000);
    cache.relisted(1001);
    assert.equal((await cache.read('u', reader)).timestamp, 1, 'vouched for');
    cache.observe('u', [obs('s1', 'SANDBOX_NOTREADY')], 1001);
    assert.equal((await cache.read('u', reader)).timestamp, 2, 'forgotten: read again');
  });

  void it('drops the sync of a change seen before a status read since shows everything ready and running', async () => {
    const clock = new FakeClock(1000);
    const cache = createPodStatusCache({ clock });
    const sandboxOnly = [obs('s1', 'SANDBOX_READY')];
    const stillNeeded = cache.observe('u', sandboxOnly, 1000);
    assert.ok(stillNeeded !== undefined);
    assert.equal(stillNeeded(), true, 'nothing read since');
    clock.set(1100);
    await cache.read('u', () => Promise.resolve({ ...status(1), sandboxes: [sandbox('s1')], containers: [container('c1', 'running')] }));
    assert.equal(stillNeeded(), false, 'the sandbox seen before its container started');
    const created = cache.observe('v', [obs('c1', 'CONTAINER_CREATED'), obs('s1', 'SANDBOX_READY')], 1000);
    await cache.read('v', () => Promise.resolve({ ...status(1), sandboxes: [sandbox('s1')], containers: [container('c1', 'running')] }));
    assert.equal(created?.(), false, 'a container seen created, read running since');
    const late = cache.observe('w', sandboxOnly, 1100);
    await cache.read('w', () => Promise.resolve({ ...status(1), sandboxes: [sandbox('s1')] }));
    assert.equal(late?.(), true, 'seen no earlier than the read');
    const unknown = cache.observe('x', [obs('c0', 'CONTAINER_EXITED'), obs('s1', 'SANDBOX_READY')], 1000);
    await cache.read('x', () => Promise.resolve({ ...status(1), sandboxes: [sandbox('s1')], containers: [container('c1', 'running')] }));
    assert.equal(unknown?.(), true, 'an object the status does not hold');
    const exited = cache.observe('y', sandboxOnly, 1000);
    await cache.read('y', () => Promise.resolve({ ...status(2), sandboxes: [sandbox('s1')], containers: [container('c1', 'exited')] }));
    assert.equal(exited?.(), true, 'a status with an exited container');
  });
});
