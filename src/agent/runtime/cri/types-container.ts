/**
 * CRI v1 messages about containers and exec (see types-common.ts for the conventions on
 * numbers, enums and absent fields).
 */
import type {
  ContainerMetadata,
  ImageSpec,
  Int64String,
  Int64Value,
  KeyValue,
  LinuxContainerResources,
  LinuxContainerResourcesStatus,
  Mount,
  NamespaceOption,
  SecurityProfile,
  SelinuxOption,
  StringMap,
  SupplementalGroupsPolicy,
} from './types-common.js';
import type { PodSandboxConfig } from './types-pod.js';

export interface Capability {
  readonly addCapabilities?: readonly string[];
  readonly dropCapabilities?: readonly string[];
  readonly addAmbientCapabilities?: readonly string[];
}

export interface LinuxContainerSecurityContext {
  readonly capabilities?: Capability;
  readonly privileged?: boolean;
  readonly namespaceOptions?: NamespaceOption;
  readonly selinuxOptions?: SelinuxOption;
  readonly runAsUser?: Int64Value;
  readonly runAsGroup?: Int64Value;
  readonly runAsUsername?: string;
  readonly readonlyRootfs?: boolean;
  readonly supplementalGroups?: readonly number[];
  readonly supplementalGroupsPolicy?: SupplementalGroupsPolicy;
  readonly noNewPrivs?: boolean;
  readonly maskedPaths?: readonly string[];
  readonly readonlyPaths?: readonly string[];
  readonly seccomp?: SecurityProfile;
  readonly apparmor?: SecurityProfile;
}

export interface Device {
  readonly containerPath: string;
  readonly hostPath: string;
  /** Any of r, w, m. */
  readonly permissions: string;
}

export interface ContainerConfig {
  readonly metadata: ContainerMetadata;
  readonly image: ImageSpec;
  /** The entrypoint; empty keeps the image's. */
  readonly command?: readonly string[];
  /** Arguments; empty keeps the image's command. */
  readonly args?: readonly string[];
  readonly workingDir?: string;
  readonly envs?: readonly KeyValue[];
  readonly mounts?: readonly Mount[];
  readonly devices?: readonly Device[];
  readonly labels?: StringMap;
  readonly annotations?: StringMap;
  /** Relative to the sandbox's logDirectory, e.g. `main/0.log`. */
  readonly logPath?: string;
  readonly stdin?: boolean;
  readonly stdinOnce?: boolean;
  readonly tty?: boolean;
  readonly linux?: {
    readonly resources?: LinuxContainerResources;
    readonly securityContext?: LinuxContainerSecurityContext;
  };
  readonly cdiDevices?: readonly { readonly name: string }[];
}

export interface CreateContainerRequest {
  readonly podSandboxId: string;
  readonly config: ContainerConfig;
  /** The config the sandbox was created with; always pass it. */
  readonly sandboxConfig: PodSandboxConfig;
}

export interface StopContainerRequest {
  readonly containerId: string;
  /** Seconds of grace after SIGTERM before SIGKILL; 0 kills at once. */
  readonly timeout: number;
}

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

/** All set fields must match (AND). */
export interface ContainerFilter {
  readonly id?: string;
  readonly state?: { readonly state: ContainerState };
  readonly podSandboxId?: string;
  readonly labelSelector?: StringMap;
}

export interface Container {
  readonly id: string;
  readonly podSandboxId: string;
  readonly metadata: ContainerMetadata | null;
  readonly image: ImageSpec | null;
  /** Digested reference or image ID of the image in use. */
  readonly imageRef: string;
  readonly state: ContainerState;
  readonly createdAt: Int64String;
  readonly labels: StringMap;
  readonly annotations: StringMap;
  /** Field 10; empty from runtimes older than CRI 1.30 (containerd 1.6). */
  readonly imageId: string;
}

export interface ContainerUser {
  readonly linux: {
    readonly uid: Int64String;
    readonly gid: Int64String;
    readonly supplementalGroups: readonly Int64String[];
  } | null;
}

export interface ContainerStatus {
  readonly id: string;
  readonly metadata: ContainerMetadata | null;
  readonly state: ContainerState;
  /** Nanoseconds since the epoch. */
  readonly createdAt: Int64String;
  /** Nanoseconds; 0 until started. */
  readonly startedAt: Int64String;
  /** Nanoseconds; 0 until exited. */
  readonly finishedAt: Int64String;
  readonly exitCode: number;
  readonly image: ImageSpec | null;
  readonly imageRef: string;
  /** CamelCase cause of the state, e.g. Completed, Error, OOMKilled. */
  readonly reason: string;
  readonly message: string;
  readonly labels: StringMap;
  readonly annotations: StringMap;
  readonly mounts: readonly Mount[];
  readonly logPath: string;
  readonly resources: { readonly linux: LinuxContainerResourcesStatus | null } | null;
  /** Field 17; empty from runtimes older than CRI 1.30 (containerd 1.6). */
  readonly imageId: string;
  /** Field 18; null from runtimes that do not report it. */
  readonly user: ContainerUser | null;
  readonly imageSource: string;
}

export interface ContainerStatusRequest {
  readonly containerId: string;
  readonly verbose?: boolean;
}

export interface ContainerStatusResponse {
  readonly status: ContainerStatus | null;
  /** Only with verbose: JSON documents (containerd: `info` with pid, spec, …). */
  readonly info: StringMap;
}

export interface UpdateContainerResourcesRequest {
  readonly containerId: string;
  readonly linux?: LinuxContainerResources;
  readonly annotations?: StringMap;
}

export interface CheckpointContainerRequest {
  readonly containerId: string;
  /** Where the runtime writes the checkpoint archive. */
  readonly location: string;
  /** Seconds; 0: the runtime's default. */
  readonly timeout?: number;
}

export interface ExecSyncRequest {
  readonly containerId: string;
  readonly cmd: readonly string[];
  /** Seconds the command may run; 0 = no limit. Added to the call's deadline. */
  readonly timeout?: number;
}

export interface ExecSyncResponse {
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly exitCode: number;
}

export interface ExecRequest {
  readonly containerId: string;
  readonly cmd: readonly string[];
  readonly tty?: boolean;
  readonly stdin?: boolean;
  readonly stdout?: boolean;
  readonly stderr?: boolean;
}

export interface AttachRequest {
  readonly containerId: string;
  readonly stdin?: boolean;
  readonly tty?: boolean;
  readonly stdout?: boolean;
  readonly stderr?: boolean;
}

export interface PortForwardRequest {
  readonly podSandboxId: string;
  readonly port?: readonly number[];
}
