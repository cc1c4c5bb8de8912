/**
 * nodestatus: the agent's Node in the API server — registration (POST /api/v1/nodes, or the
 * reconciliation of an existing Node's agent-owned labels and annotation), the node status
 * (capacity, allocatable, conditions, addresses, nodeInfo, images, daemon endpoint; PATCHed on
 * /status when it changed or every nodeStatusReportFrequency) and the node Lease in
 * orch-node-lease (renewed every quarter of nodeLeaseDurationSeconds). Heartbeats (status,
 * lease) are sent with `exempt: true`.
 *
 * Owns: building the Node and Lease objects, the allocatable arithmetic, condition transitions
 * and their events, the retry and back-off of these writes, reading the machine's identity
 * files (/proc/meminfo, /etc/machine-id, …; paths injectable).
 * Must not: import the CRI client, PLEG or eviction manager (their facts come through
 * NodeFacts), record events itself (it calls onEvent), validate the configuration (config does),
 * or write any other object. Its loops never throw; stop() ends them.
 */
export {
  EVENT_REASONS, OWNED_CONDITIONS, READY_MESSAGE, REASONS, REQUIRED_CAPACITY,
  aggregate, computeConditions, readyProblems, type ComputedConditions, type ConditionInputs,
} from './conditions.js';
export { Backoff, silentLogger } from './backoff.js';
export {
  LEASE_API_VERSION, LEASE_NAMESPACE, NODE_LEASE_UPDATE_FAILED, RENEW_INTERVAL_FRACTION,
  createLeaseController, leasePath, leasesPath, type LeaseController, type LeaseControllerOptions,
} from './lease.js';
export {
  DEFAULT_MACHINE_PATHS, NODE_MACHINE_INFO_UNREADABLE, goArch, readMachineInfo,
  type MachineInfo, type MachineInfoOptions, type MachinePaths,
} from './machine.js';
export {
  ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH, DEFAULT_LABELS, LABEL_ARCH, LABEL_HOSTNAME, LABEL_OS,
  TAINT_UNSCHEDULABLE, initialNode, type NodeIdentity,
} from './node-object.js';
export { NODES_PATH, nodePath, nodeStatusPath, type Registered } from './registration.js';
export {
  NODE_RESOURCE_INVALID, allocatableOf, capacityOf, formatAmounts, podCapacity, type ReservationConfig,
} from './resources.js';
export type { StatusConfig } from './status.js';
export {
  NODE_STATUS_UPDATE_RETRY, createNodeStatusController,
  type NodeStatusController, type NodeStatusControllerOptions,
} from './status-controller.js';
export type {
  ExtendedResources, NodeEvent, NodeEventHook, NodeFacts, NodeImage, NodePressure, NodeStatusLogger, RuntimeCondition,
  RuntimeStatus, WireLease, WireNode, WireNodeStatus, WireNodeSystemInfo,
} from './types.js';
export { runtimeNodeFacts, type RuntimeFactsSource } from './runtime-facts.js';
