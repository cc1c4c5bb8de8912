import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { LogRoot } from '../logging/index.js';
import { createPodWorkers, type PodSyncer, type SyncOutcome } from './index.js';

const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');

function pod(uid: string, generation = 1): Pod {
  return { metadata: { uid, name: uid, namespace: 'default', generation } };
}

/** A syncer that records calls and can be held to observe coalescing. */
function fakeSyncer(outcome: () => SyncOutcome = () => ({})) {
  const calls: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  let open = (): void => undefined;
  let failures = 0;
  const syncer: PodSyncer = {
    async syncPod(p, kind) {
      calls.push(`sync:${kind}:${p.metadata?.generation ?? 0}`);
      await gate;
      if (failures > 0) {
        failures--;
        throw new Error('runtime down');
      }
      return outcome();
    },
    async syncTerminatingPod(_p, grace) {
      calls.push(`terminating:${grace ?? 'pod'}`);
      await gate;
    },
    async syncTerminatedPod() {
      calls.push('terminated');
      await gate;
    },
  };
  return {
    syncer, calls,
    hold() { gate = new Promise((r) => { open = r; }); },
    release() { open(); gate = Promise.resolve(); },
    failNext(n: number) { failures = n; },
  };
}

void describe('pod workers', () => {
  void it('runs one piece of work at a time per pod, the latest update winning', async () => {
    const f = fakeSyncer();
    const w = createPodWorkers({ syncer: f.syncer, logger, resyncIntervalMs: 60_000 });
    f.hold();
    w.updatePod({ type: 'create', pod: pod('a', 1) });
    w.updatePod({ type: 'update', pod: pod('a', 2) });
    w.updatePod({ type: 'update', pod: pod('a', 3) });
    f.release();
    await waitFor('two syncs', () => f.calls.length === 2);
    assert.deepEqual(f.calls, ['sync:create:1', 'sync:update:3']);
    await w.stop();
  });

  void it('goes through terminating and terminated on kill, and forgets the pod', async () => {
    const f = fakeSyncer();
    const finished: string[] = [];
    const w = createPodWorkers({ syncer: f.syncer, logger, resyncIntervalMs: 60_000 });
    w.onFinished((uid) => finished.push(uid));
    w.updatePod({ type: 'create', pod: pod('a') });
    w.updatePod({ type: 'kill', pod: pod('a'), gracePeriodSeconds: 5 });
    w.updatePod({ type: 'update', pod: pod('a', 9) });
    await waitFor('finished', () => finished.length === 1);
    assert.deepEqual(f.calls, ['sync:create:1', 'terminating:5', 'terminated']);
    assert.equal(w.stateOf('a'), undefined);
    await w.stop();
  });

  void it('terminates a pod that became terminal', async () => {
    const f = fakeSyncer(() => ({ terminal: true }));
    const w = createPodWorkers({ syncer: f.syncer, logger, resyncIntervalMs: 60_000 });
    w.updatePod({ type: 'create', pod: pod('a') });
    await waitFor('terminated', () => f.calls.includes('terminated'));
    assert.deepEqual(f.calls, ['sync:create:1', 'terminating:pod', 'terminated']);
    await w.stop();
  });

  void it('retries failed work with a back-off and resyncs on request', async () => {
    const f = fakeSyncer(() => ({ requeueAfterMs: 20 }));
    f.failNext(2);
    const w = createPodWorkers({ syncer: f.syncer, logger, resyncIntervalMs: 60_000, backoffMs: 10 });
    w.updatePod({ type: 'create', pod: pod('a') });
    await waitFor('four syncs', () => f.calls.length >= 4);
    assert.deepEqual(f.calls.slice(0, 4), ['sync:create:1', 'sync:sync:1', 'sync:sync:1', 'sync:sync:1']);
    await w.stop();
  });

  void it('keeps pods independent', async () => {
    const f = fakeSyncer();
    const w = createPodWorkers({ syncer: f.syncer, logger, resyncIntervalMs: 60_000 });
    w.updatePod({ type: 'create', pod: pod('a') });
    w.updatePod({ type: 'create', pod: pod('b') });
    await waitFor('both', () => f.calls.length === 2);
    assert.deepEqual(w.knownPods().sort(), ['a', 'b']);
    await w.stop();
  });

  void it('asks a droppable sync whether it is still needed just before it would run, and never drops what it replaced', async () => {
    const f = fakeSyncer();
    const w = createPodWorkers({ syncer: f.syncer, logger, resyncIntervalMs: 60_000 });
    f.hold();
    w.updatePod({ type: 'create', pod: pod('a') });
    let asked = 0;
    w.updatePod({ type: 'sync', pod: pod('a'), stillNeeded: () => { asked++; return false; } });
    assert.equal(asked, 0, 'not asked while the sync runs');
    f.release();
    await waitFor('asked', () => asked === 1);
    assert.deepEqual(f.calls, ['sync:create:1'], 'dropped');
    f.hold();
    w.updatePod({ type: 'update', pod: pod('a', 2) });
    w.updatePod({ type: 'update', pod: pod('a', 3) });
    w.updatePod({ type: 'sync', pod: pod('a'), stillNeeded: () => { asked++; return false; } });
    f.release();
    await waitFor('the update', () => f.calls.length === 3);
    assert.deepEqual(f.calls, ['sync:create:1', 'sync:update:2', 'sync:sync:3'], 'the sync that replaced an update runs (with the newest pod)');
    assert.equal(asked, 1);
    w.updatePod({ type: 'sync', pod: pod('a'), stillNeeded: () => { asked++; return true; } });
    await waitFor('the needed sync', () => f.calls.length === 4);
    assert.equal(asked, 2);
    await w.stop();
  });
});
