/**
 * eviction: the eviction manager (upstream's pkg/kubelet/eviction). It watches the node's
 * signals (memory.available, allocatableMemory.available, nodefs.available, nodefs.inodesFree,
 * imagefs.available, imagefs.inodesFree, pid.available) every 10 s against the hard and soft
 * thresholds of the configuration, reports MemoryPressure, DiskPressure and PIDPressure (kept
 * for evictionPressureTransitionPeriod after the last threshold clears), refuses pods at
 * admission under pressure, reclaims node-level resources (container and image GC) before
 * pods for disk, and evicts at most one pod per pass, ranked as upstream ranks them; with
 * localStorageCapacityIsolation it also evicts pods past their emptyDir sizeLimit or
 * ephemeral-storage limits.
 *
 * Owns: the thresholds, the signal readers (statfs, the memory cgroups, /proc), the pressure
 * conditions and their transition period, the ranking, the eviction messages and its metrics.
 * Must not: kill containers itself (the pod terminator goes through the pod workers), write the
 * node status (nodestatus reads `conditions()`), or decide the pods' stats (the servers' stats
 * provider measures them).
 *
 * Error codes: EVICTION_THRESHOLD_INVALID (a threshold, grace period or minimum reclaim of the
 * configuration), EVICTION_KILL_TIMEOUT (an evicted pod was still terminating after the wait).
 */
export {
  EVICTED_REASON, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, MONITORING_PERIOD_MS, createEvictionManager,
  type AdmitResult, type EvictionManager, type EvictionManagerOptions,
} from './manager.js';
export {
  evictionSettings, memoryCgroupDirs,
  type EvictionConfig, type EvictionSettings,
} from './config.js';
export { EVICTION_THRESHOLD_INVALID, parseThresholds, thresholdQuantity, type ThresholdConfig } from './thresholds.js';
export { createSignalReader, type SignalReaderOptions } from './readers.js';
export { makeObservations } from './observations.js';
export { evictionMessage, isCriticalPod, localVolumeNames, rankFuncs } from './rank.js';
export { localStorageViolation, podStorageLimit, type LocalStorageViolation } from './local-storage.js';
export { createEvictionMetrics, type EvictionMetrics } from './metrics.js';
export { EVICTION_KILL_TIMEOUT, createPodTerminator, type PodTerminatorDeps } from './terminator.js';
export type {
  EvictionEvent, NodeReadings, NodeReclaim, Observation, PodStatsSource, PodStatsView, PodTerminator, PressureCondition, Signal,
  SignalReader, TerminateOptions, Threshold,
} from './types.js';
