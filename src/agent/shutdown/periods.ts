/**
 * How the shutdown grace period is shared among pods (upstream: the node shutdown manager's
 * migrateConfig and groupByPriority). shutdownGracePeriod and shutdownGracePeriodCriticalPods
 * make two groups: pods below the system-critical priority get the period less the critical
 * pods' share, then critical pods get theirs; shutdownGracePeriodByPodPriority gives the
 * groups explicitly. Groups run from the lowest priority up; a pod belongs to the group of the
 * highest priority not above its own (below the lowest: the lowest). Pure.
 */
import type { NodePod } from '../../api/pod/index.js';

/** Upstream's SystemCriticalPriority: system-cluster-critical and above. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

export interface PriorityPeriod {
  readonly priority: number;
  readonly shutdownGracePeriodSeconds: number;
}

export interface ShutdownPeriodsConfig {
  /** Nanoseconds. */
  readonly shutdownGracePeriod: number;
  /** Nanoseconds. */
  readonly shutdownGracePeriodCriticalPods: number;
  readonly shutdownGracePeriodByPodPriority: readonly PriorityPeriod[];
}

/** The groups, lowest priority first; empty when graceful node shutdown is off. */
export function shutdownPeriods(config: ShutdownPeriodsConfig): readonly PriorityPeriod[] {
  if (config.shutdownGracePeriodByPodPriority.length > 0) {
    return [...config.shutdownGracePeriodByPodPriority].sort((a, b) => a.priority - b.priority);
  }
  const total = Math.floor(config.shutdownGracePeriod / 1e9);
  if (total <= 0) return [];
  const critical = Math.floor(config.shutdownGracePeriodCriticalPods / 1e9);
  return [
    { priority: 0, shutdownGracePeriodSeconds: total - critical },
    { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: critical },
  ];
}

/** The whole period the node's shutdown is delayed for, in seconds (the inhibitor delay asked of logind). */
export function periodRequested(periods: readonly PriorityPeriod[]): number {
  return periods.reduce((sum, p) => sum + p.shutdownGracePeriodSeconds, 0);
}

export interface ShutdownGroup extends PriorityPeriod {
  readonly pods: readonly NodePod[];
}

/** The pods of each group, in the groups' order. */
export function groupByPriority(periods: readonly PriorityPeriod[], pods: readonly NodePod[]): ShutdownGroup[] {
  const groups = periods.map((p) => ({ ...p, pods: [] as NodePod[] }));
  if (groups.length === 0) return groups;
  for (const pod of pods) {
    const priority = pod.spec?.priority ?? 0;
    let index = 0;
    for (let i = 0; i < groups.length; i++) if ((groups[i]?.priority ?? 0) <= priority) index = i;
    groups[index]?.pods.push(pod);
  }
  return groups;
}
