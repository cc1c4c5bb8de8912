import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { pod } from './fixtures.js';
import { createPodTerminator } from './terminator.js';

void describe('the pod terminator', () => {
  void it('kills through the pod worker with the grace period and the failure, and waits for the kill', async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    let state: string | undefined = 'syncing';
    const t = createPodTerminator({
      clock,
      workers: { updatePod: (u) => { calls.push(`${u.type} ${u.pod.metadata.name} ${u.gracePeriodSeconds} ${u.failure.reason}: ${u.failure.message}`); state = 'terminating'; }, stateOf: () => state },
    });
    let done = false;
    const p = t.terminate(pod('p'), { gracePeriodSeconds: 1, reason: 'Evicted', message: 'low' }).then(() => { done = true; });
    await clock.advance(500);
    assert.equal(done, false);
    state = 'terminated';
    await clock.advance(100);
    await p;
    assert.deepEqual(calls, ['kill p 1 Evicted: low']);
  });

  void it('gives up after the grace period and half again, at least 10 s', async () => {
    const clock = new FakeClock();
    const exceeded: string[] = [];
    const t = createPodTerminator({ clock, workers: { updatePod: () => undefined, stateOf: () => 'terminating' }, onExceeded: (p, m) => { exceeded.push(`${p.metadata.name}: ${m}`); } });
    const start = clock.now();
    const p = t.terminate(pod('p'), { gracePeriodSeconds: 20, reason: 'Evicted', message: '' });
    const failed = assert.rejects(p, (err: unknown) => err instanceof OrchError && err.code === 'EVICTION_KILL_TIMEOUT' && err.message === 'timeout waiting to kill pod ns/p (30s)');
    await clock.advance(30_100);
    await failed;
    assert.ok(clock.now() - start >= 30_000);
    assert.deepEqual(exceeded, ['p: Container runtime did not kill the pod within specified grace period.'], 'upstream\'s ExceededGracePeriod');
  });
});
