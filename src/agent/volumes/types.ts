/**
 * The volume manager's types and error codes (see index.ts for what the module owns).
 */
import type { CSIVolumeSource, ConfigMap, Container, PersistentVolume, PersistentVolumeClaim, Secret } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';

/** A hostPath `type` check failed: the volume, the path, the expected and the found type are in the message. */
export const VOLUME_HOSTPATH_TYPE = 'VOLUME_HOSTPATH_TYPE';
/**
 * A volume type this node cannot set up: configMap, secret and serviceAccountToken (or projected
 * sources of them) without the API server, PVCs whose volume has a source other than local or
 * hostPath, other types, clusterTrustBundle projections,
 * HugePages media.
 */
export const VOLUME_UNSUPPORTED = 'VOLUME_UNSUPPORTED';
/** A pod, volume or volume mount this module cannot use as given (no UID, bad name, bad sizeLimit, ...). */
export const VOLUME_INVALID = 'VOLUME_INVALID';
/** A subPath that is absolute, has `..`, or resolves (through symlinks) outside its volume. */
export const VOLUME_SUBPATH_INVALID = 'VOLUME_SUBPATH_INVALID';
/** mount(8) or umount(8) failed, or a directory of the volume could not be made. */
export const VOLUME_MOUNT_FAILED = 'VOLUME_MOUNT_FAILED';
/** The configMap or secret a volume needs does not exist (and the volume or source is not optional). */
export const VOLUME_OBJECT_NOT_FOUND = 'VOLUME_OBJECT_NOT_FOUND';
/** An item of a configMap or secret volume names a key the object does not have (and is not optional). */
export const VOLUME_KEY_NOT_FOUND = 'VOLUME_KEY_NOT_FOUND';
/** Reading a configMap or secret from the API server failed (other than not found). */
export const VOLUME_OBJECT_UNAVAILABLE = 'VOLUME_OBJECT_UNAVAILABLE';
/** A service account token for a projected volume could not be had from the API server. */
export const VOLUME_TOKEN_UNAVAILABLE = 'VOLUME_TOKEN_UNAVAILABLE';
/** Writing the files of a configMap, secret, projected or downwardAPI volume failed. */
export const VOLUME_WRITE_FAILED = 'VOLUME_WRITE_FAILED';
/** A pod directory could not be removed: a mount stayed below it, or the removal failed. */
export const VOLUME_CLEANUP_FAILED = 'VOLUME_CLEANUP_FAILED';

/** A persistentVolumeClaim volume's claim is missing, terminating, unbound, or its volume is bound to another claim (retried). */
export const VOLUME_CLAIM_NOT_BOUND = 'VOLUME_CLAIM_NOT_BOUND';
/** Reading a claim or a persistent volume from the API server failed (other than not found). */
export const VOLUME_CLAIM_UNAVAILABLE = 'VOLUME_CLAIM_UNAVAILABLE';

export type VolumeKind = 'hostPath' | 'emptyDir' | 'configMap' | 'secret' | 'projected' | 'downwardAPI' | 'persistentVolumeClaim' | 'csi' | 'ephemeral' | 'flexVolume';

/**
 * Where configMap and secret volumes read their objects (from the API server, usually through a
 * cache). Resolves undefined when the object does not exist; rejects on any other failure.
 */
export interface VolumeObjectSource {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
}

/**
 * Where persistentVolumeClaim volumes read their claim and its bound volume (the API server).
 * Resolves undefined when the object does not exist; rejects on any other failure.
 */
export interface PersistentVolumeSource {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  volume(name: string): Promise<PersistentVolume | undefined>;
}

/** What a CSI volume of a pod comes from: a claim's bound PersistentVolume, or the pod's inline `csi` volume. */
export type CsiVolumeSource =
  | { readonly kind: 'persistent'; readonly volume: PersistentVolume; readonly readOnly: boolean; /** The bound claim (its status capacity decides a node expansion). */ readonly claim?: PersistentVolumeClaim }
  | { readonly kind: 'inline'; readonly source: CSIVolumeSource };

/** The CSI volume plugin (src/agent/csi): mounts a PV's csi source or an inline csi volume for a pod and tears a pod's CSI volumes down. */
export interface CsiVolumePlugin {
  /**
   * Lifecycle mode check, attach wait, stage and publish; returns the pod's mount directory of the
   * volume. Idempotent (a mounted target is returned at once). Throws an OrchError naming the volume.
   */
  setUp(pod: NodePod, podUID: string, volumeName: string, source: CsiVolumeSource): Promise<string>;
  /** Unpublishes each CSI volume of the pod (found from its directory's vol_data.json), and unstages those no other pod uses. */
  tearDown(podUID: string): Promise<void>;
}

/** A flexVolume source to mount for a pod: a pod's `flexVolume` volume or a PV's `spec.flexVolume` (upstream's volume.Spec of the flex plugin). */
export interface FlexVolumeRequest {
  /** The pod's volume name (inline) or the PV's name: the volume's directory and the driver's `orch.io/pvOrVolumeName`. */
  readonly specName: string;
  /** The pod's volume name, named in errors. */
  readonly volumeName: string;
  readonly driver: string;
  readonly fsType: string;
  readonly options: Readonly<Record<string, string>>;
  /** A PV's secretRef has a namespace; a pod volume's is the pod's. */
  readonly secretRef: { readonly name: string; readonly namespace?: string } | undefined;
  readonly readOnly: boolean;
  /** The field errors are about (`spec.volumes[0].flexVolume`). */
  readonly subject: string;
}

/** The FlexVolume plugin (src/agent/flexvolume): runs the driver's calls to mount a pod's flexVolume and to tear a pod's FlexVolumes down. */
export interface FlexVolumePlugin {
  /**
   * Mounts the volume at `<rootDir>/pods/<uid>/volumes/<vendor>~<driver>/<specName>` (attaching
   * first when the driver attaches) and returns that directory. Idempotent: a volume mounted
   * already is not mounted again. A failure leaves no directory and no mount behind; throws an
   * OrchError naming the volume, the driver and the call.
   */
  setUp(pod: NodePod, podUID: string, request: FlexVolumeRequest): Promise<string>;
  /** Unmounts each FlexVolume of the pod (found from its directory, so it works after a restart) and removes its directory; detaches after the last pod. Idempotent. */
  tearDown(podUID: string): Promise<void>;
}

/** What a serviceAccountToken projection asks for. */
export interface ServiceAccountTokenRequest {
  /** '' : the API server's audiences. */
  readonly audience: string;
  readonly expirationSeconds: number;
}

/** Where projected volumes get the tokens of the pods' service accounts (the token manager, tokens.ts). */
export interface ServiceAccountTokenSource {
  /** A token of the pod's service account bound to the pod; a kept one while it is fresh. Throws VOLUME_TOKEN_UNAVAILABLE. */
  token(pod: NodePod, request: ServiceAccountTokenRequest): Promise<string>;
  /** Forgets the tokens of a pod that is gone. Idempotent. */
  forgetPod(uid: string): void;
}

/** What unset container limits mean to downwardAPI resourceFieldRefs (the node's allocatable). */
export type { NodeCapacity } from '../../api/node-capacity.js';

/** One prepared volume of a pod. */
export interface PodVolume {
  readonly kind: VolumeKind;
  /** The directory (or file, for hostPath files and sockets) on the host. */
  readonly hostPath: string;
  /** True when the volume itself is read-only: configMap, secret, projected and downwardAPI volumes are (as upstream). */
  readonly readOnly: boolean;
  /** emptyDir only: `Memory` when the directory is a tmpfs. */
  readonly medium?: 'Memory';
  /**
   * emptyDir only: sizeLimit in bytes. A tmpfs gets it as its `size=`; for a disk-backed
   * emptyDir it is only recorded here, and the eviction manager enforces it (local storage limits).
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
   * volume: hostPath type checks, emptyDir directories, tmpfs mounts, and the files of
   * configMap, secret, projected and downwardAPI volumes. Idempotent: a second call for the same
   * pod returns the same paths and mounts nothing twice (calls for one pod are serialized).
   *
   * Each call also refreshes the files of configMap, secret, projected and downwardAPI volumes
   * from the current objects and the given pod (labels, annotations): the pod sync calls it at
   * least every syncFrequency, which is how updates reach running pods, as upstream. Files are
   * rewritten (atomically) only when their content or mode changed. When a refresh of a volume
   * that was already written fails, the error is logged and the previous content kept.
   *
   * Throws OrchError `VOLUME_UNSUPPORTED`, `VOLUME_INVALID` (before touching the disk),
   * `VOLUME_HOSTPATH_TYPE`, `VOLUME_MOUNT_FAILED`, `VOLUME_OBJECT_NOT_FOUND`,
   * `VOLUME_KEY_NOT_FOUND`, `VOLUME_OBJECT_UNAVAILABLE` or `VOLUME_WRITE_FAILED`.
   */
  preparePodVolumes(pod: NodePod): Promise<PodVolumes>;
  /**
   * Unmounts everything mounted below `<rootDir>/pods/<podUID>` (found in mountinfo, so it also
   * works after a crash), retrying a busy unmount until a deadline and then detaching it lazily,
   * and removes the pod directory without following symlinks out of it. A missing directory is
   * not an error (idempotent). Throws `VOLUME_CLEANUP_FAILED` when a mount remains.
   */
  cleanupPodVolumes(podUID: string): Promise<void>;
  /** The UIDs that have a directory under `<rootDir>/pods` (for orphan cleanup), sorted. */
  listPodDirs(): Promise<string[]>;
  /**
   * The runtime mounts of one container going into `sandbox`: its volumeMounts resolved against
   * the volumes the pod's last preparePodVolumes made (prepared now when there are none), and the
   * pod's managed /etc/hosts, written once per sandbox with the sandbox's IPs (not for a
   * host-network pod). Throws as preparePodVolumes, `VOLUME_SUBPATH_INVALID`, or the write's error.
   */
  mountsFor(pod: NodePod, container: Container, sandbox: { readonly id: string; readonly podIPs: readonly string[] }): Promise<Mount[]>;
  /** The container's directory on the host, `<rootDir>/pods/<uid>/containers/<name>` (made by preparePodVolumes). */
  containerDir(pod: NodePod, container: Container): string;
}
