/**
 * The CRI as the agent uses it, split by capability so that each consumer depends on what it
 * calls (the pod workers on sandboxes and containers, the prober on exec, the eviction manager
 * on stats, image GC on images). Every method:
 *   - makes one gRPC call and blocks until the runtime answers or the call's deadline passes;
 *   - rejects with an OrchError: CRI_TIMEOUT ('timeout'), CRI_UNAVAILABLE ('unavailable'),
 *     CRI_NOT_FOUND ('not-found'), CRI_CANCELLED, CRI_CLOSED or CRI_ERROR ('internal');
 *   - never leaves a rejection unhandled when the runtime is down.
 * Deadline: runtimeRequestTimeout, except pullImage, exec, attach, portForward and
 * reopenContainerLog (no deadline; pass a signal to cancel), and execSync and stopContainer
 * (runtimeRequestTimeout plus the command's timeout, or the grace period, as the kubelet does).
 */
import type { CallOptions, ImageSpec } from './types-common.js';
import type {
  AttachRequest,
  Container,
  ContainerFilter,
  ContainerStatusRequest,
  ContainerStatusResponse,
  CreateContainerRequest,
  ExecRequest,
  ExecSyncRequest,
  ExecSyncResponse,
  PortForwardRequest,
  StopContainerRequest,
  UpdateContainerResourcesRequest,
  CheckpointContainerRequest,
} from './types-container.js';
import type {
  PodSandbox,
  PodSandboxFilter,
  PodSandboxStatusRequest,
  PodSandboxStatusResponse,
  RunPodSandboxRequest,
  RuntimeConfig,
  StatusResponse,
  VersionResponse,
} from './types-pod.js';
import type {
  ContainerStats,
  ContainerStatsFilter,
  Image,
  ImageFsInfoResponse,
  ImageStatusRequest,
  ImageStatusResponse,
  PodSandboxStats,
  PodSandboxStatsFilter,
  PullImageRequest,
} from './types-stats-image.js';

/** The runtime as a whole: identity, readiness, node-level configuration. */
export interface RuntimeInfoService {
  /** `apiVersion` is the CRI version the agent speaks (`v1`). */
  version(apiVersion: string, options?: CallOptions): Promise<VersionResponse>;
  /** Conditions RuntimeReady and NetworkReady; `verbose` adds the runtime's config as JSON. */
  status(request?: { readonly verbose?: boolean }, options?: CallOptions): Promise<StatusResponse>;
  /** Tells the runtime the node's pod CIDR. Idempotent. */
  updateRuntimeConfig(config: RuntimeConfig, options?: CallOptions): Promise<void>;
}

/** Pod sandboxes: the pod-level environment (namespaces, network, cgroup parent). */
export interface SandboxService {
  /** Creates and starts a sandbox; resolves to its ID once it is ready. Not idempotent. */
  runPodSandbox(request: RunPodSandboxRequest, options?: CallOptions): Promise<string>;
  /** Kills every process of the sandbox and releases its network. Idempotent. */
  stopPodSandbox(podSandboxId: string, options?: CallOptions): Promise<void>;
  /** Removes the sandbox and its containers. Idempotent. */
  removePodSandbox(podSandboxId: string, options?: CallOptions): Promise<void>;
  /** Throws CRI_NOT_FOUND when the sandbox does not exist. */
  podSandboxStatus(request: PodSandboxStatusRequest, options?: CallOptions): Promise<PodSandboxStatusResponse>;
  listPodSandbox(filter?: PodSandboxFilter, options?: CallOptions): Promise<PodSandbox[]>;
}

/** Container lifecycle inside a sandbox. */
export interface ContainerService {
  /** Resolves to the new container's ID. Not idempotent (the name+attempt must be unique). */
  createContainer(request: CreateContainerRequest, options?: CallOptions): Promise<string>;
  startContainer(containerId: string, options?: CallOptions): Promise<void>;
  /** SIGTERM, then SIGKILL after `timeout` seconds. Idempotent. */
  stopContainer(request: StopContainerRequest, options?: CallOptions): Promise<void>;
  /** Removes the container, killing it if needed. Idempotent. */
  removeContainer(containerId: string, options?: CallOptions): Promise<void>;
  listContainers(filter?: ContainerFilter, options?: CallOptions): Promise<Container[]>;
  /** Throws CRI_NOT_FOUND when the container does not exist. */
  containerStatus(request: ContainerStatusRequest, options?: CallOptions): Promise<ContainerStatusResponse>;
}

/** Changes to running containers. */
export interface ContainerUpdateService {
  updateContainerResources(request: UpdateContainerResourcesRequest, options?: CallOptions): Promise<void>;
  /** After log rotation: the runtime reopens the container's log file. */
  reopenContainerLog(containerId: string, options?: CallOptions): Promise<void>;
  /** Writes a checkpoint of the running container to `location` (containerd 1.6: Unimplemented). */
  checkpointContainer(request: CheckpointContainerRequest, options?: CallOptions): Promise<void>;
}

/** Commands in containers and the streaming server. */
export interface StreamingService {
  /** Runs a command to completion; a non-zero exit code is a result, not an error. */
  execSync(request: ExecSyncRequest, options?: CallOptions): Promise<ExecSyncResponse>;
  /** Resolves to the streaming server's URL for this exec. */
  exec(request: ExecRequest, options?: CallOptions): Promise<string>;
  /** Resolves to the streaming server's URL for this attach. */
  attach(request: AttachRequest, options?: CallOptions): Promise<string>;
  /** Resolves to the streaming server's URL for port forwarding into the sandbox. */
  portForward(request: PortForwardRequest, options?: CallOptions): Promise<string>;
}

/** Resource usage. List calls can be slow with many pods: do not poll them in a tight loop. */
export interface StatsService {
  containerStats(containerId: string, options?: CallOptions): Promise<ContainerStats>;
  listContainerStats(filter?: ContainerStatsFilter, options?: CallOptions): Promise<ContainerStats[]>;
  podSandboxStats(podSandboxId: string, options?: CallOptions): Promise<PodSandboxStats>;
  listPodSandboxStats(filter?: PodSandboxStatsFilter, options?: CallOptions): Promise<PodSandboxStats[]>;
}

/** Everything of the CRI RuntimeService. */
export interface RuntimeService
  extends RuntimeInfoService,
    SandboxService,
    ContainerService,
    ContainerUpdateService,
    StreamingService,
    StatsService {}

/** The CRI ImageService. */
export interface ImageService {
  listImages(filter?: ImageSpec, options?: CallOptions): Promise<Image[]>;
  /** `image` is null in the result when the image is not present (not an error). */
  imageStatus(request: ImageStatusRequest, options?: CallOptions): Promise<ImageStatusResponse>;
  /**
   * Pulls (always contacting the registry, even when the image is present: call imageStatus
   * first). Resolves to the image reference (ID) to use in container configs. No deadline.
   */
  pullImage(request: PullImageRequest, options?: CallOptions): Promise<string>;
  /** Removes the image and every tag of it. Idempotent. */
  removeImage(image: ImageSpec, options?: CallOptions): Promise<void>;
  imageFsInfo(options?: CallOptions): Promise<ImageFsInfoResponse>;
}
