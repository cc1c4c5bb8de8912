/**
 * The volume manager's types and error codes (see index.ts for what the module owns).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

/** A hostPath `type` check failed: the volume, the path, the expected and the found type are in the message. */
export const VOLUME_HOSTPATH_TYPE = 'VOLUME_HOSTPATH_TYPE';
/** A volume type that needs the API server (configMap, secret, projected, PVC, ...) or a medium not supported. */
export const VOLUME_UNSUPPORTED = 'VOLUME_UNSUPPORTED';
/** A pod, volume or volume mount this module cannot use as given (no UID, bad name, bad sizeLimit, ...). */
export const VOLUME_INVALID = 'VOLUME_INVALID';
/** A subPath that is absolute, has `..`, or resolves (through symlinks) outside its volume. */
export const VOLUME_SUBPATH_INVALID = 'VOLUME_SUBPATH_INVALID';
/** mount(8) or umount(8) failed, or a directory of the volume could not be made. */
export const VOLUME_MOUNT_FAILED = 'VOLUME_MOUNT_FAILED';
/** A pod directory could not be removed: a mount stayed below it, or the removal failed. */
export const VOLUME_CLEANUP_FAILED = 'VOLUME_CLEANUP_FAILED';

export type VolumeKind = 'hostPath' | 'emptyDir';

/** One prepared volume of a pod. */
export interface PodVolume {
  readonly kind: VolumeKind;
  /** The directory (or file, for hostPath files and sockets) on the host. */
  readonly hostPath: string;
  /** True when the volume itself is read-only (neither hostPath nor emptyDir ever is; kept for later types). */
  readonly readOnly: boolean;
  /** emptyDir only: `Memory` when the directory is a tmpfs. */
  readonly medium?: 'Memory';
  /**
   * emptyDir only: sizeLimit in bytes. A tmpfs gets it as its `size=`; for a disk-backed
   * emptyDir it is only recorded here, and the eviction manager enforces it (a later issue).
   */
  readonly sizeLimitBytes?: number;
}

/** Volume name → prepared volume. */
export type PodVolumes = ReadonlyMap<string, PodVolume>;

export type MountPropagation = 'None' | 'HostToContainer' | 'Bidirectional';

/** A mount for the runtime (CRI `Mount`). */
export interface Mount {
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readonly: boolean;
  /** Absent when the volume mount does not set mountPropagation (the runtime's default, private). */
  readonly propagation?: MountPropagation;
}

export interface VolumeManager {
  /**
   * Creates the pod's directories (pod dir, volumes, one dir per container) and sets up each
   * volume: hostPath type checks, emptyDir directories, tmpfs mounts. Idempotent: a second call
   * for the same pod returns the same paths and mounts nothing twice (calls for one pod are
   * serialized). Throws OrchError `VOLUME_UNSUPPORTED`, `VOLUME_INVALID` (before touching the
   * disk), `VOLUME_HOSTPATH_TYPE` or `VOLUME_MOUNT_FAILED`.
   */
  preparePodVolumes(pod: Pod): Promise<PodVolumes>;
  /**
   * Unmounts everything mounted below `<rootDir>/pods/<podUID>` (found in mountinfo, so it also
   * works after a crash), retrying a busy unmount until a deadline and then detaching it lazily,
   * and removes the pod directory without following symlinks out of it. A missing directory is
   * not an error (idempotent). Throws `VOLUME_CLEANUP_FAILED` when a mount remains.
   */
  cleanupPodVolumes(podUID: string): Promise<void>;
  /** The UIDs that have a directory under `<rootDir>/pods` (for orphan cleanup), sorted. */
  listPodDirs(): Promise<string[]>;
}
