/**
 * cm (container manager): for now the pod part — each pod's QoS class, its cgroup parent for
 * CRI, and the `pod<uid>` cgroup directories in every mounted hierarchy (cgroup v1 controllers
 * and the unified cgroup2 hierarchy), below the QoS cgroups `orchpods`, `orchpods/burstable`,
 * `orchpods/besteffort` (cgroupfs or systemd naming); the pod-level limits (CPU shares, CFS
 * quota, memory limit, pids.max from podPidsLimit) and the QoS cgroups' CPU shares.
 *
 * It owns: mkdir and rmdir of cgroup directories under the configured cgroup root, copying
 * cpuset.cpus/cpuset.mems into the cgroups it makes, and writing the limit files of the pod and
 * QoS cgroups it made.
 *
 * It must not: set node allocatable limits on the pods root (a later issue), touch cgroups it
 * did not name (only `orchpods...` and `pod<uid>` below the root), move or kill processes, or
 * remove a cgroup any other way than rmdir.
 */
export { qosClass, type QOSClass } from './qos.js';
export {
  CM_INVALID,
  POD_CGROUPS_ROOT,
  driverName,
  fsComponents,
  isCgroupDriver,
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
