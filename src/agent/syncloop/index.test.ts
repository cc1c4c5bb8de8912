import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import type { RunningPod } from '../kuberuntime/index.js';
import { LogRoot } from '../logging/index.js';
import type { PodUpdate, PodWorkerState, PodWorkers } from '../podworkers/index.js';
import { createStatusManager } from '../status/index.js';
import { createPodManager, createSyncLoop, podCapacity, type AdmitHandler, type PodConfigUpdate } from './index.js';

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');
const pod = (uid: string): NodePod => ({ metadata: { uid, name: uid, namespace: 'default' } });

function harness(options: { log?: typeof logger; capacity?: number; running?: RunningPod[]; dirs?: string[]; cgroups?: string[]; admit?: AdmitHandler[]; periodMs?: number } = {}) {
  const listings = { count: 0 };
  const rejections: string[] = [];
  const deletable: string[] = [];
  const updates: string[] = [];
  const grace: (number | undefined)[] = [];
  const states = new Map<string, PodWorkerState>();
  let finishWorker: (uid: string) => void = () => undefined;
  const workers: PodWorkers = {
    updatePod(u: PodUpdate) {
      updates.push(`${u.type}:${u.pod.metadata.uid}`);
      if (u.type === 'create') states.set(u.pod.metadata.uid, 'syncing');
      if (u.type === 'kill') grace.push(u.gracePeriodSeconds);
    },
    stateOf: (uid) => states.get(uid),
    knownPods: () => [...states.keys()],
    onFinished: (l) => { finishWorker = l; return () => undefined; },
    stop: () => Promise.resolve(),
  };
  const pods = createPodManager();
  let listener: (u: PodConfigUpdate) => void = () => undefined;
  let ready = false;
  const removed: string[] = [];
  const status = createStatusManager();
  const clock = new FakeClock();
  const loop = createSyncLoop({
    podConfig: { subscribe: (l) => { listener = l; return () => undefined; }, sourcesReady: () => ready },
    workers,
    pods,
    runtime: {
      listPods: () => { listings.count++; return Promise.resolve(options.running ?? []); },
      killPod: (r) => { removed.push(`kill:${r.uid}`); return Promise.resolve(); },
      removePod: (uid) => { removed.push(`remove:${uid}`); return Promise.resolve(); },
    },
    volumes: { listPodDirs: () => Promise.resolve(options.dirs ?? []), cleanupPodVolumes: (uid) => { removed.push(`volumes:${uid}`); return Promise.resolve(); } },
    cgroups: { listPodUIDs: () => Promise.resolve(options.cgroups ?? []), remove: (uid) => { removed.push(`cgroup:${uid}`); return Promise.resolve(); } },
    status, podCapacity: options.capacity ?? 110, logger: options.log ?? logger, clock, housekeepingPeriodMs: options.periodMs ?? 60_000,
    ...(options.admit === undefined ? {} : { admit: options.admit }),
    onReject: (p, reason) => { rejections.push(`${p.metadata.uid}:${reason}`); },
  });
  loop.onPodFinished((p) => { deletable.push(p.metadata.uid); });
  loop.start();
  const finish = (uid: string): void => {
    states.delete(uid);
    finishWorker(uid);
  };
  return { clock, listings, grace, loop, pods, updates, states, removed, status, rejections, deletable, finish, send: (u: PodConfigUpdate) => { listener(u); }, setReady: () => { ready = true; } };
}

const running = (uid: string): RunningPod => ({ uid, name: uid, namespace: 'default', sandboxIds: ['s'], containers: [] });

void describe('sync loop', () => {
  void it('turns config updates and PLEG events into pod work', async () => {
    const h = harness();
    h.send({ op: 'ADD', pods: [pod('a')] });
    h.send({ op: 'UPDATE', pods: [pod('a')] });
    h.loop.podChanged('a');
    h.loop.podChanged('unknown');
    h.send({ op: 'RECONCILE', pods: [pod('a')] });
    h.send({ op: 'REMOVE', pods: [pod('a')] });
    assert.deepEqual(h.updates, ['create:a', 'update:a', 'sync:a', 'kill:a']);
    assert.equal(h.pods.isDesired('a'), false);
    await h.loop.stop();
  });

  void it('logs each ADD, UPDATE and REMOVE at V(2) only, naming the pods, as upstream does', async () => {
    for (const verbosity of [0, 2]) {
      const written: string[] = [];
      const log = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: (_stream, line) => { written.push(line); } } }).logger('syncloop');
      const h = harness({ log });
      h.send({ op: 'ADD', pods: [pod('a'), pod('b')] });
      h.send({ op: 'UPDATE', pods: [pod('a')] });
      h.send({ op: 'RECONCILE', pods: [pod('a')] });
      h.send({ op: 'REMOVE', pods: [pod('b')] });
      const lines = written.join('').split('\n').filter((l) => l.includes('SyncLoop'));
      if (verbosity === 0) assert.deepEqual(lines, []);
      else {
        assert.equal(lines.length, 3, lines.join('\n'));
        assert.match(lines[0] ?? '', /SyncLoop ADD.*default\/a.*default\/b/);
        assert.match(lines[1] ?? '', /SyncLoop UPDATE.*default\/a/);
        assert.match(lines[2] ?? '', /SyncLoop REMOVE.*default\/b/);
      }
      await h.loop.stop();
    }
  });

  void it('rejects pods beyond the capacity with OutOfpods', async () => {
    const h = harness({ capacity: 1 });
    h.send({ op: 'ADD', pods: [pod('a'), pod('b')] });
    assert.deepEqual(h.updates, ['create:a']);
    const s = h.status.getPodStatus('b');
    assert.ok(s);
    assert.deepEqual([s.phase, s.reason, s.message], ['Failed', 'OutOfpods', "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"]);
    assert.equal(s.startTime, '2024-01-02T03:04:05Z', 'refused now, by the clock');
    h.send({ op: 'REMOVE', pods: [pod('b')] });
    assert.equal(h.status.getPodStatus('b'), undefined);
    assert.equal(podCapacity(110, 10, 2), 20);
    assert.equal(podCapacity(110, 0, 2), 110);
    await h.loop.stop();
  });

  void it('runs the admit handlers in order with the admitted pods, and reports refusals', async () => {
    const seen: string[][] = [];
    const h = harness({
      admit: [
        (p, admitted) => { seen.push(admitted.map((a) => a.metadata.uid)); return p.metadata.uid === 'b' ? { admit: false, reason: 'NodeAffinity', message: 'no match' } : { admit: true }; },
        (p) => (p.metadata.uid === 'c' ? { admit: false } : { admit: true }),
      ],
    });
    h.send({ op: 'ADD', pods: [pod('a'), pod('b'), pod('c')] });
    assert.deepEqual(h.updates, ['create:a']);
    assert.deepEqual(seen, [[], ['a'], ['a']]);
    assert.deepEqual(h.rejections, ['b:NodeAffinity', 'c:UnexpectedAdmissionError']);
    assert.equal(h.status.getPodStatus('b')?.reason, 'NodeAffinity');
    assert.deepEqual(h.loop.activePods().map((p) => p.metadata.uid), ['a'], 'refused pods are not active');
    h.finish('a');
    assert.deepEqual(h.loop.activePods(), [], 'nor finished ones');
    await h.loop.stop();
  });

  void it('admits one pod at a time when a check answers later: the updates behind it wait, the PLEG does not sync it before', async () => {
    const answers = new Map<string, (r: { admit: boolean; reason?: string }) => void>();
    const seen: string[][] = [];
    const h = harness({
      admit: [
        (p, admitted) => {
          seen.push(admitted.map((a) => a.metadata.uid));
          return new Promise((resolve) => { answers.set(p.metadata.uid, resolve); });
        },
        (p) => (p.metadata.uid === 'c' ? { admit: false, reason: 'OutOfexample.com/dev' } : { admit: true }),
      ],
    });
    h.send({ op: 'ADD', pods: [pod('a'), pod('b')] });
    h.send({ op: 'UPDATE', pods: [pod('a')] });
    h.loop.podChanged('a');
    assert.deepEqual(h.updates, [], 'a waits for its answer; b and the update wait behind it');
    assert.deepEqual(h.loop.activePods().map((p) => p.metadata.uid), ['a', 'b'], 'b, waiting, counts as active');
    assert.deepEqual([...answers.keys()], ['a']);
    answers.get('a')?.({ admit: true });
    await settle();
    assert.deepEqual([...answers.keys()], ['a', 'b']);
    assert.deepEqual(h.updates, ['create:a']);
    answers.get('b')?.({ admit: false, reason: 'UnexpectedAdmissionError' });
    await settle();
    assert.deepEqual(h.updates, ['create:a', 'update:a']);
    assert.deepEqual(h.rejections, ['b:UnexpectedAdmissionError']);
    h.send({ op: 'ADD', pods: [pod('c')] });
    answers.get('c')?.({ admit: true });
    await settle();
    assert.deepEqual(h.rejections, ['b:UnexpectedAdmissionError', 'c:OutOfexample.com/dev'], 'the checks after the late one still run');
    assert.deepEqual(seen, [[], ['a'], ['a']], 'each admission sees the pods admitted before it');
    await h.loop.stop();
  });

  void it('kills API pods being deleted with their grace period, and never runs pods already terminal', async () => {
    const h = harness({ admit: [(p) => (p.metadata.uid === 'r' ? { admit: false, reason: 'NodeAffinity' } : { admit: true })] });
    const deleting = (p: NodePod, grace: number): NodePod => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: grace } });
    h.send({ op: 'ADD', pods: [pod('a'), pod('r')] });
    h.send({ op: 'UPDATE', pods: [deleting(pod('a'), 7)] });
    h.loop.podChanged('a');
    assert.deepEqual(h.updates, ['create:a', 'kill:a']);
    assert.deepEqual(h.grace, [7]);
    h.send({ op: 'ADD', pods: [deleting(pod('b'), 0), { ...pod('done'), status: { phase: 'Succeeded' } }] });
    assert.deepEqual(h.updates, ['create:a', 'kill:a', 'kill:b']);
    assert.equal(h.status.getPodStatus('done')?.phase, 'Succeeded');
    h.send({ op: 'UPDATE', pods: [deleting(pod('r'), 30), deleting({ ...pod('done'), status: { phase: 'Succeeded' } }, 30)] });
    assert.deepEqual(h.deletable, ['r', 'done']);
    await h.loop.stop();
  });

  void it('never reruns a pod that finished while its source still wants it', async () => {
    const h = harness();
    h.send({ op: 'ADD', pods: [pod('a')] });
    h.finish('a');
    assert.deepEqual(h.deletable, ['a'], 'a finished pod is announced once');
    h.send({ op: 'UPDATE', pods: [pod('a')] });
    h.loop.podChanged('a');
    assert.deepEqual(h.updates, ['create:a']);
    h.send({ op: 'REMOVE', pods: [pod('a')] });
    h.send({ op: 'ADD', pods: [pod('b')] });
    h.send({ op: 'REMOVE', pods: [pod('b')] });
    h.finish('b');
    assert.deepEqual(h.deletable, ['a'], 'a pod no source wants any more: not announced');
    await h.loop.stop();
  });

  void it('cleans up orphans only once the sources are ready', async () => {
    const h = harness({ running: [running('a'), running('orphan')], dirs: ['a', 'old'], cgroups: ['gone', 'a'] });
    h.send({ op: 'ADD', pods: [pod('a')] });
    await h.loop.housekeeping();
    assert.deepEqual(h.removed, []);
    h.setReady();
    await h.loop.housekeeping();
    await h.loop.orphansCleaned();
    assert.deepEqual(h.removed.sort(), ['cgroup:gone', 'kill:orphan', 'remove:orphan', 'volumes:old']);
    assert.ok(h.loop.lastHousekeeping() > 0);
    await h.loop.stop();
  });

  void it('lists the runtime and the node only when something may need cleaning up, or every full period', async () => {
    const h = harness({ running: [running('a')], dirs: ['a'], cgroups: ['a'], periodMs: 2000 });
    const waits = (): number[] => h.clock.pending().map((t) => t.dueAt - h.clock.now());
    h.send({ op: 'ADD', pods: [pod('a')] });
    await settle();
    assert.deepEqual(waits(), [2000], 'the first pass ran at start (sources not ready); the next one period later');
    h.setReady();
    await h.clock.advance(2000);
    assert.equal(h.listings.count, 1, 'the first pass with the sources ready is a full one');
    assert.equal(h.loop.lastHousekeeping(), h.clock.now());
    assert.deepEqual(waits(), [2000]);
    await h.clock.advance(5 * 2000);
    assert.equal(h.listings.count, 1, 'nothing to clean up: no listing');
    assert.equal(h.loop.lastHousekeeping(), h.clock.now(), 'every period still marks the loop alive');
    await h.clock.advance(30_000 - 5 * 2000 - 2000);
    assert.equal(h.listings.count, 1, 'not yet 30 s since the full pass');
    await h.clock.advance(2000);
    assert.equal(h.listings.count, 2, 'a full pass every 30 s');
    h.send({ op: 'REMOVE', pods: [pod('a')] });
    await h.clock.advance(2000);
    assert.equal(h.listings.count, 3, 'a pod removed: a full pass at the next period');
    await h.loop.stop();
    assert.deepEqual(h.clock.pending(), [], 'stop() cancels the timer');
  });

  void it('is unhealthy once housekeeping has not completed for 3 minutes', async () => {
    const h = harness({ periodMs: 2000 });
    assert.equal(h.loop.health(), undefined, 'just started');
    h.clock.set(h.clock.now() + 3 * 60_000 + 1000);
    assert.match(h.loop.health() ?? '', /^sync loop stalled: last housekeeping 181s ago$/, 'never completed (the sources are not ready)');
    h.setReady();
    await h.clock.advance(2000);
    assert.equal(h.loop.health(), undefined, 'a pass completed');
    h.clock.set(h.clock.now() + 3 * 60_000);
    assert.equal(h.loop.health(), undefined, 'three minutes is the limit');
    await h.loop.stop();
  });
});
