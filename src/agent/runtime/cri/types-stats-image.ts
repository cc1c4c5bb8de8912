/**
 * CRI v1 messages about resource usage and images (see types-common.ts for the conventions on
 * numbers, enums and absent fields).
 */
import type {
  ContainerMetadata,
  ImageSpec,
  Int64String,
  Int64Value,
  PodSandboxMetadata,
  StringMap,
  UInt64Value,
} from './types-common.js';
import type { PodSandboxConfig } from './types-pod.js';

export interface FilesystemUsage {
  readonly timestamp: Int64String;
  readonly fsId: { readonly mountpoint: string } | null;
  readonly usedBytes: UInt64Value | null;
  readonly inodesUsed: UInt64Value | null;
}

export interface CpuUsage {
  readonly timestamp: Int64String;
  /** Cumulative CPU time, nanoseconds. */
  readonly usageCoreNanoSeconds: UInt64Value | null;
  /** Average over the last sample window; 0 (or null) until a second sample exists. */
  readonly usageNanoCores: UInt64Value | null;
}

export interface MemoryUsage {
  readonly timestamp: Int64String;
  readonly workingSetBytes: UInt64Value | null;
  readonly availableBytes: UInt64Value | null;
  readonly usageBytes: UInt64Value | null;
  readonly rssBytes: UInt64Value | null;
  readonly pageFaults: UInt64Value | null;
  readonly majorPageFaults: UInt64Value | null;
}

export interface SwapUsage {
  readonly timestamp: Int64String;
  readonly swapAvailableBytes: UInt64Value | null;
  readonly swapUsageBytes: UInt64Value | null;
}

export interface ContainerAttributes {
  readonly id: string;
  readonly metadata: ContainerMetadata | null;
  readonly labels: StringMap;
  readonly annotations: StringMap;
}

export interface ContainerStats {
  readonly attributes: ContainerAttributes | null;
  readonly cpu: CpuUsage | null;
  readonly memory: MemoryUsage | null;
  /** containerd 1.6 reports 0 bytes. */
  readonly writableLayer: FilesystemUsage | null;
  readonly swap: SwapUsage | null;
}

/** All set fields must match (AND). */
export interface ContainerStatsFilter {
  readonly id?: string;
  readonly podSandboxId?: string;
  readonly labelSelector?: StringMap;
}

export interface NetworkInterfaceUsage {
  readonly name: string;
  readonly rxBytes: UInt64Value | null;
  readonly rxErrors: UInt64Value | null;
  readonly txBytes: UInt64Value | null;
  readonly txErrors: UInt64Value | null;
}

export interface PodSandboxStats {
  readonly attributes: {
    readonly id: string;
    readonly metadata: PodSandboxMetadata | null;
    readonly labels: StringMap;
    readonly annotations: StringMap;
  } | null;
  readonly linux: {
    readonly cpu: CpuUsage | null;
    readonly memory: MemoryUsage | null;
    readonly network: {
      readonly timestamp: Int64String;
      readonly defaultInterface: NetworkInterfaceUsage | null;
      readonly interfaces: readonly NetworkInterfaceUsage[];
    } | null;
    readonly process: { readonly timestamp: Int64String; readonly processCount: UInt64Value | null } | null;
    readonly containers: readonly ContainerStats[];
  } | null;
}

export interface PodSandboxStatsFilter {
  readonly id?: string;
  readonly labelSelector?: StringMap;
}

export interface Image {
  /** Image ID, e.g. `sha256:…` (the config digest for containerd). */
  readonly id: string;
  readonly repoTags: readonly string[];
  readonly repoDigests: readonly string[];
  readonly size: Int64String;
  readonly uid: Int64Value<Int64String> | null;
  readonly username: string;
  readonly spec: ImageSpec | null;
  /** containerd 1.6 always reports false: image GC must protect the sandbox image itself. */
  readonly pinned: boolean;
  readonly imageSource: string;
}

export interface ImageStatusRequest {
  readonly image: ImageSpec;
  readonly verbose?: boolean;
}

export interface ImageStatusResponse {
  /** null when the image is not present. */
  readonly image: Image | null;
  readonly info: StringMap;
}

export interface AuthConfig {
  readonly username?: string;
  readonly password?: string;
  readonly auth?: string;
  readonly serverAddress?: string;
  readonly identityToken?: string;
  readonly registryToken?: string;
}

export interface PullImageRequest {
  readonly image: ImageSpec;
  readonly auth?: AuthConfig;
  readonly sandboxConfig?: PodSandboxConfig;
}

export interface ImageFsInfoResponse {
  readonly imageFilesystems: readonly FilesystemUsage[];
  /** Empty from containerd 1.6. */
  readonly containerFilesystems: readonly FilesystemUsage[];
}
