/**
 * The stats provider of the servers and the eviction manager: one snapshot of the node's and
 * the pods' usage, shared by /stats/summary, /metrics/resource, /metrics/cadvisor and the
 * eviction manager's ranking and local storage checks. Pods and containers come from the CRI
 * (ready sandboxes and running containers with the agent's labels, ListPodSandboxStats,
 * ListContainerStats, ImageFsInfo), the node from /proc and statfs, the pods' volumes from the
 * volume stats cache (measured every volumeStatsAggPeriod). A pod's ephemeral storage is its
 * containers' writable layers and logs plus its local ephemeral volumes and /etc/hosts.
 * ListPodSandboxStats is slow with many pods (~0.4 s for 30), so a snapshot is reused for
 * `cacheMs` (10 s) unless the caller wants a younger one, and concurrent callers share the one
 * being taken; nothing polls it in the background.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../../api/clock.js';
import { formatTime } from '../../../api/time.js';
import { messageOf } from '../../../api/errors.js';
import { CONTAINER_NAME_LABEL, DEFAULT_POD_LOGS_ROOT, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, podLogsDirectory } from '../../kuberuntime/index.js';
import type { Logger } from '../../logging/index.js';
import type { ContainerStats, CpuUsage, MemoryUsage, NetworkInterfaceUsage, PodSandboxStats, UInt64Value } from '../../runtime/cri/index.js';
import type { ServerCri } from '../host.js';
import { fsStats, readNode, type NodeReadings } from './node.js';
import { type CPUStats, type FsStats, type InterfaceStats, type MemoryStats, type NetworkStats, type RlimitStats } from './types.js';
import type { VolumeStats, VolumeStatsCache } from './volume-stats.js';

export interface ContainerUsage {
  readonly id: string;
  readonly name: string;
  readonly image: string;
  readonly startTime: number;
  readonly cpu?: CPUStats;
  readonly memory?: MemoryStats;
  readonly rootfs?: FsStats;
  readonly logs?: FsStats;
}

export interface PodUsage {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly sandboxId: string;
  readonly startTime: number;
  readonly cpu?: CPUStats;
  readonly memory?: MemoryStats;
  readonly network?: NetworkStats;
  readonly processCount?: number;
  readonly containers: readonly ContainerUsage[];
  /** The pod's volumes as last measured (absent until they were). */
  readonly volumes?: readonly VolumeStats[];
  /** Writable layers, logs, local ephemeral volumes and /etc/hosts, on the node file system's figures. */
  readonly ephemeralStorage: FsStats;
}

export interface NodeUsage {
  readonly startTime: number;
  readonly cpu: CPUStats;
  readonly memory: MemoryStats & { readonly capacity: number };
  readonly network?: NetworkStats;
  readonly fs?: FsStats;
  readonly imageFs?: FsStats;
  readonly rlimit: RlimitStats;
}

export interface StatsSnapshot {
  /** When it was taken (ms since the epoch). */
  readonly timestamp: number;
  readonly node: NodeUsage;
  readonly pods: readonly PodUsage[];
  /** Parts that could not be read (the rest is still there). */
  readonly errors: readonly string[];
}

export interface StatsProvider {
  /** The newest snapshot, at most `maxAgeMs` (default `cacheMs`) old. Rejects when the runtime cannot list pods. */
  snapshot(maxAgeMs?: number): Promise<StatsSnapshot>;
}

export interface StatsProviderOptions {
  readonly cri: ServerCri;
  /** The agent's root directory: the node file system of the summary. */
  readonly rootDir: string;
  readonly podLogsRoot?: string;
  readonly cacheMs?: number;
  /** The snapshot's cache age and the times of samples the runtime did not stamp. */
  readonly clock: Pick<Clock, 'now'>;
  readonly procDir?: string;
  readonly logger?: Logger;
  /** The pods' volume stats; without it, pods have no volume stats. */
  readonly volumes?: Pick<VolumeStatsCache, 'podVolumes'>;
}

const u64 = (v: UInt64Value | null | undefined): number | undefined => (v === null || v === undefined ? undefined : Number(BigInt(v.value === '' ? '0' : v.value)));
const nsTime = (ns: string, fallback: number): string => formatTime(ns === '' || ns === '0' ? fallback : Number(BigInt(ns) / 1_000_000n));

/** `o` without its undefined properties (the JSON leaves them out; exactOptionalPropertyTypes wants them gone). */
function defined<T extends object>(o: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function cpuOf(c: CpuUsage | null | undefined, now: number): CPUStats | undefined {
  if (c === null || c === undefined) return undefined;
  return defined<CPUStats>({ time: nsTime(c.timestamp, now), usageNanoCores: u64(c.usageNanoCores), usageCoreNanoSeconds: u64(c.usageCoreNanoSeconds) });
}

function memoryOf(m: MemoryUsage | null | undefined, now: number): MemoryStats | undefined {
  if (m === null || m === undefined) return undefined;
  return defined<MemoryStats>({
    time: nsTime(m.timestamp, now), availableBytes: u64(m.availableBytes), usageBytes: u64(m.usageBytes), workingSetBytes: u64(m.workingSetBytes),
    rssBytes: u64(m.rssBytes), pageFaults: u64(m.pageFaults), majorPageFaults: u64(m.majorPageFaults),
  });
}

function networkOf(s: PodSandboxStats, now: number): NetworkStats | undefined {
  const n = s.linux?.network;
  if (n === null || n === undefined) return undefined;
  const iface = (i: NetworkInterfaceUsage): InterfaceStats =>
    defined<InterfaceStats>({ name: i.name, rxBytes: u64(i.rxBytes), rxErrors: u64(i.rxErrors), txBytes: u64(i.txBytes), txErrors: u64(i.txErrors) });
  const main = n.defaultInterface === null ? undefined : iface(n.defaultInterface);
  return { time: nsTime(n.timestamp, now), ...(main ?? { name: '' }), interfaces: n.interfaces.map(iface) };
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0; // no log directory (yet): nothing used
  }
  for (const n of names) total += await stat(join(dir, n)).then((s) => (s.isFile() ? s.size : 0), () => 0);
  return total;
}

export function createStatsProvider(o: StatsProviderOptions): StatsProvider {
  const now = (): number => o.clock.now();
  const cacheMs = o.cacheMs ?? 10_000;
  const logsRoot = o.podLogsRoot ?? DEFAULT_POD_LOGS_ROOT;
  let cached: { at: number; value: Promise<StatsSnapshot> } | undefined;
  let previousCpu: { nanos: number; at: number } | undefined;
  // A first CPU sample, so that the first snapshot already has a usage rate.
  void readNode(formatTime(now()), o.procDir).then((r) => { previousCpu ??= { nanos: r.cpuNanos, at: now() }; }, (err: unknown) => {
    o.logger?.v(2, 'First node CPU sample failed', { err: messageOf(err) });
  });

  function nodeCpu(r: NodeReadings, at: number): CPUStats {
    const rate = previousCpu === undefined || at <= previousCpu.at ? undefined : Math.round(((r.cpuNanos - previousCpu.nanos) / (at - previousCpu.at)) * 1000);
    previousCpu = { nanos: r.cpuNanos, at };
    return defined<CPUStats>({ time: formatTime(at), usageCoreNanoSeconds: r.cpuNanos, usageNanoCores: rate });
  }

  async function take(): Promise<StatsSnapshot> {
    const at = now();
    const time = formatTime(at);
    const errors: string[] = [];
    const soft = <T>(what: string, p: Promise<T>): Promise<T | undefined> => p.catch((err: unknown) => {
      errors.push(`${what}: ${messageOf(err)}`);
      return undefined;
    });
    const [sandboxes, containers, sandboxStats, containerStats, imageFsInfo, readings, rootFs, logsFs] = await Promise.all([
      o.cri.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
      o.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
      soft('ListPodSandboxStats', o.cri.listPodSandboxStats()),
      soft('ListContainerStats', o.cri.listContainerStats()),
      soft('ImageFsInfo', o.cri.imageFsInfo()),
      soft('node counters', readNode(time, o.procDir)),
      soft('node file system', fsStats(o.rootDir, time)),
      soft('log file system', fsStats(logsRoot, time)),
    ]);
    const image = imageFsInfo?.imageFilesystems[0];
    const imageMount = image?.fsId?.mountpoint;
    const imageStatfs = imageMount === undefined || imageMount === '' ? undefined : await soft('image file system', fsStats(imageMount, time));
    const imageFs: FsStats | undefined = image === undefined ? undefined : defined<FsStats>({
      ...(imageStatfs ?? { time }), usedBytes: u64(image.usedBytes), inodesUsed: u64(image.inodesUsed),
    });
    const bySandboxStats = new Map((sandboxStats ?? []).map((s) => [s.attributes?.id ?? '', s]));
    const byContainerStats = new Map<string, ContainerStats>((containerStats ?? []).map((s) => [s.attributes?.id ?? '', s]));
    const pods: PodUsage[] = [];
    for (const sb of sandboxes) {
      const uid = sb.labels[POD_UID_LABEL];
      if (uid === undefined) continue;
      const id = { uid, name: sb.labels[POD_NAME_LABEL] ?? '', namespace: sb.labels[POD_NAMESPACE_LABEL] ?? '' };
      const logDir = podLogsDirectory(logsRoot, id);
      const own = containers.filter((c) => c.podSandboxId === sb.id);
      const usage: ContainerUsage[] = await Promise.all(own.map(async (c) => {
        const s = byContainerStats.get(c.id);
        const name = c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? '';
        const rootfs = s?.writableLayer;
        const logBytes = await dirBytes(join(logDir, name));
        return defined<ContainerUsage>({
          id: c.id, name, image: c.image?.image ?? '', startTime: Number(BigInt(c.createdAt) / 1_000_000n),
          cpu: cpuOf(s?.cpu, at), memory: memoryOf(s?.memory, at),
          rootfs: rootfs === null || rootfs === undefined ? undefined : defined<FsStats>({ ...(imageStatfs ?? { time }), usedBytes: u64(rootfs.usedBytes), inodesUsed: u64(rootfs.inodesUsed) }),
          logs: { ...(logsFs ?? { time }), usedBytes: logBytes },
        });
      }));
      const ps = bySandboxStats.get(sb.id);
      const volumes = o.volumes?.podVolumes(uid);
      const sum = (f: (u: FsStats | undefined) => number | undefined): number => usage.reduce((a, c) => a + (f(c.rootfs) ?? 0) + (f(c.logs) ?? 0), 0);
      const ephemeralStorage = defined<FsStats>({
        time, availableBytes: rootFs?.availableBytes, capacityBytes: rootFs?.capacityBytes, inodes: rootFs?.inodes, inodesFree: rootFs?.inodesFree,
        usedBytes: sum((u) => u?.usedBytes) + (volumes?.ephemeral.usedBytes ?? 0),
        inodesUsed: sum((u) => u?.inodesUsed) + (volumes?.ephemeral.inodesUsed ?? 0),
      });
      pods.push(defined<PodUsage>({
        ...id, sandboxId: sb.id, startTime: Number(BigInt(sb.createdAt) / 1_000_000n), containers: usage, volumes: volumes?.volumes, ephemeralStorage,
        cpu: cpuOf(ps?.linux?.cpu, at) ?? sumCpu(usage, time), memory: memoryOf(ps?.linux?.memory, at) ?? sumMemory(usage, time),
        network: ps === undefined ? undefined : networkOf(ps, at),
        processCount: u64(ps?.linux?.process?.processCount),
      }));
    }
    if (readings === undefined) throw new Error(`cannot read the node's counters: ${errors.join('; ')}`);
    const main = readings.interfaces.find((i) => i.name === readings.defaultInterface) ?? readings.interfaces[0];
    return {
      timestamp: at,
      node: defined<NodeUsage>({
        startTime: readings.bootTimeMs, cpu: nodeCpu(readings, at), memory: readings.memory, rlimit: readings.rlimit, fs: rootFs, imageFs,
        network: main === undefined ? undefined : { time, ...main, interfaces: readings.interfaces },
      }),
      pods,
      errors,
    };
  }

  return {
    snapshot(maxAgeMs = cacheMs) {
      const t = now();
      if (cached !== undefined && t - cached.at < Math.min(cacheMs, maxAgeMs)) return cached.value;
      const value = take();
      cached = { at: t, value };
      value.catch(() => { if (cached?.value === value) cached = undefined; }); // a failed snapshot is not reused
      return value;
    },
  };
}

function sumCpu(cs: readonly ContainerUsage[], time: string): CPUStats | undefined {
  if (cs.length === 0 || cs.some((c) => c.cpu === undefined)) return undefined;
  return { time, usageCoreNanoSeconds: cs.reduce((a, c) => a + (c.cpu?.usageCoreNanoSeconds ?? 0), 0), usageNanoCores: cs.reduce((a, c) => a + (c.cpu?.usageNanoCores ?? 0), 0) };
}

function sumMemory(cs: readonly ContainerUsage[], time: string): MemoryStats | undefined {
  if (cs.length === 0 || cs.some((c) => c.memory === undefined)) return undefined;
  return { time, workingSetBytes: cs.reduce((a, c) => a + (c.memory?.workingSetBytes ?? 0), 0), usageBytes: cs.reduce((a, c) => a + (c.memory?.usageBytes ?? 0), 0) };
}
