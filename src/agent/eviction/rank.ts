/**
 * Which pod goes first (upstream's rank functions) and what its eviction says:
 *
 *   | signal                 | order                                                                     |
 *   |------------------------|---------------------------------------------------------------------------|
 *   | memory, allocatable    | usage above the memory request first, then lower priority, then the most  |
 *   |                        | working set above the request                                             |
 *   | nodefs, imagefs        | usage above the ephemeral-storage request first, then lower priority, then |
 *   |                        | the most disk (or inodes) above the request                               |
 *   | pid.available          | lower priority, then the most processes                                   |
 *
 * A pod without stats goes before any with them. Disk usage counts what the file system
 * holds of the pod: with one file system for the node and the images, its containers'
 * writable layers, logs and local volumes (emptyDir on disk, configMap, gitRepo, hostPath);
 * with a dedicated image file system, logs and local volumes for nodefs and writable layers for
 * imagefs. Critical pods (static, mirror, priority 2000000000 or more) are never evicted.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { formatQuantity, parseQuantity, quantityValue } from '../../api/quantity.js';
import { isMirrorPod, isStaticPod, podRequest, type NodePod } from '../../api/pod/index.js';
import { SIGNAL_RESOURCE, thresholdQuantity } from './thresholds.js';
import type { FsUsage, Observations, PodStatsView, Signal, StarvedResource, Threshold } from './types.js';

/** upstream's scheduling.SystemCriticalPriority. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

export type FsStatsType = 'root' | 'logs' | 'localVolumeSource';
export type StatsOf = (pod: NodePod) => PodStatsView | undefined;
export type RankFunc = (pods: readonly NodePod[], stats: StatsOf) => NodePod[];

/** Static and mirror pods, and pods of system-critical priority (upstream's IsCriticalPod). */
export function isCriticalPod(pod: Pod): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) || (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

/** `n` printed as Kubernetes prints a quantity made of an integer in that format ("100Mi", "1k"). */
export function formatAmount(n: number, format: 'BinarySI' | 'DecimalSI'): string {
  return formatQuantity({ mantissa: BigInt(Math.trunc(n)), exponent: 0, format });
}

/** The names of the pod's volumes that live on the node's disk (upstream's localVolumeNames). */
export function localVolumeNames(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).filter((v) =>
    v.hostPath !== undefined || v.configMap !== undefined || v.gitRepo !== undefined || (v.emptyDir !== undefined && (v.emptyDir.medium ?? '') === ''),
  ).map((v) => v.name);
}

const used = (u: FsUsage | undefined, resource: 'ephemeral-storage' | 'inodes'): number => (resource === 'inodes' ? u?.inodesUsed : u?.usedBytes) ?? 0;

/** What the pod holds of the file system measured (upstream's podDiskUsage). */
export function podDiskUsage(stats: PodStatsView, pod: Pod, measure: readonly FsStatsType[], resource: 'ephemeral-storage' | 'inodes'): number {
  let total = 0;
  for (const c of stats.containers) {
    if (measure.includes('root')) total += used(c.rootfs, resource);
    if (measure.includes('logs')) total += used(c.logs, resource);
  }
  if (measure.includes('localVolumeSource')) {
    for (const name of localVolumeNames(pod)) total += used(stats.volumes?.find((v) => v.name === name), resource);
  }
  return total;
}

type Cmp = (a: NodePod, b: NodePod) => number;

/** true before false. */
const cmpBool = (a: boolean, b: boolean): number => (a === b ? 0 : a ? -1 : 1);

function orderedBy(pods: readonly NodePod[], ...cmps: Cmp[]): NodePod[] {
  return [...pods].sort((a, b) => {
    for (const cmp of cmps) {
      const r = cmp(a, b);
      if (r !== 0) return r;
    }
    return 0;
  });
}

/** Lower priority first. */
const priority: Cmp = (a, b) => (a.spec?.priority ?? 0) - (b.spec?.priority ?? 0);

/** A comparison by each pod's stats: pods without stats first, then true before false, or the larger number first. */
function byStats(stats: StatsOf, f: (s: PodStatsView, pod: NodePod) => number | boolean): Cmp {
  return (a, b) => {
    const sa = stats(a);
    const sb = stats(b);
    if (sa === undefined || sb === undefined) return cmpBool(sa === undefined, sb === undefined);
    const va = f(sa, a);
    const vb = f(sb, b);
    return typeof va === 'boolean' && typeof vb === 'boolean' ? cmpBool(va, vb) : Number(vb) - Number(va);
  };
}

const workingSet = (s: PodStatsView): number => s.memory?.workingSetBytes ?? 0;

export const rankMemoryPressure: RankFunc = (pods, stats) => orderedBy(pods,
  byStats(stats, (s, p) => workingSet(s) > podRequest(p, 'memory')),
  priority,
  byStats(stats, (s, p) => workingSet(s) - podRequest(p, 'memory')));

export const rankPIDPressure: RankFunc = (pods, stats) => orderedBy(pods, priority, byStats(stats, (s) => s.processCount ?? 0));

export function rankDiskPressure(measure: readonly FsStatsType[], resource: 'ephemeral-storage' | 'inodes'): RankFunc {
  // As upstream: the request compared with, and subtracted, is ephemeral-storage's even for inodes.
  const usage = (s: PodStatsView, p: NodePod): number => podDiskUsage(s, p, measure, resource);
  return (pods, stats) => orderedBy(pods,
    byStats(stats, (s, p) => usage(s, p) > (resource === 'inodes' ? 0 : podRequest(p, 'ephemeral-storage'))),
    priority,
    byStats(stats, (s, p) => usage(s, p) - podRequest(p, 'ephemeral-storage')));
}

/** The rank function of each signal (upstream's buildSignalToRankFunc). */
export function rankFuncs(dedicatedImageFs: boolean): ReadonlyMap<Signal, RankFunc> {
  const all: FsStatsType[] = ['root', 'logs', 'localVolumeSource'];
  const nodefs: FsStatsType[] = dedicatedImageFs ? ['logs', 'localVolumeSource'] : all;
  const imagefs: FsStatsType[] = dedicatedImageFs ? ['root'] : all;
  return new Map<Signal, RankFunc>([
    ['memory.available', rankMemoryPressure],
    ['allocatableMemory.available', rankMemoryPressure],
    ['pid.available', rankPIDPressure],
    ['nodefs.available', rankDiskPressure(nodefs, 'ephemeral-storage')],
    ['nodefs.inodesFree', rankDiskPressure(nodefs, 'inodes')],
    ['imagefs.available', rankDiskPressure(imagefs, 'ephemeral-storage')],
    ['imagefs.inodesFree', rankDiskPressure(imagefs, 'inodes')],
  ]);
}

const byteResource = (r: StarvedResource): boolean => r === 'memory' || r === 'ephemeral-storage';

/** The threshold's quantity and what was available, for the first threshold of the resource observed. */
function thresholdMetInfo(resource: StarvedResource, thresholds: readonly Threshold[], observations: Observations): string | undefined {
  for (const t of thresholds) {
    if (SIGNAL_RESOURCE[t.signal] !== resource) continue;
    const o = observations.get(t.signal);
    if (o === undefined) continue;
    const quantity = 'quantity' in t.value ? t.value.text : formatAmount(thresholdQuantity(t.value, o.capacity), 'BinarySI');
    return `Threshold quantity: ${quantity}, available: ${formatAmount(o.available, byteResource(resource) ? 'BinarySI' : 'DecimalSI')}. `;
  }
  return undefined;
}

function requestText(text: string | undefined): { value: number; text: string } {
  if (text === undefined) return { value: 0, text: '0' };
  try {
    const q = parseQuantity(text);
    return { value: quantityValue(q), text: formatQuantity(q) };
  } catch {
    return { value: 0, text: '0' }; // the API server validated it; a malformed one counts as none
  }
}

/**
 * The eviction's message (upstream's evictionMessage): the resource the node was low on, the
 * threshold and what was available, and each container using more than it requests.
 */
export function evictionMessage(resource: StarvedResource, pod: NodePod, stats: StatsOf, thresholds: readonly Threshold[], observations: Observations): string {
  let message = `The node was low on resource: ${resource}. `;
  message += thresholdMetInfo(resource, thresholds, observations) ?? '';
  const s = stats(pod);
  if (s === undefined || (resource !== 'memory' && resource !== 'ephemeral-storage')) return message;
  const specs = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const c of s.containers) {
    const spec = specs.find((x) => x.name === c.name);
    if (spec === undefined) continue;
    const request = requestText(spec.resources?.requests?.[resource]);
    let usage: number | undefined;
    if (resource === 'memory') usage = c.memory?.workingSetBytes;
    else if (c.rootfs?.usedBytes !== undefined && c.logs?.usedBytes !== undefined) usage = c.rootfs.usedBytes + c.logs.usedBytes;
    if (usage !== undefined && usage > request.value) {
      message += `Container ${c.name} was using ${formatAmount(usage, 'BinarySI')}, request is ${request.text}, has larger consumption of ${resource}. `;
    }
  }
  return message;
}
