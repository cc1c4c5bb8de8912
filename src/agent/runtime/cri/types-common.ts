/**
 * CRI v1 values shared by pods, containers and images, as the agent sees them: camelCase
 * names, enums as their proto names, 64-bit integers as numbers when sent and as decimal
 * strings when received (nanosecond timestamps do not fit a double), absent sub-messages of
 * received messages as null, absent lists and maps as empty.
 */

/** A 64-bit integer as received: a decimal string (e.g. a creation time in nanoseconds). */
export type Int64String = string;

/** Parses a received 64-bit integer; exact, since it goes through bigint. */
export function int64(value: Int64String): bigint {
  return BigInt(value === '' ? '0' : value);
}

/** A received nanosecond timestamp as a Date (millisecond precision); null when it is 0. */
export function nanosToDate(value: Int64String): Date | null {
  const nanos = int64(value);
  return nanos === 0n ? null : new Date(Number(nanos / 1_000_000n));
}

export type StringMap = Readonly<Record<string, string>>;

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type MountPropagation =
  | 'PROPAGATION_PRIVATE'
  | 'PROPAGATION_HOST_TO_CONTAINER'
  | 'PROPAGATION_BIDIRECTIONAL';
export type SecurityProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost';
export type SupplementalGroupsPolicy = 'Merge' | 'Strict';

export interface KeyValue {
  readonly key: string;
  readonly value: string;
}

export interface Int64Value<N = number> {
  readonly value: N;
}

export interface UInt64Value {
  readonly value: Int64String;
}

export interface IdMapping {
  readonly hostId: number;
  readonly containerId: number;
  readonly length: number;
}

export interface UserNamespace {
  readonly mode?: NamespaceMode;
  readonly uids?: readonly IdMapping[];
  readonly gids?: readonly IdMapping[];
}

export interface NamespaceOption {
  readonly network?: NamespaceMode;
  readonly pid?: NamespaceMode;
  readonly ipc?: NamespaceMode;
  readonly targetId?: string;
  readonly usernsOptions?: UserNamespace | null;
}

export interface SelinuxOption {
  readonly user?: string;
  readonly role?: string;
  readonly type?: string;
  readonly level?: string;
}

export interface SecurityProfile {
  readonly profileType: SecurityProfileType;
  /** For Localhost: the profile's absolute path (seccomp) or name (AppArmor). */
  readonly localhostRef?: string;
}

/** An image by reference (`busybox:1.35`, `name@sha256:…`) or by ID. */
export interface ImageSpec {
  readonly image: string;
  readonly annotations?: StringMap;
  readonly userSpecifiedImage?: string;
  readonly runtimeHandler?: string;
}

export interface HugepageLimit {
  readonly pageSize: string;
  readonly limit: number;
}

/** Resources to apply; 0 or absent means "not set". */
export interface LinuxContainerResources {
  readonly cpuPeriod?: number;
  readonly cpuQuota?: number;
  readonly cpuShares?: number;
  readonly memoryLimitInBytes?: number;
  readonly oomScoreAdj?: number;
  readonly cpusetCpus?: string;
  readonly cpusetMems?: string;
  readonly hugepageLimits?: readonly HugepageLimit[];
  readonly unified?: StringMap;
  readonly memorySwapLimitInBytes?: number;
}

/** Resources as a runtime reports them (ContainerStatus.resources). */
export interface LinuxContainerResourcesStatus {
  readonly cpuPeriod: Int64String;
  readonly cpuQuota: Int64String;
  readonly cpuShares: Int64String;
  readonly memoryLimitInBytes: Int64String;
  readonly oomScoreAdj: Int64String;
  readonly cpusetCpus: string;
  readonly cpusetMems: string;
  readonly unified: StringMap;
  readonly memorySwapLimitInBytes: Int64String;
}

export interface Mount {
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readonly?: boolean;
  readonly selinuxRelabel?: boolean;
  readonly propagation?: MountPropagation;
  readonly uidMappings?: readonly IdMapping[];
  readonly gidMappings?: readonly IdMapping[];
  readonly recursiveReadOnly?: boolean;
}

export interface PodSandboxMetadata {
  readonly name: string;
  readonly uid: string;
  readonly namespace: string;
  readonly attempt: number;
}

export interface ContainerMetadata {
  readonly name: string;
  readonly attempt: number;
}

/** Per-call options of every CRI method. */
export interface CallOptions {
  /** Cancels the call; it then rejects with CRI_CANCELLED. */
  readonly signal?: AbortSignal;
}
