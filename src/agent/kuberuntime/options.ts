/**
 * What createRuntimeManager takes: the CRI capabilities it calls, the collaborators injected
 * from other modules (volumes, pod cgroups, node identity), the agent's settings that shape
 * sandboxes and containers, and the back-off and pull settings (with upstream's defaults).
 */
import type { Tracer } from '../../api/tracing/index.js';
import type { Container, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../api/clock.js';
import type { Logger } from '../logging/index.js';
import type { ContainerProbeResults, PodEvent } from '../prober/index.js';
import type { AuthConfig, ContainerService, ContainerUpdateService, ImageService, SandboxService, StatsService, StreamingService } from '../runtime/cri/index.js';
import type { BackOffSettings } from './backoff.js';
import type { DnsSettings } from './dns.js';
import type { NodeCapacity } from './env.js';
import type { ContainerCpuset } from './container-config.js';
import type { EnvObjectSource } from './env-sources.js';
import type { PodStatusCache } from './status-cache.js';
import type { NodePod } from '../../api/pod/index.js';

/** A mount of a container (the volume manager's Mount has this shape). */
export interface ContainerMount {
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readonly: boolean;
  /** Absent: the runtime's default (private). */
  readonly propagation?: 'None' | 'HostToContainer' | 'Bidirectional';
}

/** The volume manager as the runtime manager uses it. */
export interface ContainerVolumes {
  /**
   * The mounts of one container going into `sandbox` (its volume mounts, the pod's /etc/hosts
   * with the sandbox's IPs, ...), with the pod's volumes already prepared. Throws when they
   * cannot be made; the container then fails with CreateContainerConfigError.
   */
  mountsFor(pod: NodePod, container: Container, sandbox: { readonly id: string; readonly podIPs: readonly string[] }): Promise<readonly ContainerMount[]>;
  /**
   * A directory of this container on the host (upstream: `<root>/pods/<uid>/containers/<name>`)
   * where the agent creates each instance's termination-message file. Without it no
   * termination-message file is mounted.
   */
  containerDir?(pod: NodePod, container: Container): string;
}

/** What a container starts with to use its devices (upstream DeviceRunContainerOptions). */
export interface ContainerDeviceOptions {
  readonly envs: readonly { readonly name: string; readonly value: string }[];
  readonly mounts: readonly { readonly containerPath: string; readonly hostPath: string; readonly readOnly: boolean }[];
  /** Host device nodes, with the cgroup permissions (r, w, m) the container gets on them. */
  readonly devices: readonly { readonly containerPath: string; readonly hostPath: string; readonly permissions: string }[];
  readonly annotations: readonly { readonly name: string; readonly value: string }[];
  /** Fully qualified CDI device names. */
  readonly cdiDevices: readonly string[];
}

/** The device manager as the runtime manager uses it. */
export interface ContainerDeviceProvider {
  /**
   * The container's device options; undefined when it holds no devices. May wait for a device
   * plugin (PreStartContainer). Rejects to fail the container with CreateContainerConfigError.
   */
  containerDevices(pod: NodePod, container: Container): Promise<ContainerDeviceOptions | undefined>;
}

/** The runtime calls the manager makes (ExecSync: exec lifecycle hooks). */
export type ManagerRuntime = SandboxService & ContainerService & ContainerUpdateService & Pick<StreamingService, 'execSync'> & Partial<Pick<StatsService, 'containerStats'>>;
/** The image calls the manager makes. */
export type ManagerImages = Pick<ImageService, 'imageStatus' | 'pullImage'>;

/** The container runtime it drives, and the status cache in front of it. */
export interface RuntimeManagerRuntime {
  readonly runtime: ManagerRuntime;
  readonly images: ManagerImages;
  /** Keeps pods' statuses between reads while the PLEG vouches for them (status-cache.ts); absent: every read asks the runtime. */
  readonly statusCache?: PodStatusCache;
}

/** The node the pods run on: its name, IPs, capacity and DNS. */
export interface RuntimeManagerNode {
  /** The node's name (spec.nodeName of static pods). */
  readonly nodeName: string;
  /** The node's IPs, primary first (status.hostIP(s), and the pod IPs of host-network pods). */
  readonly hostIPs: () => readonly string[] | Promise<readonly string[]>;
  /** What unset limits mean to the downward API and the memory the OOM score is scaled by (default: this machine's CPUs and memory). */
  readonly nodeCapacity?: () => NodeCapacity;
  readonly dns: DnsSettings;
}

/** Image pulls: their parallelism, rate, back-off and credentials. */
export interface RuntimeManagerPulls {
  /** One image pull at a time (default true, as upstream). */
  readonly serializeImagePulls?: boolean;
  /** With serializeImagePulls false: pulls at once at most (default / 0: no limit). */
  readonly maxParallelImagePulls?: number;
  /** Pulls per second (default 5; 0: no limit), as upstream a pull above the rate fails. */
  readonly registryPullQPS?: number;
  /** Pulls allowed in a burst (default 10). */
  readonly registryBurst?: number;
  /** Image pull back-off (default 10 s doubling to 5 min). */
  readonly imageBackOff?: BackOffSettings;
  /**
   * Registry credentials for a pod's pulls from `repository` (its imagePullSecrets, then the
   * credential provider plugins'), tried in turn; absent or none: anonymous pulls.
   */
  readonly pullCredentials?: ((pod: NodePod, repository: string) => Promise<readonly AuthConfig[]>) | undefined;
}

/** How sandboxes and containers are made and restarted (the agent's settings). */
export interface RuntimeManagerContainers {
  /** Where pods' container logs go (default /var/log/pods). */
  readonly podLogsRoot?: string;
  /** Enforce CPU limits with CFS quota (default true). */
  readonly cpuCFSQuota?: boolean;
  /** The CFS period in nanoseconds (default 100 ms). */
  readonly cpuCFSQuotaPeriodNs?: number;
  /** RuntimeDefault seccomp for containers that set no profile (--seccomp-default; default false: Unconfined). */
  readonly seccompDefault?: boolean;
  /** Where Localhost seccomp profiles are (upstream: `<rootDir>/seccomp`; default /var/lib/nodeagent/seccomp). */
  readonly seccompProfileRoot?: string;
  /**
   * Whether the runtime may lower a container's OOM score adjustment (below the agent's own);
   * default: whether this process has CAP_SYS_RESOURCE. When it may not, Guaranteed and critical
   * pods keep the runtime's score, and one warning says so.
   */
  readonly canLowerOomScore?: () => boolean;
  /** Swap of containers on a cgroup v1 node (see ResourceSettings.memorySwap); absent: left to the runtime. */
  readonly memorySwap?: 'no-swap' | 'unlimited';
  /** Restartable init containers (restartPolicy Always) run as sidecars (the SidecarContainers gate; default false). */
  readonly sidecarContainers?: boolean;
  /**
   * The InPlacePodVerticalScaling gate: the resources each running container instance has, by
   * pod UID and container ID, and where the manager records what it gave one
   * (src/agent/resize). Absent: a change of resources recreates the container.
   */
  readonly inPlaceResize?: {
    current(uid: string, containerId: string): ResourceRequirements | undefined;
    applied(uid: string, containerId: string, resources: ResourceRequirements): void;
  };
  /** The PodHostIPs gate: the downward API's status.hostIPs resolves (default false: ""). */
  readonly podHostIPs?: boolean;
  /**
   * Pods starting at once at most, each from its RunPodSandbox call until the runtime has
   * started its first container; the others wait their turn (default: four per CPU,
   * os.availableParallelism(); 0: no bound).
   */
  readonly maxConcurrentPodStarts?: number;
  /** Restart back-off (default 10 s doubling to 5 min, reset after 10 min of clean running). */
  readonly containerBackOff?: BackOffSettings;
}

/** What other modules give each container: mounts, cgroup, env objects, cpusets, devices, probe results. */
export interface RuntimeManagerCollaborators {
  readonly volumes: ContainerVolumes;
  /** The pod's cgroup (cgroupfs path), created by the caller; always passed to RunPodSandbox. */
  readonly cgroupParent: (pod: NodePod) => Promise<string>;
  /** Where env (configMapKeyRef, secretKeyRef, envFrom) reads its objects; absent (standalone): a container that names one fails with CreateContainerConfigError. */
  readonly envObjects?: EnvObjectSource;
  /** Each new container's cpuset.cpus and cpuset.mems from the CPU and memory managers; absent: none. */
  readonly containerCpuset?: (pod: NodePod, container: Container) => ContainerCpuset;
  /** The device manager: each new container's envs, mounts, device nodes, annotations and CDI devices; absent: none. */
  readonly devices?: ContainerDeviceProvider | undefined;
  /** The prober's results: containers that failed a liveness or startup probe are killed and restarted. */
  readonly probeResults?: ContainerProbeResults;
}

/** Time, logs, events and spans. */
export interface RuntimeManagerObservability {
  /** Drives the back-offs, the pull budget and the statuses' timestamps. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** Every event (Killing, FailedPostStartHook, FailedPreStopHook), after it was logged. */
  readonly onEvent?: (event: PodEvent) => void;
  /**
   * Spans for the sync's steps (killPodOrContainers, createPodSandbox, startContainer, ...) and
   * image pulls, children of the pod sync's span.
   */
  readonly tracer?: Tracer | undefined;
}

/**
 * What createRuntimeManager takes, by concern (each group above says what its collaborators are
 * for); one flat object for the composition roots.
 */
export interface RuntimeManagerOptions
  extends RuntimeManagerRuntime, RuntimeManagerNode, RuntimeManagerPulls, RuntimeManagerContainers, RuntimeManagerCollaborators, RuntimeManagerObservability {}
