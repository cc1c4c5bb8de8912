/**
 * cm (container manager): the cgroups and node resources of the agent, as upstream's container
 * manager:
 *
 * - the pod cgroups: each pod's QoS class, its cgroup parent for CRI, and the `pod<uid>`
 *   directories in every mounted hierarchy (cgroup v1 controllers and the unified cgroup2
 *   hierarchy), below the QoS cgroups `orchpods`, `orchpods/burstable`, `orchpods/besteffort`
 *   (cgroupfs or systemd naming), with the pod-level limits (CPU shares, CFS quota, memory limit,
 *   pids.max from podPidsLimit) and the QoS cgroups' CPU shares and, with qosReserved, memory limits;
 * - node allocatable: the pods cgroup's limits (capacity minus the reservations when `pods` is
 *   enforced), the system- and orch-reserved cgroups' limits, reservedSystemCPUs, and the
 *   reservation node status subtracts (--experimental-allocatable-ignore-eviction honoured);
 * - the CPU, memory and topology managers (cpumanager/, memorymanager/, topologymanager/),
 *   reading the machine from sysfs (machine/) and keeping their state files (checkpoint/);
 * - the device manager (devicemanager/): device plugins, their devices and who holds them;
 * - the agent, the runtime and the root cgroup's processes moved into nodeagentCgroups,
 *   --runtime-cgroups and systemCgroups;
 * - the settings this node's cgroups cannot honour, refused at start (host-cgroups.ts).
 *
 * It owns: mkdir and rmdir of cgroup directories under the configured cgroup root and of the
 * named system cgroups, copying cpuset.cpus/cpuset.mems into the cgroups it makes, writing the
 * limit files of the cgroups it made or was told to enforce, moving the processes named above
 * into their cgroups, the state files cpu_manager_state and memory_manager_state, and the
 * device-plugins directory (devicemanager/ says what it does there).
 *
 * It must not: touch cgroups it was not told about, move any other process, kill processes,
 * remove a cgroup any other way than rmdir, or call the runtime except through the calls it is
 * handed (the running containers and their cpuset update).
 */
export {
  CM_INVALID,
  POD_CGROUPS_ROOT,
  driverName,
  fsComponents,
  isCgroupDriver,
  cgroupConfigOf,
  podCgroupParent,
  qosCgroupName,
  systemdSliceName,
  type CgroupConfig,
  type CgroupDriver,
  type CgroupName,
} from './cgroup-name.js';
export { CM_NO_CGROUPS, cgroupHierarchies, discoverCgroupHierarchies, type CgroupHierarchy } from './hierarchies.js';
export { CM_CGROUP_BUSY, CM_CGROUP_FAILED, createPodCgroups, type PodCgroups, type PodCgroupsOptions } from './pod-cgroups.js';
export {
  DEFAULT_CFS_PERIOD_US,
  MIN_SHARES,
  cgroupFiles,
  milliCpuToShares,
  podResourceConfig,
  qosCpuShares,
  sharesToWeight,
  type PodResourceSettings,
  type ResourceConfig,
} from './pod-resources.js';
export {
  ADMIT, AdmissionError, CM_ADMISSION_REFUSED, CM_ALLOCATION_FAILED, SMT_ALIGNMENT_ERROR, TOPOLOGY_AFFINITY_ERROR, UNEXPECTED_ADMISSION_ERROR,
  type AdmitResult,
} from './admission.js';
export { CM_CPUSET_INVALID, CPUSet } from './cpuset.js';
export {
  allocatableAbsolute, allocatableReservation, effectiveReserved, podsCgroupConfig, reservedCgroupConfig, statusReservation,
  type NodeResources, type ReservationSettings,
} from './node-allocatable.js';
export { CM_NODE_ALLOCATABLE, FAILED_NODE_ALLOCATABLE_ENFORCEMENT, NODE_ALLOCATABLE_ENFORCED, type NodeEventSink } from './enforce-allocatable.js';
export { CM_CGROUP_V2_REQUIRED, cgroupV2Problems, containerSwap, hostCgroupFacts, type ContainerSwap, type HostCgroupFacts } from './host-cgroups.js';
export { CM_SYSTEM_CGROUPS, procProcessTable, type ProcessTable } from './system-cgroups.js';
export { qosMemoryLimits, qosReservedPercent, type QosMemoryReserve } from './qos-reserve.js';
export {
  createContainerManager, nodeResourcesOf,
  type Activity, type ContainerManager, type ContainerManagerDeps, type ContainerManagerSettings, type Prepared,
} from './container-manager.js';
export type { ResourceAssignments } from './resource-managers.js';
export type { MemoryBlock } from './memorymanager/index.js';
export {
  API_VERSION as DEVICE_PLUGIN_API_VERSION, CHECKPOINT_FILE as DEVICE_CHECKPOINT_FILE, DEVICE_ALLOCATION_FAILED, DEVICE_CDI_UNSUPPORTED,
  DEVICE_MANAGER_NOT_STARTED, DEVICE_PLUGIN_CALL_FAILED, DEVICE_PLUGIN_UNREACHABLE, DEVICE_PRE_START_FAILED, DEVICE_REGISTRATION_INVALID,
  DEVICE_REGISTRATION_SERVER_FAILED, ENDPOINT_STOP_GRACE_MS, REGISTRATION_SOCKET as DEVICE_REGISTRATION_SOCKET, createDeviceManager, runtimeSupportsCDI,
  type ContainerDeviceSource, type DeviceCapacity, type DeviceHintProvider, type DeviceManager, type DeviceManagerOptions, type DeviceNodeFacts,
  type DevicePluginHandler, type DevicePodResources, type DeviceRunOptions, type DeviceStartContext, type ListedDevice, type PluginDialer,
} from './devicemanager/index.js';
export { CM_CPU_MANAGER_CONFIG, CM_CPU_POLICY_OPTION, CM_CPU_STATE_INVALID, CPU_MANAGER_STATE_FILE } from './cpumanager/index.js';
export { CM_MEMORY_MANAGER_CONFIG, CM_MEMORY_STATE_INVALID, MEMORY_MANAGER_STATE_FILE } from './memorymanager/index.js';
export { CM_TOPOLOGY_UNSUPPORTED } from './topologymanager/index.js';
export { CM_TOPOLOGY_UNREADABLE } from './machine/index.js';
export { CM_CHECKPOINT_FAILED } from './checkpoint/index.js';
export { checkpointError, field, fnv32a, goDump, goInt, goString, parseCheckpoint, readCheckpoint, writeCheckpoint, type GoValue } from './checkpoint/index.js';
