/**
 * Choosing CPUs for an exclusive allocation (upstream: cpu_assignment.go).
 *
 * Packed (the default): whole NUMA nodes and sockets first when the request needs at least one
 * (NUMA nodes first when a socket holds one or more nodes, sockets first otherwise), then whole
 * cores, then single threads; at each level the candidates with the fewest free CPUs come first
 * (ties by id), which fills partly used cores and nodes before touching empty ones.
 *
 * Distributed (distribute-cpus-across-numa): when more than one NUMA node is needed, the
 * smallest set of nodes over which the request splits evenly (in groups of `groupSize` CPUs)
 * is chosen, the remainder going to the subset that leaves the free CPUs most balanced (lowest
 * standard deviation); packing when no such split exists.
 */
import { allocationFailed } from '../admission.js';
import { CPUSet } from '../cpuset.js';
import type { CPUTopology } from '../machine/index.js';

class Accumulator {
  free: CPUTopology;
  needed: number;
  result = CPUSet.EMPTY;

  constructor(private readonly topo: CPUTopology, available: CPUSet, numCPUs: number) {
    this.free = topo.keepOnly(available);
    this.needed = numCPUs;
  }

  private numaFirst(): boolean {
    return this.topo.numSockets >= this.topo.numNUMANodes;
  }

  /** ids ascending by free CPUs in them, then by id. */
  private sorted(ids: readonly number[], cpusIn: (id: number) => CPUSet): number[] {
    return [...ids].sort((a, b) => cpusIn(a).size() - cpusIn(b).size() || a - b);
  }

  private sortNUMANodes(): number[] {
    if (this.numaFirst()) return this.sorted(this.free.numaNodes().list(), (n) => this.free.cpusInNUMANodes(n));
    return this.sortSockets().flatMap((s) => this.sorted(this.free.numaNodesInSockets(s).list(), (n) => this.free.cpusInNUMANodes(n)));
  }

  private sortSockets(): number[] {
    if (!this.numaFirst()) return this.sorted(this.free.sockets().list(), (s) => this.free.cpusInSockets(s));
    return this.sortNUMANodes().flatMap((n) => this.sorted(this.free.socketsInNUMANodes(n).list(), (s) => this.free.cpusInSockets(s)));
  }

  private sortCores(): number[] {
    const cores = (groups: number[], coresIn: (id: number) => CPUSet): number[] =>
      groups.flatMap((g) => this.sorted(coresIn(g).list(), (c) => this.free.cpusInCores(c)));
    const ordered = this.numaFirst()
      ? cores(this.sortSockets(), (s) => this.free.coresInSockets(s))
      : cores(this.sortNUMANodes(), (n) => this.free.coresInNUMANodes(n));
    return [...new Set(ordered)];
  }

  sortCPUs(): number[] {
    return this.sortCores().flatMap((c) => this.free.cpusInCores(c).list());
  }

  take(cpus: CPUSet): void {
    this.result = this.result.union(cpus);
    this.free = this.topo.keepOnly(this.free.cpus().difference(cpus));
    this.needed -= cpus.size();
  }

  private takeFull(ids: number[], isFree: (id: number) => boolean, whole: (id: number) => CPUSet): void {
    for (const id of ids) {
      const cpus = whole(id);
      if (!isFree(id) || this.needed < cpus.size()) continue;
      this.take(cpus);
    }
  }

  takeFullNUMANodes(): void {
    this.takeFull(this.sortNUMANodes(), (n) => this.free.cpusInNUMANodes(n).size() === this.topo.cpusInNUMANodes(n).size(), (n) => this.topo.cpusInNUMANodes(n));
  }

  takeFullSockets(): void {
    this.takeFull(this.sortSockets(), (s) => this.free.cpusInSockets(s).size() === this.topo.cpusPerSocket(), (s) => this.topo.cpusInSockets(s));
  }

  takeFullCores(): void {
    this.takeFull(this.sortCores(), (c) => this.free.cpusInCores(c).size() === this.topo.cpusPerCore(), (c) => this.topo.cpusInCores(c));
  }

  takeFirstLevels(): void {
    if (this.numaFirst()) {
      this.takeFullNUMANodes();
      if (this.needed > 0) this.takeFullSockets();
    } else {
      this.takeFullSockets();
      if (this.needed > 0) this.takeFullNUMANodes();
    }
  }

  takeRemaining(): void {
    for (const cpu of this.sortCPUs()) {
      if (this.needed < 1) return;
      this.take(CPUSet.of(cpu));
    }
  }
}

function notEnough(numCPUs: number, available: CPUSet): Error {
  return allocationFailed(`not enough cpus available to satisfy request: requested=${numCPUs}, available=${available.size()}`);
}

/** Throws CM_ALLOCATION_FAILED when `available` has fewer than `numCPUs` CPUs. */
export function takeByTopologyPacked(topo: CPUTopology, available: CPUSet, numCPUs: number): CPUSet {
  const acc = new Accumulator(topo, available, numCPUs);
  if (acc.needed < 1) return acc.result;
  if (acc.needed > acc.free.cpus().size()) throw notEnough(numCPUs, available);
  for (const step of [() => { acc.takeFirstLevels(); }, () => { acc.takeFullCores(); }, () => { acc.takeRemaining(); }]) {
    step();
    if (acc.needed < 1) return acc.result;
  }
  throw allocationFailed('failed to allocate cpus');
}

function stdDev(values: readonly number[]): number {
  const mean = Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000;
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
  return Math.round(Math.sqrt(variance) * 1000) / 1000;
}

function combinations(items: readonly number[], k: number): number[][] {
  if (k === 0) return [[]];
  const out: number[][] = [];
  items.forEach((item, i) => { for (const rest of combinations(items.slice(i + 1), k - 1)) out.push([item, ...rest]); });
  return out;
}

interface Choice { readonly balance: number; readonly combo: number[]; readonly remainder: number[] }

/** The best split over the NUMA nodes of one combination, if the request can be spread over them. */
function splitOver(free: CPUTopology, numas: readonly number[], combo: number[], numCPUs: number, groupSize: number): Choice | undefined {
  const freeIn = (n: number): number => free.cpusInNUMANodes(n).size();
  if (free.cpusInNUMANodes(...combo).size() < numCPUs) return undefined;
  if (combo.reduce((a, n) => a + Math.floor(freeIn(n) / groupSize), 0) * groupSize < numCPUs) return undefined;
  const distribution = Math.floor(numCPUs / combo.length / groupSize) * groupSize;
  if (combo.some((n) => freeIn(n) < distribution)) return undefined;
  const after = new Map(numas.map((n) => [n, freeIn(n) - (combo.includes(n) ? distribution : 0)]));
  const remainder = numCPUs - distribution * combo.length;
  if (remainder === 0) return { balance: stdDev([...after.values()]), combo, remainder: [] };
  const candidates = combo.filter((n) => (after.get(n) ?? 0) >= groupSize);
  let best: Choice | undefined;
  for (let k = candidates.length; k >= 1; k--) {
    for (const subset of combinations(candidates, k)) {
      const local = new Map(after);
      if (subset.reduce((a, n) => a + (local.get(n) ?? 0), 0) < remainder) continue;
      let left = remainder;
      while (left > 0) {
        let progressed = false;
        for (const n of subset) {
          if (left === 0) break;
          if ((local.get(n) ?? 0) < groupSize) continue;
          local.set(n, (local.get(n) ?? 0) - groupSize);
          left -= groupSize;
          progressed = true;
        }
        if (!progressed) break;
      }
      const balance = stdDev([...local.values()]);
      if (best === undefined || balance < best.balance) best = { balance, combo, remainder: subset };
    }
  }
  return best;
}

/** distribute-cpus-across-numa; throws as takeByTopologyPacked. */
export function takeByTopologyDistributed(topo: CPUTopology, available: CPUSet, numCPUs: number, groupSize: number): CPUSet {
  if (numCPUs % groupSize !== 0) return takeByTopologyPacked(topo, available, numCPUs);
  const free = topo.keepOnly(available);
  if (numCPUs < 1) return CPUSet.EMPTY;
  if (numCPUs > free.cpus().size()) throw notEnough(numCPUs, available);
  const numas = free.numaNodes().list();
  const machineGroups = Math.floor((topo.numCPUs - 1) / groupSize) + 1;
  const groupsPerNode = Math.floor((machineGroups - 1) / topo.numNUMANodes) + 1;
  const groupsNeeded = Math.floor((numCPUs - 1) / groupSize) + 1;
  const minNodes = Math.floor((groupsNeeded - 1) / groupsPerNode) + 1;
  const maxNodes = Math.min(groupsNeeded, numas.length);
  for (let k = minNodes; k <= maxNodes; k++) {
    let best: Choice | undefined;
    for (const combo of combinations(numas, k)) {
      const choice = splitOver(free, numas, combo, numCPUs, groupSize);
      if (choice !== undefined && (best === undefined || choice.balance < best.balance)) best = choice;
      if (best?.balance === 0) break;
    }
    if (best === undefined) continue;
    let result = CPUSet.EMPTY;
    let left = available;
    const takeFrom = (n: number, count: number): void => {
      const cpus = takeByTopologyPacked(topo, topo.keepOnly(left).cpusInNUMANodes(n), count);
      result = result.union(cpus);
      left = left.difference(cpus);
    };
    const distribution = Math.floor(numCPUs / best.combo.length / groupSize) * groupSize;
    for (const n of best.combo) takeFrom(n, distribution);
    let remainder = numCPUs - distribution * best.combo.length;
    while (remainder > 0) {
      let progressed = false;
      for (const n of best.remainder) {
        if (remainder === 0) break;
        if (topo.keepOnly(left).cpusInNUMANodes(n).size() < groupSize) continue;
        takeFrom(n, groupSize);
        remainder -= groupSize;
        progressed = true;
      }
      if (!progressed) throw allocationFailed(`accounting error, not enough CPUs allocated, remaining: ${remainder}`);
    }
    return result;
  }
  return takeByTopologyPacked(topo, available, numCPUs);
}
