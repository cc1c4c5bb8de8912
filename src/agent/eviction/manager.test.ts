import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FILE_SOURCE, type NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeNode, MI, fs, pod, stats } from './fixtures.js';
import { createEvictionManager, type EvictionManagerOptions } from './manager.js';
import { createEvictionMetrics } from './metrics.js';
import { parseThresholds, type ThresholdConfig } from './thresholds.js';
import type { EvictionEvent, PodStatsView, PressureCondition, TerminateOptions } from './types.js';

interface Setup extends Partial<ThresholdConfig> {
  readonly pods: NodePod[];
  readonly stats?: PodStatsView[];
  readonly transitionMs?: number;
  readonly maxPodGracePeriodSeconds?: number;
  readonly reclaim?: () => void;
}

function setup(s: Setup) {
  const clock = new FakeClock();
  const node = new FakeNode(() => clock.now());
  const killed: { pod: string; options: TerminateOptions }[] = [];
  const reclaims: string[] = [];
  const nodeEvents: EvictionEvent[] = [];
  const podEvents: string[] = [];
  const pressure: (readonly PressureCondition[])[] = [];
  const registry = new Registry();
  const cleaned = new Set<string>();
  let statsReads = 0;
  const pods = [...s.pods];
  const options: EvictionManagerOptions = {
    thresholds: parseThresholds({ evictionHard: {}, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, enforceNodeAllocatable: [], ...s }),
    pressureTransitionPeriodMs: s.transitionMs ?? 300_000,
    maxPodGracePeriodSeconds: s.maxPodGracePeriodSeconds ?? 0,
    localStorageCapacityIsolation: true,
    signals: node,
    podStats: { podStats: () => { statsReads++; return Promise.resolve(s.stats ?? []); } },
    activePods: () => pods,
    podCleanedUp: (uid) => cleaned.has(uid),
    terminator: {
      terminate(p, o) {
        killed.push({ pod: p.metadata.name, options: o });
        pods.splice(pods.indexOf(p), 1);
        return Promise.resolve();
      },
    },
    reclaim: {
      deleteAllUnusedContainers: () => { reclaims.push('containers'); return Promise.resolve(); },
      deleteUnusedImages: () => { reclaims.push('images'); s.reclaim?.(); return Promise.resolve(); },
    },
    clock,
    logger: new FakeLogger(),
    metrics: createEvictionMetrics(registry),
    onNodeEvent: (e) => nodeEvents.push(e),
    onPodEvent: (p, e) => podEvents.push(`${p.metadata.name} ${e.type} ${e.reason}: ${e.message}`),
    onPressureChange: (c) => pressure.push(c),
  };
  const m = createEvictionManager(options);
  return { m, clock, node, killed, reclaims, nodeEvents, podEvents, pressure, registry, cleaned, statsReads: () => statsReads };
}

void describe('the eviction manager', () => {
  void it('reclaims with container and image GC before it evicts one pod for disk, then refuses pods under DiskPressure', async () => {
    const hog = pod('hog', { spec: { volumes: [{ name: 'data', emptyDir: {} }] } });
    const quiet = pod('quiet', { requests: { 'ephemeral-storage': '1Gi' } });
    const t = setup({ evictionHard: { 'nodefs.available': '100Mi' }, pods: [quiet, hog], stats: [stats(hog, { volumes: { data: 40 * MI } }), stats(quiet, { rootfs: 1 * MI })] });
    t.node.nodefs = fs(50 * MI);
    assert.deepEqual((await t.m.synchronize()).map((p) => p.metadata.name), ['hog']);
    assert.deepEqual(t.reclaims, ['containers', 'images']);
    assert.deepEqual(t.nodeEvents, [{ type: 'Warning', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim ephemeral-storage' }]);
    const message = 'The node was low on resource: ephemeral-storage. Threshold quantity: 100Mi, available: 50Mi. ';
    assert.deepEqual(t.killed, [{ pod: 'hog', options: { gracePeriodSeconds: 1, reason: 'Evicted', message, disruptionReason: 'TerminationByNodeagent' } }]);
    assert.deepEqual(t.podEvents, [`hog Warning Evicted: ${message}`]);
    assert.deepEqual(t.m.conditions(), ['DiskPressure']);
    assert.deepEqual(t.pressure, [['DiskPressure']]);
    assert.deepEqual(t.m.admit(pod('new', { requests: { memory: '1Gi' } })), { admit: false, reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' });
    assert.deepEqual(t.m.admit(pod('static', { source: FILE_SOURCE })), { admit: true });
    const metrics = await t.registry.metrics();
    assert.match(metrics, /^nodeagent_evictions\{eviction_signal="nodefs.available"\} 1$/m);
    assert.match(metrics, /^nodeagent_node_pressure\{condition="DiskPressure"\} 1$/m);
    assert.match(metrics, /^nodeagent_eviction_stats_age_seconds_count\{eviction_signal="nodefs.available"\} 1$/m);
  });

  void it('evicts no pod when the reclaim resolved the pressure, and never a critical pod', async () => {
    const t = setup({ evictionHard: { 'imagefs.available': '100Mi' }, pods: [pod('a')], reclaim: () => { t.node.imagefs = fs(300 * MI); } });
    t.node.imagefs = fs(50 * MI);
    assert.deepEqual(await t.m.synchronize(), []);
    assert.deepEqual(t.reclaims, ['containers', 'images']);
    assert.deepEqual(t.killed, []);
    const u = setup({ evictionHard: { 'memory.available': '1Gi' }, pods: [pod('static', { source: FILE_SOURCE })] });
    u.node.memoryAvailable = 100 * MI;
    assert.deepEqual(await u.m.synchronize(), []);
    assert.deepEqual([u.reclaims, u.killed], [[], []], 'nothing to reclaim for memory, and a static pod stays');
  });

  void it('acts on a soft threshold only after its grace period, with the pod grace period capped, and keeps the Guaranteed pod', async () => {
    const bursty = pod('bursty', { requests: { memory: '100Mi' }, spec: { terminationGracePeriodSeconds: 60 } });
    const guaranteed = pod('guaranteed', { requests: { memory: '100Mi', cpu: '1' }, limits: { memory: '100Mi', cpu: '1' } });
    const t = setup({
      evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '30s' }, maxPodGracePeriodSeconds: 10,
      pods: [guaranteed, bursty], stats: [stats(bursty, { memory: 300 * MI }), stats(guaranteed, { memory: 90 * MI })],
    });
    t.node.memoryAvailable = 500 * MI;
    assert.deepEqual(await t.m.synchronize(), []);
    assert.deepEqual(t.m.conditions(), ['MemoryPressure'], 'the condition comes at once');
    assert.deepEqual(t.m.admit(pod('be')), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    assert.deepEqual(t.m.admit(pod('be-tolerant', { spec: { tolerations: [{ key: 'node.orch.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] } })), { admit: true });
    assert.deepEqual(t.m.admit(pod('burstable', { requests: { memory: '1Mi' } })), { admit: true });
    await t.clock.advance(29_999);
    assert.deepEqual(await t.m.synchronize(), []);
    await t.clock.advance(1);
    assert.deepEqual((await t.m.synchronize()).map((p) => p.metadata.name), ['bursty']);
    assert.equal(t.killed.at(0)?.options.gracePeriodSeconds, 10);
    assert.match(t.killed.at(0)?.options.message ?? '', /^The node was low on resource: memory\. Threshold quantity: 1Gi, available: 500Mi\. Container main was using 300Mi, request is 100Mi, has larger consumption of memory\. $/);
  });

  void it('keeps a pressure condition for the transition period after the threshold clears', async () => {
    const t = setup({ evictionHard: { 'pid.available': '1000' }, transitionMs: 60_000, pods: [] });
    t.node.pids = { max: 32768, running: 32000 };
    await t.m.synchronize();
    assert.deepEqual(t.m.conditions(), ['PIDPressure']);
    t.node.pids = { max: 32768, running: 300 };
    await t.clock.advance(59_999);
    await t.m.synchronize();
    assert.deepEqual(t.m.conditions(), ['PIDPressure']);
    await t.clock.advance(1);
    await t.m.synchronize();
    assert.deepEqual(t.m.conditions(), []);
    assert.deepEqual(t.pressure, [['PIDPressure'], []]);
  });

  void it('evicts pods past their local storage limits, and reads pod stats only when a pod has such limits', async () => {
    const plain = setup({ pods: [pod('plain')] });
    assert.deepEqual(await plain.m.synchronize(), []);
    assert.equal(plain.statsReads(), 0);
    const cache = pod('cache', { spec: { volumes: [{ name: 'c', emptyDir: { sizeLimit: '10Mi' } }] } });
    const t = setup({ pods: [pod('other'), cache], stats: [stats(cache, { volumes: { c: 11 * MI } })] });
    assert.deepEqual((await t.m.synchronize()).map((p) => p.metadata.name), ['cache']);
    assert.deepEqual(t.killed, [{ pod: 'cache', options: { gracePeriodSeconds: 1, reason: 'Evicted', message: 'Usage of EmptyDir volume "c" exceeds the limit "10Mi". ' } }]);
    assert.match(await t.registry.metrics(), /^nodeagent_evictions\{eviction_signal="emptydirfs.limit"\} 1$/m);
    assert.deepEqual(t.m.conditions(), []);
  });

  void it('passes every 10 s, and after an eviction as soon as the pod was cleaned up', async () => {
    const p = pod('p');
    const t = setup({ evictionHard: { 'memory.available': '1Gi' }, pods: [p], stats: [stats(p, { memory: MI })] });
    t.m.start();
    await settle();
    assert.equal(t.node.reads, 1);
    await t.clock.advance(10_000);
    assert.equal(t.node.reads, 2);
    t.node.memoryAvailable = 10 * MI;
    await t.clock.advance(10_000);
    assert.deepEqual(t.killed.map((k) => k.pod), ['p']);
    assert.equal(t.node.reads, 3);
    await t.clock.advance(3000);
    assert.equal(t.node.reads, 3, 'waiting for the pod to be cleaned up');
    t.cleaned.add(p.metadata.uid);
    await t.clock.advance(1000);
    assert.equal(t.node.reads, 4, 'the next pass right after the cleanup');
    await t.m.stop();
  });
});
