/**
 * A container's Linux resources as upstream computes them from its requests and limits:
 * CPU shares from the CPU request (or the limit when only a limit is set), the CFS quota and
 * period from the CPU limit, the memory limit, and the OOM score adjustment from the pod's
 * QoS class (src/api/pod/qos.ts). Pure.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { qosClass } from '../../api/pod/index.js';
import { parseQuantity, quantityMilliValue, quantityValue } from '../../api/quantity.js';
import type { LinuxContainerResources } from '../runtime/cri/index.js';

export const MIN_CPU_SHARES = 2;
export const MAX_CPU_SHARES = 262_144;
/** The smallest CFS quota the kernel takes, in microseconds. */
export const MIN_CFS_QUOTA_US = 1000;
export const DEFAULT_CFS_PERIOD_US = 100_000;
export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;
/** Priorities at or above this make a pod critical (upstream: SystemCriticalPriority). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
/** The priority class of pods the node itself depends on (upstream: scheduling.SystemNodeCritical). */
const SYSTEM_NODE_CRITICAL = 'system-node-critical';
/** The pod-source annotation (src/api/pod/meta.ts): a pod read from a file or URL is static, hence critical. */
const CONFIG_SOURCE_ANNOTATION = 'orch.io/config.source';
const CONFIG_MIRROR_ANNOTATION = 'orch.io/config.mirror';


/** A quantity's value (milli for CPU), 0 for an absent or unparsable one (validation reports those). */
function amount(text: string | undefined, milli: boolean): number {
  if (text === undefined) return 0;
  try {
    const q = parseQuantity(text);
    return milli ? quantityMilliValue(q) : quantityValue(q);
  } catch {
    return 0; // invalid quantities are rejected by validation; here they count as unset
  }
}

/** The container's CPU request in millicores; the limit when the request is unset or zero (upstream's shares rule). */
export function cpuRequestMilli(c: Container): number {
  const request = amount(c.resources?.requests?.cpu, true);
  return request > 0 ? request : amount(c.resources?.limits?.cpu, true);
}

export function cpuLimitMilli(c: Container): number {
  return amount(c.resources?.limits?.cpu, true);
}

export function memoryRequestBytes(c: Container): number {
  return amount(c.resources?.requests?.memory ?? c.resources?.limits?.memory, false);
}

export function memoryLimitBytes(c: Container): number {
  return amount(c.resources?.limits?.memory, false);
}

/** upstream MilliCPUToShares: milli × 1024 / 1000, within [2, 262144]; 2 when unset. */
export function milliCpuToShares(milli: number): number {
  if (milli <= 0) return MIN_CPU_SHARES;
  const shares = Math.floor((milli * 1024) / 1000);
  return Math.min(MAX_CPU_SHARES, Math.max(MIN_CPU_SHARES, shares));
}

/** upstream milliCPUToQuota: milli × period / 1000 µs, at least 1000 µs; 0 (unset) when there is no limit. */
export function milliCpuToQuota(milli: number, periodUs: number): number {
  if (milli <= 0) return 0;
  return Math.max(MIN_CFS_QUOTA_US, Math.floor((milli * periodUs) / 1000));
}

/** Static, mirror and system-critical pods (upstream IsCriticalPod). */
export function isCriticalPod(pod: Pod): boolean {
  const annotations = pod.metadata?.annotations ?? {};
  const source = annotations[CONFIG_SOURCE_ANNOTATION];
  if (source !== undefined && source !== 'api') return true;
  if (annotations[CONFIG_MIRROR_ANNOTATION] !== undefined) return true;
  return (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

/**
 * Critical pods of the priority class system-node-critical (upstream IsNodeCriticalPod): a
 * static pod alone is critical but not node-critical.
 */
export function isNodeCriticalPod(pod: Pod): boolean {
  return isCriticalPod(pod) && pod.spec?.priorityClassName === SYSTEM_NODE_CRITICAL;
}

/**
 * upstream GetContainerOOMScoreAdjust: -997 for guaranteed and node-critical pods, 1000 for
 * best-effort ones, and for burstable ones 1000 - 1000 × memoryRequest / capacity within
 * [3, 999] (upstream's floor is 1000 + guaranteed = 3; its documentation says 2).
 */
export function oomScoreAdjust(pod: Pod, container: Container, memoryCapacityBytes: number): number {
  if (isNodeCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const capacity = Math.max(1, memoryCapacityBytes);
  const adjust = 1000 - Math.floor((1000 * memoryRequestBytes(container)) / capacity);
  if (adjust < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adjust === BESTEFFORT_OOM_SCORE_ADJ) return adjust - 1;
  return adjust;
}

export interface ResourceSettings {
  /** Enforce CPU limits with CFS quota (--cpu-cfs-quota). */
  readonly cpuCFSQuota: boolean;
  /** The CFS period in microseconds (--cpu-cfs-quota-period). */
  readonly cpuCFSQuotaPeriodUs: number;
  readonly memoryCapacityBytes: number;
  /**
   * Swap on a cgroup v1 node with swap accounting (upstream's swap configuration): 'no-swap' sets
   * memory+swap to the memory limit, 'unlimited' (UnlimitedSwap with NodeSwap) to -1; absent:
   * left to the runtime.
   */
  readonly memorySwap?: 'no-swap' | 'unlimited' | undefined;
}

/** The CRI resources of a container. */
export function containerResources(pod: Pod, container: Container, settings: ResourceSettings): LinuxContainerResources {
  const cpuLimit = cpuLimitMilli(container);
  const memoryLimit = memoryLimitBytes(container);
  const quota = settings.cpuCFSQuota ? milliCpuToQuota(cpuLimit, settings.cpuCFSQuotaPeriodUs) : 0;
  return {
    cpuShares: milliCpuToShares(cpuRequestMilli(container)),
    ...(quota > 0 ? { cpuQuota: quota, cpuPeriod: settings.cpuCFSQuotaPeriodUs } : {}),
    ...(memoryLimit > 0 ? { memoryLimitInBytes: memoryLimit } : {}),
    ...(settings.memorySwap === 'no-swap' && memoryLimit > 0 ? { memorySwapLimitInBytes: memoryLimit } : {}),
    ...(settings.memorySwap === 'unlimited' ? { memorySwapLimitInBytes: -1 } : {}),
    oomScoreAdj: oomScoreAdjust(pod, container, settings.memoryCapacityBytes),
  };
}
