import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodePod } from '../../api/pod/index.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { OrchError } from '../../api/errors.js';
import { LogRoot } from '../logging/index.js';
import { FakeLogger } from '../logging/testing.js';
import { createPodWorkers, type PodSyncer, type PodWorkersOptions, type SyncOutcome } from './index.js';

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');

function pod(uid: string, generation = 1): NodePod {
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
      calls.push(`sync:${kind}:${p.metadata.generation ?? 0}`);
      await gate;
      if (failures > 0) {
        failures--;
        throw new Error('runtime down');
      }
      return outcome();
    },
    async syncTerminatingPod(_p, grace, failure) {
      calls.push(`terminating:${grace ?? 'pod'}${failure === undefined ? '' : `:${failure.reason}`}`);
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

function workers(f: { syncer: PodSyncer }, extra: Partial<PodWorkersOptions> = {}) {
  const clock = new FakeClock();
  const w = createPodWorkers({ syncer: f.syncer, logger, clock, resyncIntervalMs: 60_000, ...extra });
  return { clock, w };
}

/** The delays of the timers waiting, soonest first. */
const waiting = (clock: FakeClock): number[] => clock.pending().map((t) => t.dueAt - clock.now());

void describe('pod workers', () => {
  void it('runs one piece of work at a time per pod, the latest update winning', async () => {
    const f = fakeSyncer();
    const { clock, w } = workers(f);
    f.hold();
    w.updatePod({ type: 'create', pod: pod('a', 1) });
    w.updatePod({ type: 'update', pod: pod('a', 2) });
    w.updatePod({ type: 'update', pod: pod('a', 3) });
    f.release();
    await settle();
    assert.deepEqual(f.calls, ['sync:create:1', 'sync:update:3']);
    assert.deepEqual(waiting(clock), [60_000], 'one resync timer, a resync interval after the last sync');
    await w.stop();
    assert.deepEqual(clock.pending(), [], 'stop() cancels it');
  });

  void it('goes through terminating and terminated on kill, and forgets the pod', async () => {
    const f = fakeSyncer();
    const finished: string[] = [];
    const { clock, w } = workers(f);
    w.onFinished((uid) => finished.push(uid));
    w.updatePod({ type: 'create', pod: pod('a') });
    w.updatePod({ type: 'kill', pod: pod('a'), gracePeriodSeconds: 5 });
    w.updatePod({ type: 'update', pod: pod('a', 9) });
    await settle();
    assert.deepEqual(finished, ['a']);
    assert.deepEqual(f.calls, ['sync:create:1', 'terminating:5', 'terminated']);
    assert.equal(w.stateOf('a'), undefined);
    assert.deepEqual(clock.pending(), [], 'a finished pod leaves no timer');
    await w.stop();
  });

  void it('terminates a pod that became terminal', async () => {
    const f = fakeSyncer(() => ({ terminal: true }));
    const { w } = workers(f);
    w.updatePod({ type: 'create', pod: pod('a') });
    await settle();
    assert.deepEqual(f.calls, ['sync:create:1', 'terminating:pod', 'terminated']);
    await w.stop();
  });

  void it('retries failed work after 1 s, then 2 s, doubling up to the maximum, and resyncs when the syncer asks', async () => {
    let requeue: number | undefined = 20_000;
    const f = fakeSyncer(() => (requeue === undefined ? {} : { requeueAfterMs: requeue }));
    f.failNext(2);
    const { clock, w } = workers(f);
    w.updatePod({ type: 'create', pod: pod('a') });
    await settle();
    assert.deepEqual(waiting(clock), [1000], 'the first retry 1 s after the failure');
    await clock.advance(999);
    assert.equal(f.calls.length, 1);
    await clock.advance(1);
    assert.equal(f.calls.length, 2);
    assert.deepEqual(waiting(clock), [2000], 'then 2 s');
    await clock.advance(2000);
    assert.deepEqual(f.calls, ['sync:create:1', 'sync:sync:1', 'sync:sync:1']);
    assert.deepEqual(waiting(clock), [20_000], 'success: the syncer asked for 20 s');
    requeue = undefined;
    await clock.advance(20_000);
    assert.equal(f.calls.length, 4);
    assert.deepEqual(waiting(clock), [60_000], 'then the resync interval');
    f.failNext(10);
    await clock.advance(60_000);
    const retries: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = waiting(clock)[0] ?? 0;
      retries.push(next);
      await clock.advance(next);
    }
    assert.deepEqual(retries, [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000], 'capped at maxBackoffMs');
    await w.stop();
  });

  void it('keeps pods independent', async () => {
    const f = fakeSyncer();
    const { w } = workers(f);
    w.updatePod({ type: 'create', pod: pod('a') });
    w.updatePod({ type: 'create', pod: pod('b') });
    await settle();
    assert.equal(f.calls.length, 2);
    assert.deepEqual(w.knownPods().sort(), ['a', 'b']);
    await w.stop();
  });

  void it('asks a droppable sync whether it is still needed just before it would run, and never drops what it replaced', async () => {
    const f = fakeSyncer();
    const { w } = workers(f);
    f.hold();
    w.updatePod({ type: 'create', pod: pod('a') });
    let asked = 0;
    w.updatePod({ type: 'sync', pod: pod('a'), stillNeeded: () => { asked++; return false; } });
    assert.equal(asked, 0, 'not asked while the sync runs');
    f.release();
    await settle();
    assert.equal(asked, 1);
    assert.deepEqual(f.calls, ['sync:create:1'], 'dropped');
    f.hold();
    w.updatePod({ type: 'update', pod: pod('a', 2) });
    w.updatePod({ type: 'update', pod: pod('a', 3) });
    w.updatePod({ type: 'sync', pod: pod('a'), stillNeeded: () => { asked++; return false; } });
    f.release();
    await settle();
    assert.deepEqual(f.calls, ['sync:create:1', 'sync:update:2', 'sync:sync:3'], 'the sync that replaced an update runs (with the newest pod)');
    assert.equal(asked, 1);
    w.updatePod({ type: 'sync', pod: pod('a'), stillNeeded: () => { asked++; return true; } });
    await settle();
    assert.equal(f.calls.length, 4);
    assert.equal(asked, 2);
    await w.stop();
  });
  void it('a kill with a failure passes it to the terminating work and calls onKilled once the containers are stopped', async () => {
    const f = fakeSyncer();
    const { w } = workers(f);
    w.updatePod({ type: 'create', pod: pod('a') });
    await settle();
    const killed: string[] = [];
    f.hold();
    w.updatePod({ type: 'kill', pod: pod('a'), gracePeriodSeconds: 5, failure: { reason: 'Terminated', message: 'm' }, onKilled: () => { killed.push('first'); } });
    w.updatePod({ type: 'kill', pod: pod('a'), onKilled: () => { killed.push('second'); } });
    await settle();
    assert.equal(killed.length, 0);
    f.release();
    await settle();
    assert.deepEqual(f.calls, ['sync:create:1', 'terminating:5:Terminated', 'terminated']);
    assert.deepEqual(killed, ['first', 'second']);
    w.updatePod({ type: 'kill', pod: pod('b'), onKilled: () => { killed.push('unknown'); } });
    await settle();
    assert.deepEqual(killed.slice(2), ['unknown'], 'a pod without a worker is killed (nothing runs) and reported');
  });
});

void describe('pod workers while the runtime is unreachable', () => {
  void it('log each pod\'s failed retries at v4 only', async () => {
    const quiet = new FakeLogger();
    let down = true;
    const syncer: PodSyncer = {
      syncPod: () => (down ? Promise.reject(new OrchError('CRI_UNAVAILABLE', 'unavailable', 'CRI RunPodSandbox: connect ENOENT')) : Promise.resolve({})),
      syncTerminatingPod: () => Promise.resolve(),
      syncTerminatedPod: () => Promise.resolve(),
    };
    const { clock, w } = workers({ syncer }, { logger: quiet });
    for (let i = 0; i < 70; i++) w.updatePod({ type: 'create', pod: pod(`p${i}`) });
    for (let i = 0; i < 10; i++) {
      await settle();
      await clock.advance(30_000);
    }
    down = false;
    await clock.advance(300_000);
    await settle();
    assert.deepEqual(quiet.lines.filter((l) => typeof l.level !== 'number').map((l) => l.msg), []);
    assert.ok(quiet.at(4).length >= 140, `${quiet.at(4).length} lines at v4`);
  });
});

void describe('pod workers: a kill during a sync', () => {
  void it('aborts the running sync at once', async () => {
    const signals: AbortSignal[] = [];
    let open = (): void => undefined;
    const syncer: PodSyncer = {
      syncPod: async (_p, _kind, signal) => {
        if (signal !== undefined) signals.push(signal);
        await new Promise<void>((r) => { open = r; });
        return {};
      },
      syncTerminatingPod: () => Promise.resolve(),
      syncTerminatedPod: () => Promise.resolve(),
    };
    const { w } = workers({ syncer });
    w.updatePod({ type: 'create', pod: pod('a') });
    await settle();
    const [signal] = signals;
    assert.ok(signal !== undefined && signals.length === 1);
    assert.equal(signal.aborted, false);
    w.updatePod({ type: 'kill', pod: pod('a') });
    assert.equal(signal.aborted, true);
    open();
    await settle();
    assert.equal(w.stateOf('a'), undefined);
  });
});
