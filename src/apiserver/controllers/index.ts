/**
 * controllers: the cluster's control loops inside orch-apiserver, on by default (--controllers),
 * run by one leader among the replicas that share a store (--leader-elect):
 *
 * - scheduler/: assigns unbound pods to nodes (pods/binding);
 * - nodelifecycle/: node-lifecycle-controller (Unknown conditions and taints for nodes whose
 *   agents stopped) and taint-eviction-controller (NoExecute taints delete pods);
 * - podgc/: pod-garbage-collector-controller (orphaned, stuck and surplus terminated pods);
 * - persistentvolume/: persistentvolume-binder-controller (claims bound to volumes, phases,
 *   reclaim); volumeprotection/: the claim and volume protection finalizers; attachdetach/:
 *   VolumeAttachments of CSI volumes and nodes' volumesAttached; ephemeral/: the claims of generic
 *   ephemeral volumes;
 * - loops.ts: which informers each loop reads, and how each is built;
 * - leaderelection/: the Lease the replicas elect a leader with;
 * - client/: what the loops read and write through (registry clients, informers, events).
 *
 * Must not: touch the store (every read and write goes through the registries), or serve HTTP.
 */
export { ControllerManager, type ControllerClients, type ControllerFeatures, type ControllerManagerOptions, type LeaderElectionOptions } from './manager.js';
export { CONTROLLER_NAMES, controllerEnabled, controllerListProblems, type ControllerName } from './selection.js';
export { registryClient } from './client/index.js';
export type { Binder } from './scheduler/index.js';
