/**
 * Reads the machine's CPU and NUMA topology from sysfs (upstream reads it through cAdvisor's
 * MachineInfo): the online CPUs with their socket and core, and the NUMA nodes with their CPUs,
 * memory, hugepages and distances. Every path is below `sysRoot` (default /sys), so that tests
 * read recorded trees of other machines.
 *
 *   | fact                 | file (below sysRoot)                                              |
 *   |----------------------|-------------------------------------------------------------------|
 *   | online CPUs          | devices/system/cpu/online                                         |
 *   | a CPU's socket       | devices/system/cpu/cpuN/topology/physical_package_id              |
 *   | a CPU's core         | devices/system/cpu/cpuN/topology/thread_siblings_list (lowest id) |
 *   | NUMA nodes           | devices/system/node/nodeM directories                              |
 *   | a node's CPUs        | devices/system/node/nodeM/cpulist                                 |
 *   | a node's memory      | devices/system/node/nodeM/meminfo (`Node M MemTotal: ... kB`)     |
 *   | a node's hugepages   | devices/system/node/nodeM/hugepages/hugepages-<size>kB/nr_hugepages |
 *   | distances            | devices/system/node/nodeM/distance                                |
 *
 * A core is named by the lowest CPU among its threads, as upstream's topology discovery does, so
 * core ids are unique across sockets. A kernel without NUMA (no node directories) is one node 0
 * holding every CPU and MemTotal of /proc/meminfo.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { OrchError, messageOf } from '../../../api/errors.js';
import { CPUSet } from '../cpuset.js';

/** The CPU or NUMA topology cannot be read from sysfs. */
export const CM_TOPOLOGY_UNREADABLE = 'CM_TOPOLOGY_UNREADABLE';

export interface CPUInfo {
  readonly id: number;
  /** The lowest CPU id among the core's threads. */
  readonly coreId: number;
  readonly socketId: number;
  readonly numaNode: number;
}

export interface HugepageInfo {
  readonly pageSizeBytes: number;
  readonly pages: number;
}

export interface NUMANodeInfo {
  readonly id: number;
  readonly cpus: CPUSet;
  readonly memoryBytes: number;
  readonly hugepages: readonly HugepageInfo[];
  /** Distances to every node in id order (node M's own first entry is usually 10). */
  readonly distances: readonly number[];
}

export interface MachineTopology {
  readonly cpus: readonly CPUInfo[];
  readonly numaNodes: readonly NUMANodeInfo[];
}

export interface ReadTopologyOptions {
  /** Default /sys. */
  readonly sysRoot?: string;
  /** Where MemTotal is read when the kernel has no NUMA nodes (default /proc/meminfo). */
  readonly meminfoPath?: string;
}

async function text(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    throw new OrchError(CM_TOPOLOGY_UNREADABLE, 'unavailable', `cannot read ${path}: ${messageOf(err)}`, { subject: path, cause: err });
  }
}

async function integer(path: string): Promise<number> {
  const value = Number(await text(path));
  if (!Number.isInteger(value)) throw new OrchError(CM_TOPOLOGY_UNREADABLE, 'unavailable', `${path} does not hold an integer`, { subject: path });
  return value;
}

async function entries(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
    throw new OrchError(CM_TOPOLOGY_UNREADABLE, 'unavailable', `cannot list ${dir}: ${messageOf(err)}`, { subject: dir, cause: err });
  }
}

function memTotalKiB(meminfo: string, path: string): number {
  const m = /MemTotal:\s+(\d+)\s*kB/.exec(meminfo);
  if (m?.[1] === undefined) throw new OrchError(CM_TOPOLOGY_UNREADABLE, 'unavailable', `${path} has no MemTotal`, { subject: path });
  return Number(m[1]);
}

async function readHugepages(dir: string): Promise<HugepageInfo[]> {
  const names = (await entries(dir)) ?? [];
  const result: HugepageInfo[] = [];
  for (const name of names) {
    const m = /^hugepages-(\d+)kB$/.exec(name);
    if (m?.[1] === undefined) continue;
    result.push({ pageSizeBytes: Number(m[1]) * 1024, pages: await integer(join(dir, name, 'nr_hugepages')) });
  }
  return result.sort((a, b) => a.pageSizeBytes - b.pageSizeBytes);
}

async function readNode(nodeDir: string, id: number): Promise<NUMANodeInfo> {
  const meminfoPath = join(nodeDir, 'meminfo');
  const distance = await text(join(nodeDir, 'distance'));
  return {
    id,
    cpus: CPUSet.parse(await text(join(nodeDir, 'cpulist')), join(nodeDir, 'cpulist')),
    memoryBytes: memTotalKiB(await text(meminfoPath), meminfoPath) * 1024,
    hugepages: await readHugepages(join(nodeDir, 'hugepages')),
    distances: distance === '' ? [] : distance.split(/\s+/).map(Number),
  };
}

/** Reads the topology. Throws CM_TOPOLOGY_UNREADABLE (unavailable) when a file is missing or malformed. */
export async function readMachineTopology(options: ReadTopologyOptions = {}): Promise<MachineTopology> {
  const sys = options.sysRoot ?? '/sys';
  const cpuDir = join(sys, 'devices/system/cpu');
  const online = CPUSet.parse(await text(join(cpuDir, 'online')), join(cpuDir, 'online'));
  const nodeDir = join(sys, 'devices/system/node');
  const nodeIds = ((await entries(nodeDir)) ?? [])
    .map((name) => /^node(\d+)$/.exec(name)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  let numaNodes: NUMANodeInfo[];
  if (nodeIds.length === 0) {
    const meminfoPath = options.meminfoPath ?? '/proc/meminfo';
    numaNodes = [{ id: 0, cpus: online, memoryBytes: memTotalKiB(await text(meminfoPath), meminfoPath) * 1024, hugepages: [], distances: [10] }];
  } else {
    numaNodes = await Promise.all(nodeIds.map((id) => readNode(join(nodeDir, `node${id}`), id)));
  }
  const cpus = await Promise.all(online.list().map(async (id): Promise<CPUInfo> => {
    const topo = join(cpuDir, `cpu${id}`, 'topology');
    const siblings = CPUSet.parse(await text(join(topo, 'thread_siblings_list')), join(topo, 'thread_siblings_list'));
    const node = numaNodes.find((n) => n.cpus.has(id));
    return { id, coreId: siblings.list()[0] ?? id, socketId: await integer(join(topo, 'physical_package_id')), numaNode: node?.id ?? 0 };
  }));
  return { cpus, numaNodes };
}
