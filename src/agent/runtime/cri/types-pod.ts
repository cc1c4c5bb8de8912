/**
 * CRI v1 messages about the runtime itself and about pod sandboxes (see types-common.ts for
 * the conventions on numbers, enums and absent fields).
 */
import type {
  Int64String,
  Int64Value,
  LinuxContainerResources,
  NamespaceOption,
  PodSandboxMetadata,
  Protocol,
  SecurityProfile,
  SelinuxOption,
  StringMap,
  SupplementalGroupsPolicy,
} from './types-common.js';
import type { ContainerStatus } from './types-container.js';

export interface VersionResponse {
  /** The CRI version the client asked for. */
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  /** e.g. `v1`. */
  readonly runtimeApiVersion: string;
}

export interface RuntimeCondition {
  /** `RuntimeReady`, `NetworkReady`, or a runtime's own. */
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

export interface RuntimeHandler {
  readonly name: string;
  readonly features: { readonly recursiveReadOnlyMounts: boolean; readonly userNamespaces: boolean } | null;
}

export interface StatusResponse {
  readonly status: { readonly conditions: readonly RuntimeCondition[] } | null;
  /** Only with verbose: JSON documents keyed by topic. */
  readonly info: StringMap;
  readonly runtimeHandlers: readonly RuntimeHandler[];
  readonly features: { readonly supplementalGroupsPolicy: boolean } | null;
}

export interface RuntimeConfig {
  readonly networkConfig?: { readonly podCidr: string };
}

export interface DnsConfig {
  readonly servers?: readonly string[];
  readonly searches?: readonly string[];
  readonly options?: readonly string[];
}

export interface PortMapping {
  readonly protocol?: Protocol;
  readonly containerPort: number;
  readonly hostPort?: number;
  readonly hostIp?: string;
}

export interface LinuxSandboxSecurityContext {
  readonly namespaceOptions?: NamespaceOption;
  readonly selinuxOptions?: SelinuxOption;
  readonly runAsUser?: Int64Value;
  readonly runAsGroup?: Int64Value;
  readonly readonlyRootfs?: boolean;
  readonly supplementalGroups?: readonly number[];
  readonly supplementalGroupsPolicy?: SupplementalGroupsPolicy;
  readonly privileged?: boolean;
  readonly seccomp?: SecurityProfile;
  readonly apparmor?: SecurityProfile;
}

export interface LinuxPodSandboxConfig {
  /** cgroupfs path of the pod, e.g. `/nodeagent/besteffort/pod<uid>`; always set it. */
  readonly cgroupParent?: string;
  readonly securityContext?: LinuxSandboxSecurityContext;
  readonly sysctls?: StringMap;
  readonly overhead?: LinuxContainerResources;
  readonly resources?: LinuxContainerResources;
}

export interface PodSandboxConfig {
  readonly metadata: PodSandboxMetadata;
  /** Must be empty for a pod on the host network (runc fails otherwise). */
  readonly hostname?: string;
  /** Absolute directory of the pod's container logs. */
  readonly logDirectory?: string;
  readonly dnsConfig?: DnsConfig;
  readonly portMappings?: readonly PortMapping[];
  readonly labels?: StringMap;
  readonly annotations?: StringMap;
  readonly linux?: LinuxPodSandboxConfig;
}

export interface RunPodSandboxRequest {
  readonly config: PodSandboxConfig;
  /** RuntimeClass handler; empty selects the default. */
  readonly runtimeHandler?: string;
}

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export interface PodSandboxNetworkStatus {
  /** Empty for pods on the host network. */
  readonly ip: string;
  readonly additionalIps: readonly { readonly ip: string }[];
}

export interface PodSandboxStatus {
  readonly id: string;
  readonly metadata: PodSandboxMetadata | null;
  readonly state: PodSandboxState;
  readonly createdAt: Int64String;
  readonly network: PodSandboxNetworkStatus | null;
  readonly linux: { readonly namespaces: { readonly options: NamespaceOption | null } | null } | null;
  readonly labels: StringMap;
  readonly annotations: StringMap;
  readonly runtimeHandler: string;
}

export interface PodSandboxStatusRequest {
  readonly podSandboxId: string;
  readonly verbose?: boolean;
}

export interface PodSandboxStatusResponse {
  readonly status: PodSandboxStatus | null;
  readonly info: StringMap;
  /** Filled only by runtimes with evented PLEG support (not containerd 1.6). */
  readonly containersStatuses: readonly ContainerStatus[];
  /** Nanoseconds; 0 from runtimes that do not fill it (containerd 1.6). */
  readonly timestamp: Int64String;
}

/** All set fields must match (AND). */
export interface PodSandboxFilter {
  readonly id?: string;
  readonly state?: { readonly state: PodSandboxState };
  readonly labelSelector?: StringMap;
}

export interface PodSandbox {
  readonly id: string;
  readonly metadata: PodSandboxMetadata | null;
  readonly state: PodSandboxState;
  readonly createdAt: Int64String;
  readonly labels: StringMap;
  readonly annotations: StringMap;
  readonly runtimeHandler: string;
}
