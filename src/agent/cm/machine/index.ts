/**
 * machine: the CPU and NUMA topology of the node, read from sysfs below a root path (so tests
 * read recorded trees of 2- and 4-NUMA machines), and the queries the resource managers make of
 * it.
 *
 * It owns: reading devices/system/cpu and devices/system/node. It must not: write anything, or
 * cache beyond one reading (the container manager reads once at start, as upstream).
 */
export {
  CM_TOPOLOGY_UNREADABLE, readMachineTopology,
  type CPUInfo, type HugepageInfo, type MachineTopology, type NUMANodeInfo, type ReadTopologyOptions,
} from './sysfs.js';
export { CPUTopology } from './topology.js';
