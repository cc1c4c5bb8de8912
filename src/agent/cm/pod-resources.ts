/**
 * The limits of a pod's cgroup (upstream: ResourceConfigForPod) and of the QoS cgroups
 * (upstream: the QoS container manager's CPU shares), and their cgroup files. Pure: the
 * writes are in pod-cgroups.ts.
 *
 *   | pod QoS    | cpu.shares             | CFS quota (period)              | memory limit               |
 *   |------------|------------------------|---------------------------------|----------------------------|
 *   | Guaranteed | shares of the requests | the limits' sum (-1 without     | the limits' sum            |
 *   |            |                        | cpuCFSQuota)                    |                            |
 *   | Burstable  | shares of the requests | the limits' sum, when every     | the limits' sum, when      |
 *   |            |                        | container has a CPU limit       | every container has one    |
 *   | BestEffort | 2                      | -                               | -                          |
 *
 * The pod's requests (and limits) are the larger of the regular containers' sum (sidecars,
 * `restartPolicy: Always` init containers, added) and the largest other init container's, as
 * upstream's PodRequests. `podPidsLimit` > 0 becomes pids.max. The burstable QoS cgroup gets the
 * shares of all burstable pods' CPU requests, the besteffort one 2.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity, quantityMilliValue, quantityValue } from '../../api/quantity.js';
import { qosClass, type QOSClass } from '../../api/pod/index.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
export const MIN_QUOTA_PERIOD_US = 1000;
export const DEFAULT_CFS_PERIOD_US = 100_000;

/** What pod-level enforcement the agent was configured with. */
export interface PodResourceSettings {
  /** --cpu-cfs-quota (default true). */
  readonly cpuCFSQuota?: boolean;
  /** --cpu-cfs-quota-period in microseconds (default 100 000). */
  readonly cpuCFSQuotaPeriodUs?: number;
  /** --pod-max-pids; 0 or less: no limit. */
  readonly podPidsLimit?: number;
}

/** Settings of one cgroup; absent fields are left as they are. */
export interface ResourceConfig {
  readonly cpuShares?: number;
  /** Microseconds; -1: no quota. */
  readonly cpuQuotaUs?: number;
  readonly cpuPeriodUs?: number;
  readonly memoryLimitBytes?: number;
  readonly pidsLimit?: number;
  /** hugetlb limits by page size (node allocatable's pods cgroup). */
  readonly hugepageLimits?: readonly { readonly pageSizeBytes: number; readonly limitBytes: number }[];
}

/** The kernel's name of a huge page size in hugetlb files: 2MB, 1GB, 64KB. */
export function hugetlbSizeName(pageSizeBytes: number): string {
  for (const [unit, size] of [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]] as const) {
    if (pageSizeBytes % size === 0) return `${pageSizeBytes / size}${unit}`;
  }
  return `${pageSizeBytes}B`;
}

function amount(text: string | undefined, milli: boolean): number {
  if (text === undefined) return 0;
  const q = parseQuantity(text);
  return milli ? quantityMilliValue(q) : quantityValue(q);
}

type Resource = 'cpu' | 'memory';

function request(c: Container, r: Resource): number {
  return amount(c.resources?.requests?.[r] ?? c.resources?.limits?.[r], r === 'cpu');
}

function limit(c: Container, r: Resource): number {
  return amount(c.resources?.limits?.[r], r === 'cpu');
}

/** upstream PodRequests / PodLimits for one resource. */
export function podAmount(pod: Pod, r: Resource, of: (c: Container, r: Resource) => number): number {
  const inits = pod.spec?.initContainers ?? [];
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) sum += of(c, r);
  let sidecars = 0;
  let initMax = 0;
  for (const c of inits) {
    if (c.restartPolicy === 'Always') {
      sidecars += of(c, r);
      continue;
    }
    initMax = Math.max(initMax, sidecars + of(c, r));
  }
  return Math.max(sum + sidecars, initMax);
}

export function milliCpuToShares(milli: number): number {
  if (milli <= 0) return MIN_SHARES;
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((milli * 1024) / 1000)));
}

export function milliCpuToQuota(milli: number, periodUs: number): number {
  if (milli <= 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD_US, Math.floor((milli * periodUs) / 1000));
}

/** The pod cgroup's settings. Throws API_INVALID_QUANTITY for malformed quantities (as qosClass). */
export function podResourceConfig(pod: Pod, settings: PodResourceSettings = {}): ResourceConfig {
  const qos = qosClass(pod);
  const pidsLimit = settings.podPidsLimit ?? 0;
  const pids = pidsLimit > 0 ? { pidsLimit } : {};
  if (qos === 'BestEffort') return { cpuShares: MIN_SHARES, ...pids };
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const cpuLimited = all.every((c) => limit(c, 'cpu') > 0);
  const memoryLimited = all.every((c) => limit(c, 'memory') > 0);
  const period = settings.cpuCFSQuotaPeriodUs ?? DEFAULT_CFS_PERIOD_US;
  const quota = settings.cpuCFSQuota === false ? -1 : milliCpuToQuota(podAmount(pod, 'cpu', limit), period);
  const shares = milliCpuToShares(podAmount(pod, 'cpu', request));
  const memory = podAmount(pod, 'memory', limit);
  const cpu = qos === 'Guaranteed' || cpuLimited ? { cpuQuotaUs: quota === 0 ? -1 : quota, cpuPeriodUs: period } : {};
  const mem = (qos === 'Guaranteed' || memoryLimited) && memory > 0 ? { memoryLimitBytes: memory } : {};
  return { cpuShares: shares, ...cpu, ...mem, ...pids };
}

/** The QoS cgroups' CPU shares from the pods the agent runs (upstream setCPUCgroupConfig). */
export function qosCpuShares(pods: Iterable<Pod>): Record<Exclude<QOSClass, 'Guaranteed'>, number> {
  let burstableMilli = 0;
  for (const pod of pods) if (qosClass(pod) === 'Burstable') burstableMilli += podAmount(pod, 'cpu', request);
  return { Burstable: milliCpuToShares(burstableMilli), BestEffort: MIN_SHARES };
}

/** cgroup v2's weight for v1 shares (the conversion runc uses). */
export function sharesToWeight(shares: number): number {
  return Math.floor(1 + ((shares - 2) * 9999) / 262_142);
}

/** The control files to write, in order, for a hierarchy of `version` (a file missing in a hierarchy is skipped). */
export function cgroupFiles(config: ResourceConfig, version: 1 | 2): [string, string][] {
  const files: [string, string][] = [];
  if (version === 1) {
    if (config.cpuShares !== undefined) files.push(['cpu.shares', String(config.cpuShares)]);
    if (config.cpuPeriodUs !== undefined) files.push(['cpu.cfs_period_us', String(config.cpuPeriodUs)]);
    if (config.cpuQuotaUs !== undefined) files.push(['cpu.cfs_quota_us', String(config.cpuQuotaUs)]);
    if (config.memoryLimitBytes !== undefined) files.push(['memory.limit_in_bytes', String(config.memoryLimitBytes)]);
  } else {
    if (config.cpuShares !== undefined) files.push(['cpu.weight', String(sharesToWeight(config.cpuShares))]);
    if (config.cpuQuotaUs !== undefined) files.push(['cpu.max', `${config.cpuQuotaUs < 0 ? 'max' : config.cpuQuotaUs} ${config.cpuPeriodUs ?? DEFAULT_CFS_PERIOD_US}`]);
    if (config.memoryLimitBytes !== undefined) files.push(['memory.max', String(config.memoryLimitBytes)]);
  }
  if (config.pidsLimit !== undefined) files.push(['pids.max', String(config.pidsLimit)]);
  for (const h of config.hugepageLimits ?? []) {
    files.push([`hugetlb.${hugetlbSizeName(h.pageSizeBytes)}.${version === 1 ? 'limit_in_bytes' : 'max'}`, String(h.limitBytes)]);
  }
  return files;
}
