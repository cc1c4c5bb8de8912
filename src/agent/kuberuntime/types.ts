/**
 * The runtime manager's view of pods: what the runtime (through CRI) holds for one pod, the
 * result of one sync pass, and the interface the pod workers and the PLEG use. This is the
 * seam between the pod lifecycle (podworkers, status) and the CRI (runtime/cri).
 */
import type { NodePod } from '../../api/pod/index.js';

/**
 * Why a container is waiting, or why a sync failed: the reasons users see in the pod status
 * (a typed union, never free text).
 */
export type ContainerWaitingReason =
  | 'ContainerCreating'
  | 'PodInitializing'
  | 'CrashLoopBackOff'
  | 'ErrImagePull'
  | 'ImagePullBackOff'
  | 'ErrImageNeverPull'
  | 'ImageInspectError'
  | 'InvalidImageName'
  | 'CreateContainerConfigError'
  | 'CreateContainerError'
  | 'RunContainerError'
  | 'PreStartHookError'
  | 'PostStartHookError';

/**
 * Why a sync pass failed for the pod as a whole (no `container` in the SyncError), as
 * upstream's kubecontainer errors name them.
 */
export type PodSyncFailureReason = 'CreatePodSandboxError' | 'ConfigPodSandboxError' | 'KillPodSandboxError' | 'KillContainerError';

/** Why a container terminated, as shown in its terminated state. */
export type ContainerTerminatedReason = 'Completed' | 'Error' | 'OOMKilled' | 'ContainerCannotRun' | 'DeadlineExceeded' | 'StartError';

export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** One container instance (one attempt) as the runtime reports it. Times in ms since the epoch (0: unset). */
export interface RuntimeContainerStatus {
  readonly id: string;
  /** The container's name in the pod spec. */
  readonly name: string;
  readonly state: RuntimeContainerState;
  readonly createdAt: number;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly exitCode: number;
  /** The runtime's reason (e.g. OOMKilled, Completed, Error). */
  readonly reason: string;
  readonly message: string;
  /** The image as the spec named it. */
  readonly image: string;
  /** The image ID the runtime resolved (sha256:...). */
  readonly imageRef: string;
  /** The attempt number, from the container's annotations. */
  readonly restartCount: number;
  /** The hash of the container spec this instance was created from. */
  readonly hash: string;
  /** The hash of that spec without its resources ('' for instances made before it was recorded). */
  readonly hashWithoutResources?: string;
  /** True for an init container (from labels/annotations). */
  readonly init: boolean;
  /** True for an ephemeral container (from its labels). */
  readonly ephemeral?: boolean;
}

export interface RuntimeSandboxStatus {
  readonly id: string;
  readonly state: 'ready' | 'notready';
  readonly createdAt: number;
  readonly attempt: number;
  /** Primary IP first; empty for host-network sandboxes (the node's IPs apply). */
  readonly ips: readonly string[];
  readonly hostNetwork: boolean;
}

/** Everything the runtime holds for one pod, newest first. */
export interface RuntimePodStatus {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  /** The pod's IPs from its newest ready sandbox. */
  readonly ips: readonly string[];
  readonly sandboxes: readonly RuntimeSandboxStatus[];
  /** Every container instance of the pod (all attempts), newest first. */
  readonly containers: readonly RuntimeContainerStatus[];
  /** When this status was read (ms since the epoch). */
  readonly timestamp: number;
}

/** A pod as found in the runtime by its labels, without its spec (for orphans and /runningpods). */
export interface RunningPod {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly sandboxIds: readonly string[];
  readonly containers: readonly { readonly id: string; readonly name: string; readonly state: RuntimeContainerState; readonly image: string }[];
}

/**
 * A problem of one sync pass for one container (reason: a ContainerWaitingReason), or for the
 * pod as a whole when `container` is absent (reason: a PodSyncFailureReason, or a waiting
 * reason that applies to no single container).
 */
export interface SyncError {
  readonly container?: string;
  readonly reason: ContainerWaitingReason | PodSyncFailureReason;
  readonly message: string;
}

export interface PodSyncResult {
  readonly errors: readonly SyncError[];
  /**
   * Sync again after this many milliseconds: the shortest time left of a restart back-off
   * (CrashLoopBackOff) or an image pull back-off (ErrImagePull, ImagePullBackOff). Absent
   * when nothing waits on a back-off.
   */
  readonly requeueAfterMs?: number;
  /**
   * What the runtime holds for the pod after the sync, when the sync knows exactly what that is
   * (a pod that held nothing: the sandbox and containers it made, their statuses read as
   * getPodStatus reads them): the caller publishes it instead of reading the pod again.
   */
  readonly status?: RuntimePodStatus;
}

/**
 * The runtime manager: makes the runtime match one pod's spec, kills pods, and reads what the
 * runtime holds. Methods block until the runtime answered; CRI failures become SyncErrors or
 * rejected promises as documented; none of them throws synchronously.
 */
export interface PodRuntimeManager {
  /**
   * One pass of the sync: sandbox (created or recreated when it is gone or its network
   * changed), image pulls by policy, init containers one at a time, then the containers;
   * containers whose spec hash changed are killed and recreated; restarts follow the
   * restart policy and the back-off. Idempotent: a pass with nothing to do does nothing.
   * Rejects only when the runtime is unreachable; everything else is in the result. Once
   * `signal` is aborted (the pod is being killed) no further container is started.
   */
  syncPod(pod: NodePod, status: RuntimePodStatus, signal?: AbortSignal): Promise<PodSyncResult>;
  /**
   * Stops every container of the pod with the grace period (the pod's
   * terminationGracePeriodSeconds, or `gracePeriodSeconds` when given: TERM, then KILL), then
   * stops the sandbox. `pod` is undefined for orphans. Idempotent.
   */
  killPod(running: RunningPod, options?: { readonly pod?: NodePod; readonly gracePeriodSeconds?: number }): Promise<void>;
  /** Removes the stopped containers and sandboxes of a pod. Idempotent. */
  removePod(uid: string): Promise<void>;
  /** What the runtime holds for the pod; an empty status when it holds nothing. */
  getPodStatus(uid: string, name: string, namespace: string): Promise<RuntimePodStatus>;
  /** Every pod the runtime holds that this agent created (by label), running or not. */
  listPods(): Promise<RunningPod[]>;
}
