/**
 * simulate: what makes one node agent a simulated node, so that many of them run in one process
 * against an API server with the agent's real code from the API client down (registration, node
 * status, lease, pod source, admission, pod workers, sync, status writer, events): the in-memory
 * runtime with start delays and per-pod scripts (annotations, as kwok's stages), no cgroups, no
 * volumes, and machine facts from flags.
 *
 * Must not: talk to a real container runtime, touch cgroups or mount anything, or know the
 * composition (src/cmd/simulate*.ts builds the nodes).
 */
export {
  EXEC_EXIT_CODE_ANNOTATION, EXIT_AFTER_ANNOTATION, EXIT_CODE_ANNOTATION, SimulatedRuntime, type SimulatedRuntimeOptions,
} from './runtime.js';
export { noCgroups, noVolumes, nodeCapacityOf, simulatedMachine, type SimulatedCapacity } from './parts.js';
export { nodeConnection, parseSimulateFlags, simulatedNodeIP, SIMULATE_USAGE, type SimulateFlags, type SimulateTaint } from './flags.js';
