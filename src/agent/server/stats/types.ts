/**
 * The summary API's JSON shapes (upstream's stats/v1alpha1 Summary): times are RFC 3339
 * strings, quantities plain numbers, absent values left out.
 */
export interface CPUStats {
  readonly time: string;
  readonly usageNanoCores?: number;
  readonly usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  readonly time: string;
  readonly availableBytes?: number;
  readonly usageBytes?: number;
  readonly workingSetBytes?: number;
  readonly rssBytes?: number;
  readonly pageFaults?: number;
  readonly majorPageFaults?: number;
}

export interface FsStats {
  readonly time: string;
  readonly availableBytes?: number;
  readonly capacityBytes?: number;
  readonly usedBytes?: number;
  readonly inodesFree?: number;
  readonly inodes?: number;
  readonly inodesUsed?: number;
}

export interface InterfaceStats {
  readonly name: string;
  readonly rxBytes?: number;
  readonly rxErrors?: number;
  readonly txBytes?: number;
  readonly txErrors?: number;
}

export interface NetworkStats extends InterfaceStats {
  readonly time: string;
  readonly interfaces?: readonly InterfaceStats[];
}

export interface RlimitStats {
  readonly time: string;
  readonly maxpid?: number;
  readonly curproc?: number;
}

export interface ContainerSummary {
  readonly name: string;
  readonly startTime: string;
  readonly cpu?: CPUStats;
  readonly memory?: MemoryStats;
  readonly rootfs?: FsStats;
  readonly logs?: FsStats;
}

export interface PodSummary {
  readonly podRef: { readonly name: string; readonly namespace: string; readonly uid: string };
  readonly startTime: string;
  readonly containers: readonly ContainerSummary[];
  readonly cpu?: CPUStats;
  readonly memory?: MemoryStats;
  readonly network?: NetworkStats;
  readonly volume?: readonly (FsStats & { readonly name: string })[];
  readonly 'ephemeral-storage'?: FsStats;
  readonly process_stats?: { readonly process_count?: number };
}

export interface NodeSummary {
  readonly nodeName: string;
  readonly systemContainers: readonly ContainerSummary[];
  readonly startTime: string;
  readonly cpu?: CPUStats;
  readonly memory?: MemoryStats;
  readonly network?: NetworkStats;
  readonly fs?: FsStats;
  readonly runtime?: { readonly imageFs?: FsStats; readonly containerFs?: FsStats };
  readonly rlimit?: RlimitStats;
}

export interface Summary {
  readonly node: NodeSummary;
  readonly pods: readonly PodSummary[];
}
