/**
 * The prober's vocabulary: probe types and results (upstream: pkg/kubelet/prober/results), the
 * container view it probes from, the events it reports, and the interfaces its consumers use
 * (the per-pod sync feeds it and reads readiness; the runtime manager asks which containers
 * failed a liveness or startup probe).
 */
import type { NodePod } from '../../api/pod/index.js';

/** Upstream's probe type names, as they appear in events, logs and metrics. */
export type ProbeType = 'Liveness' | 'Readiness' | 'Startup';

/** A probe's verdict: warning counts as a success (upstream: a redirect to another host). */
export type ProbeResult = 'success' | 'warning' | 'failure' | 'unknown';

/** One probe run: the result and what the probe said (body, output or error). */
export interface ProbeOutcome {
  readonly result: ProbeResult;
  readonly output: string;
}

/** An event for the pod's event stream (upstream's recorder): logged now, connected later. */
export interface PodEvent {
  readonly type: 'Normal' | 'Warning';
  /** Upstream's reasons: Unhealthy, Killing, FailedPostStartHook, FailedPreStopHook, ... */
  readonly reason: string;
  readonly message: string;
  readonly pod: NodePod;
  readonly container?: string;
}

/** One instance of a container as the runtime holds it (kuberuntime's RuntimeContainerStatus has this shape). */
export interface ProbedContainer {
  readonly id: string;
  readonly name: string;
  readonly state: 'created' | 'running' | 'exited' | 'unknown';
  /** ms since the epoch; 0 when not started. */
  readonly startedAt: number;
  readonly init: boolean;
}

/** What the prober needs of a pod's runtime state: its IPs and its container instances, newest first. */
export interface ProbedPodState {
  /** The pod's IPs (the node's for host-network pods); probes without a host use the first. */
  readonly podIPs: readonly string[];
  readonly containers: readonly ProbedContainer[];
}

/** A stored result changed (the pod worker should sync: readiness or a liveness kill). */
export interface ProbeResultChange {
  readonly podUID: string;
  readonly container: string;
  readonly containerId: string;
  readonly probeType: ProbeType;
  readonly result: 'success' | 'failure';
}

/** The failing probe of a container instance that must be killed. */
export interface FailedProbe {
  readonly probe: 'liveness' | 'startup';
}

/** Read by the runtime manager, by container ID (upstream: the liveness and startup results managers). */
export interface ContainerProbeResults {
  /** The liveness or startup probe that failed for this instance, or undefined. Never blocks. */
  failedProbe(containerId: string): FailedProbe | undefined;
  /** True when the instance's startup probe succeeded, or when it has none. Never blocks. */
  started(containerId: string): boolean;
}

/** Readiness as the status computation takes it: by container name, only for probed containers. */
export interface PodProbeView {
  /** Ready by container name (false while the startup probe has not succeeded or readiness failed). */
  readiness(podUID: string): ReadonlyMap<string, boolean>;
  /** Started by container name, for containers with a startup probe. */
  startedContainers(podUID: string): ReadonlyMap<string, boolean>;
}

/**
 * The prober manager (upstream: prober.Manager): one worker per probe of each container.
 * `updatePod` may be called any number of times (after every sync); the others never block.
 */
export interface ProberManager extends ContainerProbeResults, PodProbeView {
  /**
   * Starts the workers of a pod's probes (idempotent; a changed probe restarts its worker) and
   * hands every worker the newest instance of its container. Never blocks, never throws.
   */
  updatePod(pod: NodePod, state: ProbedPodState): void;
  /** Stops the liveness and startup workers (the pod is terminating); readiness keeps running. */
  stopLivenessAndStartup(podUID: string): void;
  /** Stops every worker of the pod and forgets its results and metrics. Idempotent. */
  removePod(podUID: string): void;
  /** Calls `listener` with every change of a stored result: the pod should sync now (readiness, or a container to kill). Returns the unsubscribe function. */
  onResult(listener: (change: ProbeResultChange) => void): () => void;
  /** Stops every worker; resolves once no probe is running. */
  stop(): Promise<void>;
}
