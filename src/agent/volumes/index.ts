/**
 * volumes: the volume manager — hostPath (with upstream's `type` checks), emptyDir (a directory,
 * or a tmpfs for medium Memory), downwardAPI, and, given an object source (the API server),
 * configMap, secret (on the node's tmpfs) and projected (configMap, secret, downwardAPI and
 * serviceAccountToken sources, on the node's tmpfs: memory-volumes.ts) volumes written by the atomic writer (`..data` →
 * `..<timestamp>`, as upstream) and refreshed on every preparePodVolumes call when their content
 * changed — plus the pod's directories on disk (`<rootDir>/pods/<uid>/...`), its managed
 * /etc/hosts, and the resolution of a container's volumeMounts into runtime mounts (readOnly,
 * subPath, subPathExpr, propagation). Also the two sources API-server mode injects: the object
 * manager (ConfigMaps and Secrets of the registered pods, read by
 * configMapAndSecretChangeDetectionStrategy: Get, Cache or Watch) and the token manager (service
 * account tokens bound to pods, renewed at 80 % of their lifetime), both over an injected
 * RestClient. persistentVolumeClaim and generic ephemeral volumes (given a claim source): the
 * claim's bound volume, checked as upstream (claimRef UID; an ephemeral volume's claim owned by
 * the pod), whose local or hostPath source is used in place and whose csi source, like inline
 * csi volumes, goes to the injected CSI plugin. Also the helpers the volume plugins share:
 * setVolumeOwnership (a pod's fsGroup on a mounted volume, as upstream's) and the busy-retrying
 * unmount.
 *
 * It owns: creating and removing `<rootDir>/pods/<uid>` and `<rootDir>/memory-volumes/<uid>`,
 * mounting the node's tmpfs at `<rootDir>/memory-volumes`, mounting and unmounting tmpfs below a pod
 * (mount(8)/umount(8) through execFile, never a shell), writing the files of configMap, secret,
 * projected and downwardAPI volumes, reading /proc/self/mountinfo, and which ConfigMaps,
 * Secrets and tokens the agent keeps or watches.
 *
 * It must not: delete or modify anything outside `<rootDir>/pods` and `<rootDir>/memory-volumes` (hostPath volumes are only
 * checked or created, never removed; symlinks are never followed out of a pod directory but for
 * the links of its secret and projected volumes to the node tmpfs), reach
 * the API server but through the RestClient given to the object and token managers and the
 * claim source (without them, configMap, secret, serviceAccountToken and persistentVolumeClaim
 * volumes fail with `VOLUME_UNSUPPORTED`), support PVs of other sources, block volumes
 * (`volumeDevices`, refused naming the volume), clusterTrustBundle projections and other types, enforce emptyDir sizeLimit on
 * disk (eviction's job), or decide when a pod's data may go (the pod workers and orphan cleanup
 * call cleanupPodVolumes).
 */
export {
  VOLUME_CLAIM_NOT_BOUND,
  VOLUME_CLAIM_UNAVAILABLE,
  VOLUME_CLEANUP_FAILED,
  VOLUME_HOSTPATH_TYPE,
  VOLUME_INVALID,
  VOLUME_KEY_NOT_FOUND,
  VOLUME_MOUNT_FAILED,
  VOLUME_OBJECT_NOT_FOUND,
  VOLUME_OBJECT_UNAVAILABLE,
  VOLUME_SUBPATH_INVALID,
  VOLUME_TOKEN_UNAVAILABLE,
  VOLUME_UNSUPPORTED,
  VOLUME_WRITE_FAILED,
  type Mount,
  type MountPropagation,
  type CsiVolumePlugin,
  type FlexVolumePlugin,
  type FlexVolumeRequest,
  type CsiVolumeSource,
  type NodeCapacity,
  type PersistentVolumeSource,
  type PodVolume,
  type PodVolumes,
  type ServiceAccountTokenRequest,
  type ServiceAccountTokenSource,
  type VolumeKind,
  type VolumeManager,
  type VolumeObjectSource,
} from './types.js';
export { createVolumeManager, type VolumeManagerOptions } from './manager.js';
export { createClaimSource, createSecretReader } from './persistent.js';
export { DEFAULT_UNMOUNT_RETRY_MS, DEFAULT_UNMOUNT_TIMEOUT_MS, unmount, type UnmountOptions } from './mounter.js';
export { requiresPermissionChange, setVolumeOwnership, type OwnershipOptions } from './ownership.js';
export {
  createObjectManager, nodeObjectTtlMs, DEFAULT_OBJECT_CACHE_TTL_MS, DEFAULT_WATCH_SYNC_TIMEOUT_MS, OBJECT_TTL_ANNOTATION, type ChangeDetectionStrategy, type NodeAnnotations, type ObjectManager, type ObjectManagerOptions,
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
export { DEFAULT_TOKEN_EXPIRATION_SECONDS } from './projected.js';
export { createTokenManager, MAX_TOKEN_AGE_MS, REFRESH_AT, type TokenManagerOptions } from './tokens.js';
export { HOST_PATH_TYPES, type HostPathType } from './host-path.js';
export {
  isAtOrBelow,
  MOUNTINFO_PATH,
  parseMountInfo,
  readMountInfo,
  readMountInfoBelow,
  VOLUME_MOUNTINFO_INVALID,
  type MountInfoEntry,
} from './mountinfo.js';
