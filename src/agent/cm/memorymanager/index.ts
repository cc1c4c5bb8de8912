/**
 * memorymanager: NUMA-placed memory and hugepages for Guaranteed pods (upstream's memory
 * manager): policies None and Static, `reservedMemory` validated against node allocatable, the
 * checkpointed state file, topology hints, and the NUMA nodes behind each container's
 * cpuset.mems.
 *
 * It owns: `<rootDir>/memory_manager_state` and the per-node accounting. It must not: write
 * cgroup files (the runtime applies cpuset.mems), or keep allocations of pods that are gone.
 */
export {
  CM_MEMORY_MANAGER_CONFIG, createMemoryManager, reservedMemoryByNode, type MemoryBlock, type MemoryManager, type MemoryManagerOptions, type MemoryReservation,
} from './manager.js';
export {
  CM_MEMORY_STATE_INVALID, MEMORY_MANAGER_STATE_FILE, decodeMemoryCheckpoint, encodeMemoryCheckpoint, openMemoryState,
  type Block, type MachineState, type MemoryAssignments, type MemoryState, type MemoryTable, type NUMANodeState,
} from './state.js';
export { StaticMemoryPolicy, containerRequests, hugepageResource, podRequests, type ReservedMemory } from './static-policy.js';
