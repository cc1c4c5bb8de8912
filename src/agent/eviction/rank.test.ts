import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FILE_SOURCE, type NodePod } from '../../api/pod/index.js';
import { localStorageViolation, podStorageLimit } from './local-storage.js';
import { MI, pod, stats } from './fixtures.js';
import { evictionMessage, formatAmount, isCriticalPod, rankFuncs, type StatsOf } from './rank.js';
import { parseThresholds } from './thresholds.js';
import type { PodStatsView } from './types.js';

const statsOf = (list: readonly PodStatsView[]): StatsOf => (p: NodePod) => list.find((s) => s.uid === p.metadata.uid);
const names = (pods: readonly NodePod[]): string[] => pods.map((p) => p.metadata.name);

void describe('ranking pods for eviction', () => {
  const ranks = rankFuncs(false);

  void it('under memory pressure: over their request first, then lower priority, then the most above the request', () => {
    const guaranteed = pod('guaranteed', { requests: { memory: '100Mi', cpu: '1' }, limits: { memory: '100Mi', cpu: '1' } });
    const bursty = pod('bursty', { requests: { memory: '100Mi' } });
    const besteffort = pod('besteffort');
    const important = pod('important', { priority: 1000 });
    const nostats = pod('nostats');
    const s = statsOf([
      stats(guaranteed, { memory: 90 * MI }), stats(bursty, { memory: 300 * MI }), stats(besteffort, { memory: 50 * MI }), stats(important, { memory: 500 * MI }),
    ]);
    const ranked = ranks.get('memory.available')?.([guaranteed, important, besteffort, bursty, nostats], s);
    assert.deepEqual(names(ranked ?? []), ['nostats', 'bursty', 'besteffort', 'important', 'guaranteed']);
  });

  void it('under disk pressure by what the pod holds of the file system, and by process count for PIDs', () => {
    const a = pod('a', { spec: { volumes: [{ name: 'scratch', emptyDir: {} }, { name: 'shm', emptyDir: { medium: 'Memory' } }] } });
    const b = pod('b', { requests: { 'ephemeral-storage': '1Gi' } });
    const c = pod('c');
    const s = statsOf([
      stats(a, { rootfs: 1 * MI, logs: 1 * MI, volumes: { scratch: 30 * MI, shm: 500 * MI }, processes: 3 }),
      stats(b, { rootfs: 100 * MI, processes: 50 }),
      stats(c, { rootfs: 20 * MI, logs: 5 * MI, processes: 10 }),
    ]);
    assert.deepEqual(names(ranks.get('nodefs.available')?.([b, c, a], s) ?? []), ['a', 'c', 'b'], 'a: 32Mi (not the tmpfs), c: 25Mi, b within its request');
    assert.deepEqual(names(rankFuncs(true).get('nodefs.available')?.([b, c, a], s) ?? []), ['a', 'c', 'b'], 'dedicated imagefs: logs and volumes for nodefs');
    assert.deepEqual(names(rankFuncs(true).get('imagefs.available')?.([a, c, b], s) ?? []), ['c', 'a', 'b'], 'dedicated imagefs: writable layers for imagefs');
    assert.deepEqual(names(ranks.get('pid.available')?.([a, b, c], s) ?? []), ['b', 'c', 'a']);
  });

  void it('never counts static, mirror or system-critical pods as evictable', () => {
    assert.equal(isCriticalPod(pod('static', { source: FILE_SOURCE })), true);
    assert.equal(isCriticalPod(pod('critical', { priority: 2_000_000_000 })), true);
    assert.equal(isCriticalPod(pod('plain', { priority: 1_999_999_999 })), false);
  });

  void it('say which resource, threshold and container (upstream message)', () => {
    const p = pod('p', { requests: { memory: '100Mi' } });
    const t = parseThresholds({ evictionHard: { 'memory.available': '500Mi', 'nodefs.available': '10%' }, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, enforceNodeAllocatable: [] });
    const observations = new Map([
      ['memory.available', { available: 300 * MI, capacity: 8192 * MI, time: 1 }],
      ['nodefs.available', { available: 99 * MI + 5, capacity: 1000 * MI, time: 1 }],
    ] as const);
    const s = statsOf([stats(p, { memory: 300 * MI, rootfs: 3 * MI, logs: 1 * MI })]);
    assert.equal(evictionMessage('memory', p, s, t, observations),
      'The node was low on resource: memory. Threshold quantity: 500Mi, available: 300Mi. Container main was using 300Mi, request is 100Mi, has larger consumption of memory. ');
    assert.equal(evictionMessage('ephemeral-storage', p, s, t, observations),
      'The node was low on resource: ephemeral-storage. Threshold quantity: 104857601, available: 103809029. Container main was using 4Mi, request is 0, has larger consumption of ephemeral-storage. ');
    assert.equal(formatAmount(1000, 'DecimalSI'), '1k');
  });
});

void describe('local storage limits', () => {
  void it('evict past an emptyDir sizeLimit, the pod total, or a container limit, naming the limit', () => {
    const ed = pod('ed', { spec: { volumes: [{ name: 'cache', emptyDir: { sizeLimit: '10Mi' } }] } });
    assert.equal(localStorageViolation(ed, stats(ed, { volumes: { cache: 10 * MI } }), false), undefined);
    assert.deepEqual(localStorageViolation(ed, stats(ed, { volumes: { cache: 10 * MI + 1 } }), false),
      { signal: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "cache" exceeds the limit "10Mi". ' });
    const c = pod('c', { limits: { 'ephemeral-storage': '20Mi' } });
    assert.deepEqual(podStorageLimit(c), { value: 20 * MI, text: '20Mi' });
    assert.deepEqual(localStorageViolation(c, stats(c, { rootfs: 15 * MI, logs: 6 * MI, ephemeral: 10 * MI }), false),
      { signal: 'ephemeralcontainerfs.limit', message: 'Container main exceeded its local ephemeral storage limit "20Mi". ' });
    assert.equal(localStorageViolation(c, stats(c, { rootfs: 15 * MI, logs: 6 * MI, ephemeral: 10 * MI }), true), undefined, 'a dedicated imagefs: logs only');
    assert.deepEqual(localStorageViolation(c, stats(c, { ephemeral: 21 * MI }), false),
      { signal: 'ephemeralpodfs.limit', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 20Mi. ' });
    assert.equal(podStorageLimit(pod('none')), undefined);
  });
});
