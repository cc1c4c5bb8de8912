/**
 * controllers/scheduler: assigns unbound pods of the default scheduler name to nodes (upstream's
 * kube-scheduler with the default profile's filters and scores that our API has data for),
 * through the pods/binding subresource. Pods that fit nowhere get PodScheduled False (reason
 * Unschedulable) and a FailedScheduling event naming why each node failed, and are tried again
 * when nodes, bound pods, volumes, claims, classes or CSINodes change. Volumes (volumes.ts):
 * claims, ReadWriteOncePod, CSI attach limits, WaitForFirstConsumer binding.
 *
 * Must not: write anything but bindings, pod conditions, events and the volume binding's writes
 * (a volume's claimRef, a claim's selected node); touch the store.
 */
export { Scheduler, type Binder, type SchedulerOptions } from './scheduler.js';
export { fitErrorMessage, filterNode, NO_NODES_AVAILABLE, type FilterFailure } from './framework.js';
export { podInfo, type PodInfo } from './pod-info.js';
export { SchedulerVolumes, type SchedulerVolumesOptions, type VolumeCycle } from './volumes.js';
