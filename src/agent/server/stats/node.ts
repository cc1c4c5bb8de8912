/**
 * The node's own usage, read from the kernel: CPU time from /proc/stat, memory from
 * /proc/meminfo and /proc/vmstat (working set = used - inactive file pages, as upstream
 * computes it from the root cgroup), network counters from /proc/net/dev, process limits from
 * /proc/sys/kernel/pid_max and /proc/loadavg, and file systems by statfs. Parsers are pure
 * and exported for tests.
 */
import { readFile, statfs } from 'node:fs/promises';
import type { FsStats, InterfaceStats, MemoryStats, RlimitStats } from './types.js';

/** USER_HZ of /proc/stat on Linux. */
const TICK_NS = 10_000_000;

/** Cumulative busy CPU time of all cores in nanoseconds (user, nice, system, irq, softirq, steal). */
export function parseProcStat(text: string): number {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) throw new Error('/proc/stat has no cpu line');
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) * TICK_NS;
}

/** /proc/meminfo in bytes by key. */
export function parseMeminfo(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], Number(m[2]) * (line.includes('kB') ? 1024 : 1));
  }
  return out;
}

export function parseVmstat(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [k, v] = line.split(' ');
    if (k !== undefined && v !== undefined && k !== '') out.set(k, Number(v));
  }
  return out;
}

/** Node memory as upstream reports it from the root cgroup's counters. */
export function nodeMemory(meminfo: ReadonlyMap<string, number>, vmstat: ReadonlyMap<string, number>, time: string): MemoryStats & { capacity: number } {
  const total = meminfo.get('MemTotal') ?? 0;
  const usage = total - (meminfo.get('MemFree') ?? 0);
  const workingSet = Math.max(0, usage - (meminfo.get('Inactive(file)') ?? 0));
  return {
    time,
    capacity: total,
    availableBytes: Math.max(0, total - workingSet),
    usageBytes: usage,
    workingSetBytes: workingSet,
    rssBytes: meminfo.get('AnonPages') ?? 0,
    pageFaults: vmstat.get('pgfault') ?? 0,
    majorPageFaults: vmstat.get('pgmajfault') ?? 0,
  };
}

/** Interfaces of /proc/net/dev (loopback left out). */
export function parseNetDev(text: string): InterfaceStats[] {
  const out: InterfaceStats[] = [];
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (name === 'lo') continue;
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    out.push({ name, rxBytes: f[0] ?? 0, rxErrors: f[2] ?? 0, txBytes: f[8] ?? 0, txErrors: f[10] ?? 0 });
  }
  return out;
}

/** The interface of the IPv4 default route in /proc/net/route, if any. */
export function defaultRouteInterface(text: string): string | undefined {
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === '00000000' && f[7] === '00000000') return f[0];
  }
  return undefined;
}

export async function fsStats(path: string, time: string): Promise<FsStats> {
  const s = await statfs(path);
  return {
    time,
    availableBytes: s.bavail * s.bsize,
    capacityBytes: s.blocks * s.bsize,
    usedBytes: (s.blocks - s.bfree) * s.bsize,
    inodesFree: s.ffree,
    inodes: s.files,
    inodesUsed: s.files - s.ffree,
  };
}

export interface NodeReadings {
  readonly cpuNanos: number;
  readonly memory: MemoryStats & { capacity: number };
  readonly interfaces: readonly InterfaceStats[];
  readonly defaultInterface: string | undefined;
  readonly rlimit: RlimitStats;
  readonly bootTimeMs: number;
}

async function text(path: string): Promise<string> {
  return readFile(path, 'utf8');
}

/** One reading of the node's counters under `procDir` (default /proc). */
export async function readNode(time: string, procDir = '/proc'): Promise<NodeReadings> {
  const [stat, meminfo, vmstat, netdev, route, pidMax, loadavg] = await Promise.all([
    text(`${procDir}/stat`), text(`${procDir}/meminfo`), text(`${procDir}/vmstat`), text(`${procDir}/net/dev`),
    text(`${procDir}/net/route`).catch(() => ''), // no IPv4 routing table: no default interface
    text(`${procDir}/sys/kernel/pid_max`), text(`${procDir}/loadavg`),
  ]);
  const btime = /^btime (\d+)/m.exec(stat)?.[1];
  const procs = /\d+\/(\d+)/.exec(loadavg)?.[1];
  return {
    cpuNanos: parseProcStat(stat),
    memory: nodeMemory(parseMeminfo(meminfo), parseVmstat(vmstat), time),
    interfaces: parseNetDev(netdev),
    defaultInterface: defaultRouteInterface(route),
    rlimit: { time, maxpid: Number(pidMax.trim()), ...(procs === undefined ? {} : { curproc: Number(procs) }) },
    bootTimeMs: btime === undefined ? 0 : Number(btime) * 1000,
  };
}
