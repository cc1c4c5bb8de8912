/**
 * volumes: the volume manager for the volumes that need no API server — hostPath (with upstream's
 * `type` checks) and emptyDir (a directory, or a tmpfs for medium Memory) — plus the pod's
 * directories on disk (`<rootDir>/pods/<uid>/...`), its managed /etc/hosts, and the resolution of
 * a container's volumeMounts into runtime mounts (readOnly, subPath, subPathExpr, propagation).
 *
 * It owns: creating and removing `<rootDir>/pods/<uid>`, mounting and unmounting tmpfs below it
 * (mount(8)/umount(8) through execFile, never a shell), and reading /proc/self/mountinfo.
 *
 * It must not: delete or modify anything outside `<rootDir>/pods` (hostPath volumes are only
 * checked or created, never removed; symlinks are never followed out of a pod directory), talk to
 * the API server (configMap, secret, projected, downwardAPI, PVC... are rejected with
 * `VOLUME_UNSUPPORTED` until a later issue), enforce emptyDir sizeLimit on disk (eviction's job),
 * or decide when a pod's data may go (the pod workers and orphan cleanup call cleanupPodVolumes).
 */
export {
  VOLUME_CLEANUP_FAILED,
  VOLUME_HOSTPATH_TYPE,
  VOLUME_INVALID,
  VOLUME_MOUNT_FAILED,
  VOLUME_SUBPATH_INVALID,
  VOLUME_UNSUPPORTED,
  type Mount,
  type MountPropagation,
  type PodVolume,
  type PodVolumes,
  type VolumeKind,
  type VolumeManager,
} from './types.js';
export { createVolumeManager, type VolumeManagerOptions } from './manager.js';
export { mountsFor, ETC_HOSTS_CONTAINER_PATH, type MountsForOptions } from './mounts.js';
export { etcHostsContent, podHostname, writeEtcHosts, type PodHostname, type WriteEtcHostsOptions } from './etc-hosts.js';
export { containerDir, emptyDirPath, etcHostsPath, podDir, EMPTY_DIR_PLUGIN_DIR } from './paths.js';
export { HOST_PATH_TYPES, type HostPathType } from './host-path.js';
export {
  isAtOrBelow,
  MOUNTINFO_PATH,
  parseMountInfo,
  readMountInfo,
  VOLUME_MOUNTINFO_INVALID,
  type MountInfoEntry,
} from './mountinfo.js';
