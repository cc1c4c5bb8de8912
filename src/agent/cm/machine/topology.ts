/**
 * The CPU topology as the CPU manager asks it (upstream: topology.CPUTopology and CPUDetails):
 * which CPUs, cores, sockets and NUMA nodes there are, and which contain which. `keepOnly`
 * narrows the details to a set of CPUs (the free ones, for the allocation algorithms) while the
 * totals (CPUs per core, per socket) stay those of the whole machine.
 */
import { CPUSet } from '../cpuset.js';
import type { CPUInfo, MachineTopology } from './sysfs.js';

export class CPUTopology {
  readonly numCPUs: number;
  readonly numCores: number;
  readonly numSockets: number;
  readonly numNUMANodes: number;

  /** The whole machine's topology. */
  static of(machine: MachineTopology): CPUTopology {
    return new CPUTopology(machine.cpus, undefined);
  }

  private constructor(
    private readonly details: readonly CPUInfo[],
    whole: CPUTopology | undefined,
  ) {
    const all = whole?.details ?? details;
    this.numCPUs = whole?.numCPUs ?? all.length;
    this.numCores = whole?.numCores ?? new Set(all.map((c) => c.coreId)).size;
    this.numSockets = whole?.numSockets ?? new Set(all.map((c) => c.socketId)).size;
    this.numNUMANodes = whole?.numNUMANodes ?? new Set(all.map((c) => c.numaNode)).size;
  }

  /** The same machine with only `cpus` left in its details. */
  keepOnly(cpus: CPUSet): CPUTopology {
    return new CPUTopology(this.details.filter((c) => cpus.has(c.id)), this);
  }

  cpusPerCore(): number {
    return this.numCores === 0 ? 0 : this.numCPUs / this.numCores;
  }

  cpusPerSocket(): number {
    return this.numSockets === 0 ? 0 : this.numCPUs / this.numSockets;
  }

  info(cpu: number): CPUInfo | undefined {
    return this.details.find((c) => c.id === cpu);
  }

  cpus(): CPUSet {
    return CPUSet.of(...this.details.map((c) => c.id));
  }

  numaNodes(): CPUSet {
    return CPUSet.of(...this.details.map((c) => c.numaNode));
  }

  sockets(): CPUSet {
    return CPUSet.of(...this.details.map((c) => c.socketId));
  }

  cores(): CPUSet {
    return CPUSet.of(...this.details.map((c) => c.coreId));
  }

  cpusInNUMANodes(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.numaNode)).map((c) => c.id));
  }

  cpusInSockets(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.socketId)).map((c) => c.id));
  }

  cpusInCores(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.coreId)).map((c) => c.id));
  }

  coresInNUMANodes(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.numaNode)).map((c) => c.coreId));
  }

  coresInSockets(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.socketId)).map((c) => c.coreId));
  }

  socketsInNUMANodes(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.numaNode)).map((c) => c.socketId));
  }

  numaNodesInSockets(...ids: readonly number[]): CPUSet {
    return CPUSet.of(...this.details.filter((c) => ids.includes(c.socketId)).map((c) => c.numaNode));
  }

  /** Every CPU sharing a core with one of `cpus` (the cores' whole thread sets). */
  coreSiblingsOf(cpus: CPUSet): CPUSet {
    const cores = CPUSet.of(...this.details.filter((c) => cpus.has(c.id)).map((c) => c.coreId));
    return this.cpusInCores(...cores.list());
  }
}
