/**
 * The node's capacity as the downward API reads it: what an unset container limit means to
 * resourceFieldRefs (env and downwardAPI volumes). The composition root reads it once
 * (upstream's machine info is read at start, too) and hands it to the modules that need it.
 */
import { cpus, totalmem } from 'node:os';

export interface NodeCapacity {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
  readonly ephemeralStorageBytes?: number;
}

/** This machine's CPUs and memory. os.cpus() parses /proc/cpuinfo at each call: read it once, not per container. */
export function readNodeCapacity(): NodeCapacity {
  return { cpuMilli: cpus().length * 1000, memoryBytes: totalmem() };
}
