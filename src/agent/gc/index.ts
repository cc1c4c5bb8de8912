/**
 * gc: the agent's garbage collectors (upstream: kuberuntime's containerGC, images'
 * realImageGCManager and the kubelet's StartGarbageCollection). Container GC removes dead
 * containers past --minimum-container-ttl-duration beyond --maximum-dead-containers-per-container
 * and --maximum-dead-containers (with their log files), everything dead of pods that are gone,
 * dead sandboxes (not the newest of a pod still there) and the log directories under podLogsDir
 * of pods that are gone. Image GC removes unused images, least recently used first, when the
 * image file system passes imageGCHighThresholdPercent, down to imageGCLowThresholdPercent,
 * never one younger than imageMinimumGCAge, in use by a container, pinned, or a sandbox image
 * (--pod-infra-container-image, the runtime's sandbox image). Both run periodically in the
 * background; failures are logged, recorded as events and tried again at the next period.
 * Under disk pressure the eviction manager asks for more (upstream's DeleteAllUnusedContainers
 * and DeleteUnusedImages): the dead containers of terminated pods still wanted, and every
 * unused image old enough whatever the thresholds, run between the periodic passes.
 *
 * Owns: deciding what is garbage and removing it, the GC metrics. Must not: touch containers or
 * sandboxes without the agent's pod UID label, the newest dead instance of a container of a pod
 * still there (its status and `kubectl logs --previous` read it), a log directory of a pod the
 * runtime still holds, or block pod workers.
 *
 * Error codes: GC_CONTAINER_FAILED (removals of a container GC pass failed; each named),
 * GC_IMAGE_FREE_FAILED ("wanted to free X bytes, but freed Y bytes"), GC_IMAGE_FS_UNKNOWN (the
 * image file system cannot be found or measured).
 */
export { createContainerGC, GC_CONTAINER_FAILED, type ContainerGC, type ContainerGCOptions, type ContainerGCPassOptions, type ContainerGCResult, type GcRuntime } from './container-gc.js';
export type { ContainerGCPolicy, PodStates } from './container-plan.js';
export { createImageGC, GC_IMAGE_FREE_FAILED, GC_IMAGE_FS_UNKNOWN, type ImageGC, type ImageGCOptions, type ImageGCPolicy, type ImageGCResult } from './image-gc.js';
export { imageFsMountpoint, imageFsSource, type ImageFsSourceOptions, type ImageFsUsage } from './image-fs.js';
export { readRuntimeConfig, type RuntimeConfig } from './runtime-config.js';
export {
  createGarbageCollector, CONTAINER_GC_PERIOD_MS, IMAGE_GC_PERIOD_MS,
  type GarbageCollectionOptions, type GarbageCollector, type GcEvent, type GcEventReason,
} from './collector.js';
export { CONTAINER_GC_PERIOD_ENV, GC_INVALID_PERIOD, IMAGE_GC_PERIOD_ENV, gcPeriods, periodFromEnv, type Environment } from './periods.js';
export { createGcMetrics, type GcMetrics, type GcObject } from './metrics.js';
