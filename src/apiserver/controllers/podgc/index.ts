/**
 * controllers/podgc: removes the pods nothing else will finish (upstream's
 * pod-garbage-collector-controller): pods of deleted nodes, deleting pods bound to no node or
 * stuck on an unreachable or out-of-service node, and terminated pods beyond a threshold.
 *
 * Must not: delete a pod a node agent may still run, other than past its grace period on an
 * unreachable node; touch the store.
 */
export { PodGarbageCollector, type PodGcOptions } from './podgc.js';
