/**
 * The node's signal sources, read as upstream's stats (cadvisor and the kubelet's own readers)
 * compute them:
 *
 *   | signal                      | source                                                          |
 *   |-----------------------------|-----------------------------------------------------------------|
 *   | memory.available            | MemTotal (/proc/meminfo) minus the root memory cgroup's working |
 *   |                             | set: memory.usage_in_bytes minus total_inactive_file (cgroup   |
 *   |                             | v1); without a v1 memory hierarchy, /proc/meminfo's used minus |
 *   |                             | Inactive(file)                                                  |
 *   | allocatableMemory.available | the pods cgroup's memory limit minus its working set (absent   |
 *   |                             | while the limit is unset)                                       |
 *   | nodefs.*                    | statfs of the agent's root directory                            |
 *   | imagefs.*                   | statfs of the runtime's image file system                       |
 *   | pid.available               | min(kernel.pid_max, kernel.threads-max) minus the running tasks |
 *   |                             | of /proc/loadavg                                                |
 *
 * Every path is injectable (procDir, the memory cgroup directories) for tests.
 */
import { readFile, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { FsReading, MemoryReading, SignalReader } from './types.js';

/** A cgroup memory limit at or above this is "no limit" (v1 reports the page-rounded int64 maximum). */
const UNLIMITED = 2 ** 60;

export interface SignalReaderOptions {
  /** The agent's root directory: the node file system. */
  readonly rootDir: string;
  /** The runtime's image file system (a path on it); undefined when it cannot be found. */
  readonly imageFsPath: () => Promise<string | undefined>;
  /** Default /proc. */
  readonly procDir?: string;
  /** The root of the cgroup v1 memory hierarchy (e.g. /sys/fs/cgroup/memory); undefined: /proc/meminfo. */
  readonly memoryCgroupDir?: string | undefined;
  /** The pods cgroup below the memory hierarchy (allocatableMemory.available); undefined: no such signal. */
  readonly podsCgroupDir?: string | undefined;
  readonly clock: Pick<Clock, 'now'>;
}

/** "key value" lines (memory.stat) as numbers by key. */
export function parseKeyValues(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k !== undefined && v !== undefined && k !== '') out.set(k, Number(v));
  }
  return out;
}

/** /proc/meminfo in bytes by key. */
export function parseMeminfoBytes(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)(\s+kB)?/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1], Number(m[2]) * (m[3] === undefined ? 1 : 1024));
  }
  return out;
}

const number = async (path: string): Promise<number> => {
  const text = (await readFile(path, 'utf8')).trim();
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) throw new Error(`${path}: not a number: ${JSON.stringify(text)}`);
  return n;
};

/** A v1 memory cgroup's usage and working set; `capacity` given, or its own limit. */
async function cgroupMemory(dir: string, capacity: number | undefined): Promise<MemoryReading | undefined> {
  const [usage, statText, limit] = await Promise.all([
    number(join(dir, 'memory.usage_in_bytes')),
    readFile(join(dir, 'memory.stat'), 'utf8'),
    capacity === undefined ? number(join(dir, 'memory.limit_in_bytes')) : Promise.resolve(capacity),
  ]);
  if (limit >= UNLIMITED) return undefined;
  const inactive = parseKeyValues(statText).get('total_inactive_file') ?? 0;
  const workingSet = Math.max(0, usage - inactive);
  return { usageBytes: usage, workingSetBytes: workingSet, availableBytes: Math.max(0, limit - workingSet) };
}

async function fsReading(path: string): Promise<FsReading> {
  const [s, st] = await Promise.all([statfs(path), stat(path)]);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree, device: st.dev };
}

/** The running tasks of /proc/loadavg ("0.00 0.01 0.05 2/345 6789": 345). */
export function runningTasks(loadavg: string): number {
  const m = /\d+\/(\d+)/.exec(loadavg);
  if (m?.[1] === undefined) throw new Error(`/proc/loadavg: no task count in ${JSON.stringify(loadavg.trim())}`);
  return Number(m[1]);
}

export function createSignalReader(o: SignalReaderOptions): SignalReader {
  const proc = o.procDir ?? '/proc';
  let imagePath: string | undefined;

  const memory = async (): Promise<MemoryReading | undefined> => {
    const meminfo = parseMeminfoBytes(await readFile(join(proc, 'meminfo'), 'utf8'));
    const total = meminfo.get('MemTotal') ?? 0;
    if (o.memoryCgroupDir !== undefined) return cgroupMemory(o.memoryCgroupDir, total);
    const usage = total - (meminfo.get('MemFree') ?? 0);
    const workingSet = Math.max(0, usage - (meminfo.get('Inactive(file)') ?? 0));
    return { usageBytes: usage, workingSetBytes: workingSet, availableBytes: Math.max(0, total - workingSet) };
  };

  const pids = async (): Promise<{ max: number; running: number }> => {
    const limits = await Promise.all(['pid_max', 'threads-max'].map((f) => number(join(proc, 'sys/kernel', f)).catch(() => undefined)));
    const known = limits.filter((n): n is number => n !== undefined);
    if (known.length === 0) throw new Error(`neither ${proc}/sys/kernel/pid_max nor threads-max can be read`);
    return { max: Math.min(...known), running: runningTasks(await readFile(join(proc, 'loadavg'), 'utf8')) };
  };

  const imagefs = async (): Promise<FsReading | undefined> => {
    imagePath ??= await o.imageFsPath();
    return imagePath === undefined ? undefined : fsReading(imagePath);
  };

  return {
    async read() {
      const time = o.clock.now();
      const errors: string[] = [];
      const soft = <T>(what: string, p: Promise<T>): Promise<T | undefined> => p.catch((err: unknown) => {
        errors.push(`${what}: ${messageOf(err)}`);
        return undefined;
      });
      const [mem, allocatable, nodefs, image, pid] = await Promise.all([
        soft('memory', memory()),
        o.podsCgroupDir === undefined ? undefined : soft('pods cgroup memory', cgroupMemory(o.podsCgroupDir, undefined)),
        soft('node file system', fsReading(o.rootDir)),
        soft('image file system', imagefs()),
        soft('pids', pids()),
      ]);
      return {
        time, errors,
        ...(mem === undefined ? {} : { memory: mem }),
        ...(allocatable === undefined ? {} : { allocatableMemory: allocatable }),
        ...(nodefs === undefined ? {} : { nodefs }),
        ...(image === undefined ? {} : { imagefs: image }),
        ...(pid === undefined ? {} : { pids: pid }),
      };
    },
  };
}
