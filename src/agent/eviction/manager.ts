/**
 * The eviction manager (upstream's managerImpl): a monitoring pass every 10 s on the agent's
 * clock, or at once after the pods it evicted were cleaned up (or 30 s passed). Each pass reads
 * the signals, works out which thresholds are met (a met threshold stays met until its minimum
 * reclaim is recovered too), since when, which node conditions that raises (kept for the
 * pressure transition period), then:
 *
 *   1. with localStorageCapacityIsolation, evicts every pod past a local storage limit (grace
 *      1 s) and ends the pass;
 *   2. for the first threshold past its grace period (memory before the rest), records
 *      EvictionThresholdMet on the node, reclaims node-level resources (disk: container GC then
 *      image GC) and ends the pass if that resolved every threshold;
 *   3. otherwise ranks the active pods for the signal and evicts the first that is not critical:
 *      grace 1 s for a hard threshold (upstream's immediate eviction), for a soft one the pod's
 *      terminationGracePeriodSeconds capped by evictionMaxPodGracePeriod (negative: the pod's).
 *
 * An evicted pod ends Failed with reason Evicted, the message naming the resource, threshold,
 * what was available and the containers over their requests, and a DisruptionTarget condition;
 * an Evicted event (Warning) is recorded on it. Pods' stats are read only when a pass needs
 * them (a pod with local storage limits, or ranking), not at every pass.
 */
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, podNamespacedName, toleratesTaint, type NodePod } from '../../api/pod/index.js';
import { TAINT_NODE_MEMORY_PRESSURE } from '../../api/taints.js';
import { qosClass } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import { hasLocalStorageLimits, localStorageViolation } from './local-storage.js';
import type { EvictionMetrics } from './metrics.js';
import { hasDedicatedImageFs, makeObservations } from './observations.js';
import { evictionMessage, isCriticalPod, rankFuncs, type RankFunc, type StatsOf } from './rank.js';
import {
  SIGNAL_RESOURCE, byEvictionPriority, conditionsLastObservedAt, conditionsObservedSince, conditionsOf, firstObservedAt, isHard,
  mergeThresholds, metGracePeriod, thresholdsMet, thresholdsUpdatedStats,
} from './thresholds.js';
import type {
  EvictionEvent, NodeReclaim, Observations, PodStatsSource, PodStatsView, PodTerminator, PressureCondition, Signal, SignalReader, Threshold,
} from './types.js';

export const MONITORING_PERIOD_MS = 10_000;
/** upstream's immediateEvictionGracePeriodSeconds (0 would mean "the pod's own" to upstream's pod workers). */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;
export const POD_CLEANUP_TIMEOUT_MS = 30_000;
export const POD_CLEANUP_POLL_MS = 1000;
export const EVICTED_REASON = 'Evicted';
/** The DisruptionTarget condition's reason on a pressure eviction (upstream's TerminationByKubelet, renamed). */
export const DISRUPTION_REASON = 'TerminationByNodeagent';

export interface EvictionManagerOptions {
  readonly thresholds: readonly Threshold[];
  readonly pressureTransitionPeriodMs: number;
  /** evictionMaxPodGracePeriod: the cap of a soft eviction's grace period (negative: the pod's own). */
  readonly maxPodGracePeriodSeconds: number;
  readonly localStorageCapacityIsolation: boolean;
  readonly monitoringPeriodMs?: number;
  readonly signals: SignalReader;
  readonly podStats: PodStatsSource;
  /** The pods admitted and not terminated (upstream's GetActivePods). */
  readonly activePods: () => readonly NodePod[];
  /** Whether everything an evicted pod held was released (upstream's podResourcesAreReclaimed). */
  readonly podCleanedUp: (uid: string) => boolean;
  readonly terminator: PodTerminator;
  readonly reclaim: NodeReclaim;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: EvictionMetrics;
  /** An event about the node (EvictionThresholdMet). */
  readonly onNodeEvent?: (event: EvictionEvent) => void;
  /** An event about a pod (Evicted). */
  readonly onPodEvent?: (pod: NodePod, event: EvictionEvent) => void;
  /** The pressure conditions changed (the node status reports them). */
  readonly onPressureChange?: (conditions: readonly PressureCondition[]) => void;
}

export interface AdmitResult {
  readonly admit: boolean;
  readonly reason?: string;
  readonly message?: string;
}

export interface EvictionManager {
  /** Starts the monitoring loop (its first pass at once). */
  start(): void;
  stop(): Promise<void>;
  /** Refuses BestEffort pods under memory pressure (unless they tolerate it) and every pod under other pressure; critical pods always pass. */
  admit(pod: NodePod): AdmitResult;
  /** The pressure conditions True now. */
  conditions(): readonly PressureCondition[];
  /** One monitoring pass; resolves to the pods it evicted. */
  synchronize(): Promise<NodePod[]>;
}

interface Decision {
  readonly threshold: Threshold;
  readonly observations: Observations;
  readonly thresholds: readonly Threshold[];
}

export function createEvictionManager(o: EvictionManagerOptions): EvictionManager {
  const log = o.logger;
  const { clock } = o;
  let conditions: PressureCondition[] = [];
  let thresholdsFirstObserved = new Map<string, { threshold: Threshold; at: number }>();
  let conditionsLastObserved = new Map<PressureCondition, number>();
  let met: Threshold[] = [];
  let lastObservations: Observations = new Map();
  let dedicatedImageFs: boolean | undefined;
  let ranks: ReadonlyMap<Signal, RankFunc> = new Map();
  const stopper = new AbortController();
  let loop: Promise<void> | undefined;

  const statsFn = (stats: readonly PodStatsView[]): StatsOf => {
    const byUid = new Map(stats.map((s) => [s.uid, s]));
    return (pod) => byUid.get(pod.metadata.uid);
  };

  const setConditions = (next: PressureCondition[]): void => {
    const changed = next.join() !== conditions.join();
    conditions = next;
    if (!changed) return;
    log.info('Eviction manager: node conditions changed', { conditions: next });
    o.metrics?.pressure(next);
    o.onPressureChange?.(next);
  };

  async function evictPod(pod: NodePod, gracePeriodSeconds: number, message: string, disruption: boolean): Promise<boolean> {
    if (isCriticalPod(pod)) {
      log.error('Eviction manager: cannot evict a critical pod', { pod: podNamespacedName(pod) });
      return false;
    }
    o.onPodEvent?.(pod, { type: 'Warning', reason: EVICTED_REASON, message });
    log.info('Evicting pod', { pod: podNamespacedName(pod), podUID: pod.metadata.uid, gracePeriodSeconds, message });
    try {
      await o.terminator.terminate(pod, {
        gracePeriodSeconds, reason: EVICTED_REASON, message,
        ...(disruption ? { disruptionReason: DISRUPTION_REASON } : {}),
      });
      log.info('Eviction manager: pod is evicted successfully', { pod: podNamespacedName(pod) });
    } catch (err) {
      log.error('Eviction manager: pod failed to evict', { pod: podNamespacedName(pod), err: messageOf(err) });
    }
    return true;
  }

  /** The soft eviction's grace period: the pod's own, capped by evictionMaxPodGracePeriod. */
  const softGrace = (pod: NodePod): number => {
    const own = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
    return o.maxPodGracePeriodSeconds < 0 ? own : Math.min(own, o.maxPodGracePeriodSeconds);
  };

  async function localStorageEviction(pods: readonly NodePod[], stats: StatsOf): Promise<NodePod[]> {
    const evicted: NodePod[] = [];
    for (const pod of pods) {
      const s = stats(pod);
      if (s === undefined) continue;
      const violation = localStorageViolation(pod, s, dedicatedImageFs === true);
      if (violation === undefined) continue;
      if (await evictPod(pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, violation.message, false)) {
        o.metrics?.evicted(violation.signal);
        evicted.push(pod);
      }
    }
    return evicted;
  }

  /** Node-level reclaim for the signal; true when every threshold (with its minimum reclaim) is resolved after it. */
  async function reclaimNodeLevel(signal: Signal): Promise<boolean> {
    const disk = SIGNAL_RESOURCE[signal] === 'ephemeral-storage' || SIGNAL_RESOURCE[signal] === 'inodes';
    // With a dedicated image file system, nodefs pressure has nothing to reclaim but pods (upstream deletes no logs either).
    if (!disk || (dedicatedImageFs === true && signal.startsWith('nodefs.'))) return false;
    for (const [what, run] of [['containers', () => o.reclaim.deleteAllUnusedContainers()], ['images', () => o.reclaim.deleteUnusedImages()]] as const) {
      try {
        await run();
      } catch (err) {
        log.info('Eviction manager: unexpected error when attempting to reduce resource pressure', { resourceName: SIGNAL_RESOURCE[signal], reclaim: what, err: messageOf(err) });
      }
    }
    const after = await o.signals.read();
    return thresholdsMet(o.thresholds, makeObservations(after), true).length === 0;
  }

  /** Updates the thresholds and conditions from a reading; the threshold to act on, if any. */
  function observe(observations: Observations, now: number): Decision | undefined {
    let current = thresholdsMet(o.thresholds, observations, false);
    if (met.length > 0) current = mergeThresholds(current, thresholdsMet(met, observations, true));
    thresholdsFirstObserved = firstObservedAt(current, thresholdsFirstObserved, now);
    conditionsLastObserved = conditionsLastObservedAt(conditionsOf(current), conditionsLastObserved, now);
    setConditions(conditionsObservedSince(conditionsLastObserved, o.pressureTransitionPeriodMs, now));
    met = metGracePeriod(thresholdsFirstObserved, now);
    for (const e of thresholdsFirstObserved.values()) {
      if (now - e.at < e.threshold.gracePeriodMs) log.v(2, 'Eviction manager: eviction criteria not yet met', { signal: e.threshold.signal, threshold: e.threshold.value.text, durationMs: now - e.at });
    }
    const updated = thresholdsUpdatedStats(met, observations, lastObservations);
    lastObservations = observations;
    const ordered = byEvictionPriority(updated);
    const first = ordered[0];
    return first === undefined ? undefined : { threshold: first, observations, thresholds: ordered };
  }

  async function synchronize(): Promise<NodePod[]> {
    if (o.thresholds.length === 0 && !o.localStorageCapacityIsolation) return [];
    const reading = await o.signals.read();
    if (reading.errors.length > 0) log.v(2, 'Eviction manager: some signals cannot be read', { errors: reading.errors });
    if (dedicatedImageFs === undefined) {
      dedicatedImageFs = hasDedicatedImageFs(reading);
      ranks = rankFuncs(dedicatedImageFs === true);
      if (dedicatedImageFs !== undefined) log.v(2, 'Eviction manager: file systems', { dedicatedImageFs });
    }
    const decision = observe(makeObservations(reading), clock.now());
    const active = o.activePods();
    let stats: StatsOf | undefined;
    const readStats = async (): Promise<StatsOf> => (stats ??= statsFn(await o.podStats.podStats(o.monitoringPeriodMs ?? MONITORING_PERIOD_MS)));

    if (o.localStorageCapacityIsolation && active.some(hasLocalStorageLimits)) {
      try {
        const evicted = await localStorageEviction(active, await readStats());
        if (evicted.length > 0) return evicted;
      } catch (err) {
        log.error('Eviction manager: failed to get pod stats for the local storage limits', { err: messageOf(err) });
      }
    }
    if (decision === undefined) {
      log.v(3, 'Eviction manager: no resources are starved');
      return [];
    }
    const { threshold, observations } = decision;
    const resource = SIGNAL_RESOURCE[threshold.signal];
    log.info('Eviction manager: attempting to reclaim', { resourceName: resource });
    o.onNodeEvent?.({ type: 'Warning', reason: 'EvictionThresholdMet', message: `Attempting to reclaim ${resource}` });
    if (await reclaimNodeLevel(threshold.signal)) {
      log.info('Eviction manager: able to reduce resource pressure without evicting pods.', { resourceName: resource });
      return [];
    }
    log.info('Eviction manager: must evict pod(s) to reclaim', { resourceName: resource });
    const rank = ranks.get(threshold.signal);
    if (rank === undefined) return [];
    if (active.length === 0) {
      log.error('Eviction manager: eviction thresholds have been met, but no pods are active to evict');
      return [];
    }
    let ranked: NodePod[];
    try {
      ranked = rank(active, await readStats());
    } catch (err) {
      log.error('Eviction manager: failed to get pod stats to rank the pods', { err: messageOf(err) });
      return [];
    }
    log.info('Eviction manager: pods ranked for eviction', { pods: ranked.map(podNamespacedName) });
    for (const t of decision.thresholds) {
      const seen = observations.get(t.signal)?.time;
      if (seen !== undefined && seen > 0) o.metrics?.observeStatsAge(t.signal, (clock.now() - seen) / 1000);
    }
    const statsOf = await readStats();
    for (const pod of ranked) {
      const grace = isHard(threshold) ? IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS : softGrace(pod);
      const message = evictionMessage(resource, pod, statsOf, decision.thresholds, observations);
      if (await evictPod(pod, grace, message, true)) {
        o.metrics?.evicted(threshold.signal);
        return [pod];
      }
    }
    log.info('Eviction manager: unable to evict any pods from the node');
    return [];
  }

  /** Polls every second until every evicted pod released what it held, for at most 30 s. */
  async function waitForPodsCleanup(pods: readonly NodePod[]): Promise<void> {
    const deadline = clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (!stopper.signal.aborted) {
      await clock.sleep(POD_CLEANUP_POLL_MS, stopper.signal);
      if (pods.every((p) => o.podCleanedUp(p.metadata.uid))) {
        log.info('Eviction manager: pods successfully cleaned up', { pods: pods.map(podNamespacedName) });
        return;
      }
      if (clock.now() >= deadline) {
        log.info('Eviction manager: timed out waiting for pods to be cleaned up', { pods: pods.map(podNamespacedName) });
        return;
      }
    }
  }

  async function run(): Promise<void> {
    while (!stopper.signal.aborted) {
      let evicted: NodePod[] = [];
      try {
        evicted = await synchronize();
      } catch (err) {
        log.error('Eviction manager: failed to synchronize', { err: messageOf(err) });
      }
      if (evicted.length > 0) {
        log.info('Eviction manager: pods evicted, waiting for pod to be cleaned up', { pods: evicted.map(podNamespacedName) });
        await waitForPodsCleanup(evicted);
      } else {
        await clock.sleep(o.monitoringPeriodMs ?? MONITORING_PERIOD_MS, stopper.signal);
      }
    }
  }

  return {
    start() {
      loop ??= run();
    },
    async stop() {
      stopper.abort();
      await loop;
    },
    admit(pod) {
      if (conditions.length === 0 || isCriticalPod(pod)) return { admit: true };
      if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
        if (qosClass(pod) !== 'BestEffort') return { admit: true };
        const tolerates = (pod.spec?.tolerations ?? []).some((t) => toleratesTaint(t, { key: TAINT_NODE_MEMORY_PRESSURE, effect: 'NoSchedule' }));
        if (tolerates) return { admit: true };
      }
      log.info('Failed to admit pod to node', { pod: podNamespacedName(pod), nodeCondition: conditions });
      return { admit: false, reason: EVICTED_REASON, message: `The node had condition: [${conditions.join(' ')}]. ` };
    },
    conditions: () => conditions,
    synchronize,
  };
}
