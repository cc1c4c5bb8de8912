/**
 * The shapes the eviction manager works with: signals and thresholds as upstream's eviction
 * API names them, the observations made of the node's readings, the pod stats it ranks and
 * checks (a subset of the summary API's, which the servers' stats provider satisfies), and the
 * interfaces of what it drives (the node-level reclaim and the pod terminator).
 */
import type { NodePod } from '../../api/pod/index.js';

export const SIGNALS = [
  'memory.available', 'allocatableMemory.available', 'nodefs.available', 'nodefs.inodesFree',
  'imagefs.available', 'imagefs.inodesFree', 'pid.available',
] as const;

export type Signal = (typeof SIGNALS)[number];

/** What a signal measures (upstream's signalToResource; inodes and pids are the module's own names). */
export type StarvedResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** A threshold's amount: a quantity (bytes, inodes, PIDs) or a fraction of the capacity. */
export type ThresholdValue = { readonly quantity: number; readonly text: string } | { readonly percentage: number; readonly text: string };

export interface Threshold {
  readonly signal: Signal;
  readonly value: ThresholdValue;
  /** 0 for a hard threshold; a soft one's grace period otherwise. */
  readonly gracePeriodMs: number;
  readonly minReclaim?: ThresholdValue;
}

/** One signal observed: what is available of what capacity, and when it was measured (ms). */
export interface Observation {
  readonly available: number;
  readonly capacity: number;
  readonly time: number;
}

export type Observations = ReadonlyMap<Signal, Observation>;

/** A file system as statfs and stat see it. */
export interface FsReading {
  readonly capacityBytes: number;
  readonly availableBytes: number;
  readonly inodes: number;
  readonly inodesFree: number;
  /** stat's device number of the path measured: the same on one file system. */
  readonly device: number;
}

/** A memory cgroup's figures: what is left below its capacity, and its working set (usage minus inactive file). */
export interface MemoryReading {
  readonly availableBytes: number;
  readonly workingSetBytes: number;
  readonly usageBytes: number;
}

/** The node's readings of one monitoring pass; a part that could not be read is absent. */
export interface NodeReadings {
  readonly time: number;
  readonly memory?: MemoryReading;
  readonly allocatableMemory?: MemoryReading;
  readonly nodefs?: FsReading;
  readonly imagefs?: FsReading;
  readonly pids?: { readonly max: number; readonly running: number };
  /** What could not be read, for the log. */
  readonly errors: readonly string[];
}

export interface SignalReader {
  /** Reads every signal's source now. Never rejects: failures land in `errors`. */
  read(): Promise<NodeReadings>;
}

/** Usage of a file system by one consumer (a container's writable layer or logs, a volume). */
export interface FsUsage {
  readonly usedBytes?: number;
  readonly inodesUsed?: number;
}

export interface ContainerStatsView {
  readonly name: string;
  readonly memory?: { readonly workingSetBytes?: number };
  readonly rootfs?: FsUsage;
  readonly logs?: FsUsage;
}

/** A pod's stats as the eviction manager reads them (the summary API's pod stats). */
export interface PodStatsView {
  readonly uid: string;
  readonly memory?: { readonly workingSetBytes?: number };
  readonly processCount?: number;
  readonly containers: readonly ContainerStatsView[];
  readonly volumes?: readonly (FsUsage & { readonly name: string })[];
  /** Writable layers, logs and local ephemeral volumes together. */
  readonly ephemeralStorage?: FsUsage;
}

export interface PodStatsSource {
  /** The pods' stats, at most `maxAgeMs` old. */
  podStats(maxAgeMs: number): Promise<readonly PodStatsView[]>;
}

/** The node-level reclaim before any pod is evicted for disk (the garbage collectors). */
export interface NodeReclaim {
  deleteAllUnusedContainers(): Promise<void>;
  deleteUnusedImages(): Promise<void>;
}

export interface TerminateOptions {
  readonly gracePeriodSeconds: number;
  readonly reason: string;
  readonly message: string;
  /** The DisruptionTarget condition's reason, when the eviction is a disruption (pressure, not local storage limits). */
  readonly disruptionReason?: string;
}

/** Ends a pod abnormally (phase Failed) and waits for its containers to be killed. */
export interface PodTerminator {
  terminate(pod: NodePod, options: TerminateOptions): Promise<void>;
}

export interface EvictionEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}
