/**
 * Local storage limits (localStorageCapacityIsolation; upstream's localStorageEviction): a pod
 * is evicted when an emptyDir volume uses more than its sizeLimit, when the pod's ephemeral
 * storage (writable layers, logs, local ephemeral volumes) passes the sum of its containers'
 * ephemeral-storage limits, or when a container's logs (and its writable layer, unless the
 * image file system is a dedicated one) pass its own limit. Checked in that order, first
 * violation wins. A memory-backed emptyDir is a tmpfs of sizeLimit bytes: it cannot pass it.
 */
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
import { resourceAmount } from '../../api/pod/index.js';
import { formatAmount } from './rank.js';
import type { PodStatsView } from './types.js';

/** The metric label of each kind of violation (upstream's signals of the local storage checks). */
export type LocalStorageSignal = 'emptydirfs.limit' | 'ephemeralpodfs.limit' | 'ephemeralcontainerfs.limit';

export interface LocalStorageViolation {
  readonly signal: LocalStorageSignal;
  readonly message: string;
}

const STORAGE = 'ephemeral-storage';

function canonical(text: string): string {
  try {
    return formatQuantity(parseQuantity(text));
  } catch {
    return text; // the API server validated it
  }
}

/** The pod's ephemeral-storage limit (upstream's PodLimits), or undefined when no container sets one. */
export function podStorageLimit(pod: Pod): { value: number; text: string } | undefined {
  let found: string | undefined;
  const limit = (c: Container): number => {
    const text = c.resources?.limits?.[STORAGE];
    if (text === undefined) return 0;
    found ??= text;
    return resourceAmount(text, STORAGE);
  };
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) sum += limit(c);
  let sidecars = 0;
  let initMax = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') sidecars += limit(c);
    else initMax = Math.max(initMax, sidecars + limit(c));
  }
  if (found === undefined) return undefined;
  const value = Math.max(sum + sidecars, initMax) + resourceAmount(pod.spec?.overhead?.[STORAGE], STORAGE);
  return { value, text: formatAmount(value, parseQuantity(found).format === 'BinarySI' ? 'BinarySI' : 'DecimalSI') };
}

function emptyDirViolation(pod: Pod, stats: PodStatsView): LocalStorageViolation | undefined {
  for (const v of pod.spec?.volumes ?? []) {
    const sizeLimit = v.emptyDir?.sizeLimit;
    if (sizeLimit === undefined) continue;
    const limit = resourceAmount(sizeLimit, STORAGE);
    const usedBytes = stats.volumes?.find((s) => s.name === v.name)?.usedBytes;
    if (usedBytes !== undefined && limit > 0 && usedBytes > limit) {
      return { signal: 'emptydirfs.limit', message: `Usage of EmptyDir volume ${JSON.stringify(v.name)} exceeds the limit ${JSON.stringify(canonical(sizeLimit))}. ` };
    }
  }
  return undefined;
}

function podViolation(pod: Pod, stats: PodStatsView): LocalStorageViolation | undefined {
  const limit = podStorageLimit(pod);
  if (limit === undefined) return undefined;
  const usage = stats.ephemeralStorage?.usedBytes ?? 0;
  if (usage <= limit.value) return undefined;
  return { signal: 'ephemeralpodfs.limit', message: `Pod ephemeral local storage usage exceeds the total limit of containers ${limit.text}. ` };
}

function containerViolation(pod: Pod, stats: PodStatsView, dedicatedImageFs: boolean): LocalStorageViolation | undefined {
  const limits = new Map<string, string>();
  for (const c of pod.spec?.containers ?? []) {
    const text = c.resources?.limits?.[STORAGE];
    if (text !== undefined && resourceAmount(text, STORAGE) !== 0) limits.set(c.name, text);
  }
  for (const c of stats.containers) {
    const text = limits.get(c.name);
    if (text === undefined) continue;
    const usage = (c.logs?.usedBytes ?? 0) + (dedicatedImageFs ? 0 : (c.rootfs?.usedBytes ?? 0));
    if (usage > resourceAmount(text, STORAGE)) {
      return { signal: 'ephemeralcontainerfs.limit', message: `Container ${c.name} exceeded its local ephemeral storage limit ${JSON.stringify(canonical(text))}. ` };
    }
  }
  return undefined;
}

/** The first local storage limit the pod passes, if any. */
export function localStorageViolation(pod: Pod, stats: PodStatsView, dedicatedImageFs: boolean): LocalStorageViolation | undefined {
  return emptyDirViolation(pod, stats) ?? podViolation(pod, stats) ?? containerViolation(pod, stats, dedicatedImageFs);
}

/** Whether any local storage limit applies to the pod (its stats are needed only then). */
export function hasLocalStorageLimits(pod: Pod): boolean {
  return (pod.spec?.volumes ?? []).some((v) => v.emptyDir?.sizeLimit !== undefined) || podStorageLimit(pod) !== undefined;
}
