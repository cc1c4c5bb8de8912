/**
 * controllers/nodelifecycle: what happens to nodes whose agents stop, and to their pods.
 * NodeLifecycleController (upstream's node-lifecycle-controller) marks a node whose Lease and
 * status heartbeat stopped for the grace period Unknown, keeps its node.orch.io/ taints in line
 * with its conditions (unreachable and not-ready, NoSchedule and NoExecute; the pressure ones;
 * unschedulable) and marks its pods not Ready. TaintEvictionController (upstream's
 * taint-eviction-controller) deletes pods from nodes with NoExecute taints they do not
 * tolerate, honouring tolerationSeconds.
 *
 * Must not: write anything but node conditions and taints, pod conditions, pod deletions and
 * events; know zones (upstream's zone disruption handling is not done); touch the store.
 */
export { NodeLifecycleController, type NodeLifecycleOptions } from './monitor.js';
export { TaintEvictionController, evictionDelayMs, minTolerationMs, type TaintEvictionOptions } from './eviction.js';
export { desiredTaints, reconciledTaints, conditionStatus } from './taints.js';
