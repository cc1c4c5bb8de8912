/**
 * volumes: the volume manager — hostPath (with upstream's `type` checks), emptyDir (a directory,
 * or a tmpfs for medium Memory), downwardAPI, and, given an object source (the API server),
 * configMap, secret (on a tmpfs) and projected (configMap, secret and downwardAPI sources, on a
 * tmpfs) volumes written by the atomic writer (`..data` → `..<timestamp>`, as upstream) and
 * refreshed on every preparePodVolumes call when their content changed — plus the pod's
 * directories on disk (`<rootDir>/pods/<uid>/...`), its managed /etc/hosts, and the resolution of
 * a container's volumeMounts into runtime mounts (readOnly, subPath, subPathExpr, propagation).
 *
 * It owns: creating and removing `<rootDir>/pods/<uid>`, mounting and unmounting tmpfs below it
 * (mount(8)/umount(8) through execFile, never a shell), writing the files of configMap, secret,
 * projected and downwardAPI volumes, and reading /proc/self/mountinfo.
 *
 * It must not: delete or modify anything outside `<rootDir>/pods` (hostPath volumes are only
 * checked or created, never removed; symlinks are never followed out of a pod directory), talk to
 * the API server itself (objects come through the injected `objects` source; without it
 * configMap and secret volumes fail with `VOLUME_UNSUPPORTED`), issue service account tokens
 * (serviceAccountToken projections fail with `VOLUME_UNSUPPORTED`), support PVCs and other
 * types, enforce emptyDir sizeLimit on disk (eviction's job), or decide when a pod's data may go
 * (the pod workers and orphan cleanup call cleanupPodVolumes).
 */
export {
  VOLUME_CLEANUP_FAILED,
  VOLUME_HOSTPATH_TYPE,
  VOLUME_INVALID,
  VOLUME_KEY_NOT_FOUND,
  VOLUME_MOUNT_FAILED,
  VOLUME_OBJECT_NOT_FOUND,
  VOLUME_OBJECT_UNAVAILABLE,
  VOLUME_SUBPATH_INVALID,
  VOLUME_UNSUPPORTED,
  VOLUME_WRITE_FAILED,
  type Mount,
  type MountPropagation,
  type NodeCapacity,
  type PodVolume,
  type PodVolumes,
  type VolumeKind,
  type VolumeManager,
  type VolumeObjectSource,
} from './types.js';
export { createVolumeManager, type VolumeManagerOptions } from './manager.js';
export {
  createObjectManager, DEFAULT_OBJECT_CACHE_TTL_MS, DEFAULT_WATCH_SYNC_TIMEOUT_MS, type ChangeDetectionStrategy, type ObjectManager, type ObjectManagerOptions,
} from './object-manager.js';
export { podReferences, type PodReferences } from './object-references.js';
export { mountsFor, ETC_HOSTS_CONTAINER_PATH, type MountsForOptions } from './mounts.js';
export { etcHostsContent, podHostname, writeEtcHosts, type PodHostname, type WriteEtcHostsOptions } from './etc-hosts.js';
export {
  containerDir,
  emptyDirPath,
  etcHostsPath,
  podDir,
  volumeDir,
  CONFIG_MAP_PLUGIN_DIR,
  DOWNWARD_API_PLUGIN_DIR,
  EMPTY_DIR_PLUGIN_DIR,
  PROJECTED_PLUGIN_DIR,
  SECRET_PLUGIN_DIR,
} from './paths.js';
export { DATA_DIR_NAME, writeAtomically, type AtomicWriteOptions, type FileProjection, type Payload } from './atomic-writer.js';
export { SERVICE_ACCOUNT_TOKEN_UNSUPPORTED } from './projected.js';
export { HOST_PATH_TYPES, type HostPathType } from './host-path.js';
export {
  isAtOrBelow,
  MOUNTINFO_PATH,
  parseMountInfo,
  readMountInfo,
  VOLUME_MOUNTINFO_INVALID,
  type MountInfoEntry,
} from './mountinfo.js';
