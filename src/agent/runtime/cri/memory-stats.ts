/**
 * The stats the in-memory runtime reports: built from the usage a test sets per container; a pod's
 * usage is the sum of its running containers'. Used by the tests and by the simulated nodes.
 */
import type { ContainerStats, CpuUsage, MemoryUsage, PodSandboxStats } from './types-stats-image.js';
import type { ContainerConfig } from './types-container.js';
import type { PodSandboxConfig } from './types-pod.js';

/** A container's usage (absent: nothing used). */
export interface UsageSetting {
  /** Cumulative CPU time in nanoseconds. */
  readonly cpuCoreNanoSeconds?: number;
  /** Average CPU use over the last window in nanocores. */
  readonly cpuNanoCores?: number;
  readonly memoryWorkingSetBytes?: number;
  readonly memoryUsageBytes?: number;
}

const value = (n: number | undefined): { value: string } => ({ value: String(n ?? 0) });

function cpu(usage: UsageSetting, timestamp: string): CpuUsage {
  return { timestamp, usageCoreNanoSeconds: value(usage.cpuCoreNanoSeconds), usageNanoCores: value(usage.cpuNanoCores) };
}

function memory(usage: UsageSetting, timestamp: string): MemoryUsage {
  return {
    timestamp, workingSetBytes: value(usage.memoryWorkingSetBytes), usageBytes: value(usage.memoryUsageBytes),
    availableBytes: null, rssBytes: null, pageFaults: null, majorPageFaults: null,
  };
}

export function containerStats(
  c: { readonly id: string; readonly config: ContainerConfig },
  usage: UsageSetting | undefined,
  nowNs: bigint,
): ContainerStats {
  const timestamp = String(nowNs);
  return {
    attributes: { id: c.id, metadata: c.config.metadata, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} },
    cpu: cpu(usage ?? {}, timestamp),
    memory: memory(usage ?? {}, timestamp),
    writableLayer: null,
    swap: null,
  };
}

export function podSandboxStats(
  s: { readonly id: string; readonly config: PodSandboxConfig },
  containers: readonly { readonly container: { readonly id: string; readonly config: ContainerConfig }; readonly usage: UsageSetting | undefined }[],
  nowNs: bigint,
): PodSandboxStats {
  const timestamp = String(nowNs);
  const sum = (key: keyof UsageSetting): number => containers.reduce((total, c) => total + (c.usage?.[key] ?? 0), 0);
  const total: UsageSetting = {
    cpuCoreNanoSeconds: sum('cpuCoreNanoSeconds'), cpuNanoCores: sum('cpuNanoCores'),
    memoryWorkingSetBytes: sum('memoryWorkingSetBytes'), memoryUsageBytes: sum('memoryUsageBytes'),
  };
  return {
    attributes: { id: s.id, metadata: s.config.metadata, labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {} },
    linux: {
      cpu: cpu(total, timestamp),
      memory: memory(total, timestamp),
      network: null,
      process: null,
      containers: containers.map((c) => containerStats(c.container, c.usage, nowNs)),
    },
  };
}
