import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import type { PodUpdate } from './index.js';
import { EXCEEDED_GRACE_PERIOD_MESSAGE, killPodNow, killWaitMs } from './kill-now.js';

const pod = (grace?: number): NodePod => ({ metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { containers: [], ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }) } });

void describe('killPodNow', () => {
  void it('waits the grace period and half again, at least 10 s', () => {
    assert.equal(killWaitMs(pod(), undefined), 45_000);
    assert.equal(killWaitMs(pod(2), undefined), 10_000);
    assert.equal(killWaitMs(pod(60), 20), 30_000);
  });

  void it('resolves when the worker says the pod is killed, with no event', async () => {
    const clock = new FakeClock();
    const updates: PodUpdate[] = [];
    const events: string[] = [];
    const done = killPodNow({ workers: { updatePod: (u) => { updates.push(u); } }, clock, onExceeded: (_p, m) => { events.push(m); } }, pod(30), 20);
    assert.equal(updates[0]?.type, 'kill');
    assert.equal(updates[0].gracePeriodSeconds, 20);
    updates[0].onKilled?.();
    assert.equal(await done, true);
    await clock.advance(60_000);
    assert.deepEqual(events, []);
  });

  void it('gives up with ExceededGracePeriod when the kill outlasts the wait', async () => {
    const clock = new FakeClock();
    const updates: PodUpdate[] = [];
    const events: string[] = [];
    const done = killPodNow({ workers: { updatePod: (u) => { updates.push(u); } }, clock, onExceeded: (_p, m) => { events.push(m); } }, pod(2), undefined);
    await clock.advance(9_999);
    assert.deepEqual(events, []);
    await clock.advance(1);
    assert.equal(await done, false);
    assert.deepEqual(events, [EXCEEDED_GRACE_PERIOD_MESSAGE]);
    updates[0]?.onKilled?.(); // late: nothing more
    assert.equal(events.length, 1);
  });
});
