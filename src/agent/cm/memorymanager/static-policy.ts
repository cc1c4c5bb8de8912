/**
 * The memory manager's static policy (upstream: memorymanager/policy_static.go): Guaranteed
 * pods' containers get their memory and hugepages requests from NUMA nodes chosen with the
 * topology manager's affinity (or, without one, the narrowest nodes that fit). A node allocated
 * alone is never grouped with others later and a group is only reused whole, as upstream. Memory
 * given to init containers is reused by the pod's later containers on the same nodes.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../../api/pod/index.js';

import { parseQuantity, quantityValue } from '../../../api/quantity.js';
import { allocationFailed } from '../admission.js';
import type { NUMANodeInfo } from '../machine/index.js';
import { qosClass } from '../../../api/pod/index.js';
import {
  bitsOf, countOf, isNarrowerThan, iterateBitMasks, maskOf, type AffinityStore, type BitMask, type ProviderHints, type TopologyHint,
} from '../topologymanager/index.js';
import type { Block, MachineState, MemoryState, NUMANodeState } from './state.js';

/** System-reserved bytes by NUMA node and resource (from reservedMemory). */
export type ReservedMemory = ReadonlyMap<number, ReadonlyMap<string, number>>;
type Requests = Map<string, number>;

/** `hugepages-2Mi` for 2 MiB pages (upstream HugePageResourceName). */
export function hugepageResource(pageSizeBytes: number): string {
  for (const [unit, size] of [['Gi', 1024 ** 3], ['Mi', 1024 ** 2], ['Ki', 1024]] as const) {
    if (pageSizeBytes % size === 0) return `hugepages-${pageSizeBytes / size}${unit}`;
  }
  return `hugepages-${pageSizeBytes}`;
}

function isMemoryResource(name: string): boolean {
  return name === 'memory' || name.startsWith('hugepages-');
}

/** The memory and hugepages a container requests, in bytes. */
export function containerRequests(container: Container): Requests {
  const requests = new Map<string, number>();
  const source = { ...container.resources?.limits, ...container.resources?.requests };
  for (const [name, text] of Object.entries(source)) if (isMemoryResource(name)) requests.set(name, quantityValue(parseQuantity(text)));
  return requests;
}

/** The pod's requests: its long-running containers' sum or its init containers' peak, per resource. */
export function podRequests(pod: NodePod): Requests {
  const init = new Map<string, number>();
  const restartable = new Map<string, number>();
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [name, bytes] of containerRequests(c)) {
      if (c.restartPolicy === 'Always') restartable.set(name, (restartable.get(name) ?? 0) + bytes);
      else init.set(name, Math.max(init.get(name) ?? 0, (restartable.get(name) ?? 0) + bytes));
    }
  }
  const app = new Map<string, number>();
  for (const c of pod.spec?.containers ?? []) for (const [name, bytes] of containerRequests(c)) app.set(name, (app.get(name) ?? 0) + bytes);
  const result = new Map<string, number>();
  for (const [name, bytes] of app) result.set(name, Math.max(bytes + (restartable.get(name) ?? 0), init.get(name) ?? 0));
  return result;
}

function sameGroup(a: readonly number[] | null, b: readonly number[]): boolean {
  const x = [...(a ?? [])].sort((p, q) => p - q);
  const y = [...b].sort((p, q) => p - q);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function cloneMachine(m: MachineState): MachineState {
  return new Map([...m].map(([id, n]) => [id, { numberOfAssignments: n.numberOfAssignments, cells: n.cells === null ? null : [...n.cells], memoryMap: new Map([...n.memoryMap].map(([r, t]) => [r, { ...t }])) }]));
}

/** A node group that mixes single-node and multi-node allocations (upstream isAffinityViolatingNUMAAllocations). */
function violatesGroups(machine: MachineState, mask: BitMask): boolean {
  const bits = bitsOf(mask);
  if (bits.length === 1) return false;
  return bits.some((id) => {
    const n = machine.get(id);
    if (n === undefined || n.numberOfAssignments === 0) return false;
    return (n.cells?.length ?? 0) === 1 || !sameGroup(n.cells, bits);
  });
}

export class StaticMemoryPolicy {
  readonly name = 'Static';
  /** Init containers' memory that later containers of the same pod reuse: pod → mask → resource → bytes. */
  private readonly reusable = new Map<string, Map<number, Map<string, number>>>();

  constructor(
    private readonly nodes: readonly NUMANodeInfo[],
    private readonly systemReserved: ReservedMemory,
    private readonly affinity: AffinityStore,
  ) {}

  private reservedOf(node: number, resource: string): number {
    return this.systemReserved.get(node)?.get(resource) ?? 0;
  }

  defaultMachineState(): MachineState {
    const machine: MachineState = new Map();
    for (const node of this.nodes) {
      const state: NUMANodeState = { numberOfAssignments: 0, memoryMap: new Map(), cells: [node.id] };
      let hugepagesTotal = 0;
      for (const hp of node.hugepages) {
        const name = hugepageResource(hp.pageSizeBytes);
        const total = hp.pages * hp.pageSizeBytes;
        const allocatable = total - this.reservedOf(node.id, name);
        state.memoryMap.set(name, { total, systemReserved: this.reservedOf(node.id, name), allocatable, reserved: 0, free: allocatable });
        hugepagesTotal += total;
      }
      const allocatable = node.memoryBytes - this.reservedOf(node.id, 'memory') - hugepagesTotal;
      state.memoryMap.set('memory', { total: node.memoryBytes, systemReserved: this.reservedOf(node.id, 'memory'), allocatable, reserved: 0, free: allocatable });
      machine.set(node.id, state);
    }
    return machine;
  }

  /** upstream validateState: the stored machine state must be the default one plus the stored blocks. Throws. */
  start(state: MemoryState): void {
    if (state.machine.size === 0) {
      if (state.entries.size > 0) throw new Error('[memorymanager] machine state can not be empty when it has memory assignments');
      state.setMachine(this.defaultMachineState());
      state.store();
      return;
    }
    const expected = this.defaultMachineState();
    for (const [pod, containers] of state.entries) {
      for (const [name, blocks] of containers) {
        for (const b of blocks) {
          if ((b.numaAffinity ?? []).some((id) => expected.get(id)?.memoryMap.get(b.type) === undefined)) {
            throw new Error(`[memorymanager] (pod: ${pod}, container: ${name}) the memory assignment uses a NUMA node or memory resource that does not exist`);
          }
          this.reserve(expected, b.numaAffinity ?? [], b.type, b.size);
        }
      }
    }
    for (const [id, want] of expected) {
      const got = state.machine.get(id);
      const same = got !== undefined && got.numberOfAssignments === want.numberOfAssignments && sameGroup(got.cells, want.cells ?? [])
        && got.memoryMap.size === want.memoryMap.size
        && [...want.memoryMap].every(([r, t]) => {
          const g = got.memoryMap.get(r);
          return g !== undefined && g.total === t.total && g.systemReserved === t.systemReserved && g.allocatable === t.allocatable && g.free === t.free && g.reserved === t.reserved;
        });
      if (!same) throw new Error(`[memorymanager] the expected machine state is different from the real one (NUMA node ${id})`);
    }
    if (state.machine.size !== expected.size) throw new Error('[memorymanager] the expected machine state is different from the real one (NUMA nodes)');
  }

  /** Counts an allocation of `size` bytes over `nodes` (upstream updateMachineState). */
  private reserve(machine: MachineState, nodes: readonly number[], resource: string, size: number): void {
    let left = size;
    for (const id of nodes) {
      const n = machine.get(id);
      if (n === undefined) continue;
      n.numberOfAssignments++;
      n.cells = [...nodes];
      const t = n.memoryMap.get(resource);
      if (left === 0 || t === undefined || t.free <= 0) continue;
      const taken = Math.min(t.free, left);
      t.reserved += taken;
      t.free -= taken;
      left -= taken;
    }
  }

  private reusableOf(podUID: string, mask: BitMask, resource: string): number {
    return this.reusable.get(podUID)?.get(mask)?.get(resource) ?? 0;
  }

  allocate(state: MemoryState, pod: NodePod, container: Container): void {
    if (qosClass(pod) !== 'Guaranteed') return;
    const uid = pod.metadata.uid;
    const existing = state.entries.get(uid)?.get(container.name);
    if (existing !== undefined) {
      this.updateReusable(pod, container, existing);
      return;
    }
    const requests = containerRequests(container);
    if (requests.size === 0) return;
    const machine = cloneMachine(state.machine);
    const hint = this.affinity.affinity(uid, container.name);
    let best: TopologyHint = hint;
    if (hint.numaAffinity === undefined) {
      const all = this.calculateHints(machine, uid, requests);
      const fallback = this.bestHint(all.get('memory') ?? [...all.values()][0] ?? []);
      if (fallback === undefined) throw allocationFailed('[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available');
      if (!fallback.preferred && hint.preferred) throw allocationFailed('[memorymanager] failed to find the default preferred hint');
      best = fallback;
    }
    let mask = best.numaAffinity ?? maskOf(...this.nodes.map((n) => n.id));
    if (!this.satisfies(machine, mask, requests)) {
      const wider = (this.calculateHints(machine, uid, requests).get('memory') ?? []).filter((h) => bitsOf(mask).every((b) => bitsOf(h.numaAffinity ?? 0).includes(b)));
      const extended = this.bestHint(wider);
      if (extended === undefined) throw allocationFailed('[memorymanager] failed to find NUMA nodes to extend the current topology hint');
      if (!extended.preferred && best.preferred) throw allocationFailed('[memorymanager] failed to find the extended preferred hint');
      mask = extended.numaAffinity ?? mask;
    }
    if (violatesGroups(machine, mask)) throw allocationFailed('[memorymanager] preferred hint violates NUMA node allocation');
    const nodes = bitsOf(mask);
    const blocks: Block[] = [];
    for (const [resource, size] of requests) {
      blocks.push({ numaAffinity: nodes, type: resource, size });
      const reused = this.reusableOf(uid, mask, resource);
      this.reserve(machine, nodes, resource, reused >= size ? 0 : size - reused);
    }
    this.updateReusable(pod, container, blocks);
    state.setMachine(machine);
    const containers = state.entries.get(uid) ?? new Map<string, Block[]>();
    containers.set(container.name, blocks);
    state.entries.set(uid, containers);
    this.shrinkInitBlocks(state, pod, container, blocks);
    state.store();
  }

  /** Init containers' blocks give up what a later container reused (upstream updateInitContainersMemoryBlocks). */
  private shrinkInitBlocks(state: MemoryState, pod: NodePod, container: Container, blocks: readonly Block[]): void {
    const containers = state.entries.get(pod.metadata.uid);
    for (const block of blocks) {
      let size = block.size;
      for (const init of pod.spec?.initContainers ?? []) {
        if (init.name === container.name || size === 0) break;
        if (init.restartPolicy === 'Always') continue;
        for (const b of containers?.get(init.name) ?? []) {
          if (b.size === 0 || b.type !== block.type || !sameGroup(b.numaAffinity, block.numaAffinity ?? [])) continue;
          const taken = Math.min(b.size, size);
          b.size -= taken;
          size -= taken;
        }
      }
    }
  }

  private updateReusable(pod: NodePod, container: Container, blocks: readonly Block[]): void {
    const uid = pod.metadata.uid;
    for (const other of this.reusable.keys()) if (other !== uid) this.reusable.delete(other);
    const init = (pod.spec?.initContainers ?? []).find((c) => c.name === container.name);
    const byMask = this.reusable.get(uid) ?? new Map<number, Map<string, number>>();
    this.reusable.set(uid, byMask);
    for (const b of blocks) {
      const mask = maskOf(...(b.numaAffinity ?? []));
      const byResource = byMask.get(mask) ?? new Map<string, number>();
      byMask.set(mask, byResource);
      const current = byResource.get(b.type) ?? 0;
      if (init !== undefined && init.restartPolicy !== 'Always') byResource.set(b.type, Math.max(current, b.size));
      else if (init === undefined && current !== 0) byResource.set(b.type, b.size >= current ? 0 : current - b.size);
    }
  }

  removeContainer(state: MemoryState, podUID: string, name: string): void {
    const containers = state.entries.get(podUID);
    const blocks = containers?.get(name);
    if (containers === undefined || blocks === undefined) return;
    containers.delete(name);
    if (containers.size === 0) state.entries.delete(podUID);
    const machine = cloneMachine(state.machine);
    for (const b of blocks) {
      let released = b.size;
      for (const id of b.numaAffinity ?? []) {
        const n = machine.get(id);
        if (n === undefined) continue;
        n.numberOfAssignments--;
        if (n.numberOfAssignments === 0) n.cells = [id];
        const t = n.memoryMap.get(b.type);
        if (released === 0 || t === undefined || t.reserved === 0) continue;
        const freed = Math.min(t.reserved, released);
        t.free += freed;
        t.reserved -= freed;
        released -= freed;
      }
    }
    state.setMachine(machine);
    state.store();
  }

  forgetPod(podUID: string): void {
    this.reusable.delete(podUID);
  }

  private satisfies(machine: MachineState, mask: BitMask, requests: Requests): boolean {
    return [...requests].every(([r, size]) => bitsOf(mask).reduce((sum, id) => sum + (machine.get(id)?.memoryMap.get(r)?.free ?? 0), 0) >= size);
  }

  private bestHint(hints: readonly TopologyHint[]): TopologyHint | undefined {
    let best: TopologyHint | undefined;
    for (const h of hints) {
      if (best === undefined || (h.preferred && !best.preferred) || (h.preferred === best.preferred && isNarrowerThan(h.numaAffinity ?? 0, best.numaAffinity ?? 0))) best = h;
    }
    return best;
  }

  /** upstream calculateHints: masks with enough allocatable and free memory that respect the node groups. */
  calculateHints(machine: MachineState, podUID: string, requests: Requests): Map<string, TopologyHint[]> {
    const nodes = [...machine.keys()].sort((a, b) => a - b);
    let minAffinity = nodes.length;
    const masks: BitMask[] = [];
    iterateBitMasks(nodes, (mask) => {
      const bits = bitsOf(mask);
      const sum = (r: string, f: 'free' | 'allocatable'): number => bits.reduce((s, id) => s + (machine.get(id)?.memoryMap.get(r)?.[f] ?? 0), 0);
      if ([...requests].some(([r, size]) => sum(r, 'allocatable') < size)) return;
      if (countOf(mask) < minAffinity) minAffinity = countOf(mask);
      if (bits.length === 1 && (machine.get(bits[0] ?? -1)?.cells?.length ?? 0) > 1) return;
      for (const id of bits) {
        const n = machine.get(id);
        if (bits.length > 1 && n !== undefined && n.numberOfAssignments > 0 && ((n.cells?.length ?? 0) === 1 || !sameGroup(n.cells, bits))) return;
      }
      if ([...requests].some(([r, size]) => sum(r, 'free') + this.reusableOf(podUID, mask, r) < size)) return;
      masks.push(mask);
    });
    const hints = new Map<string, TopologyHint[]>();
    for (const r of requests.keys()) hints.set(r, masks.map((mask) => ({ numaAffinity: mask, preferred: countOf(mask) === minAffinity })));
    return hints;
  }

  private hintsFor(state: MemoryState, podUID: string, requests: Requests, allocated: readonly Block[] | undefined): ProviderHints {
    if (allocated !== undefined) {
      const hints: Record<string, TopologyHint[]> = {};
      for (const r of requests.keys()) hints[r] = [];
      if (allocated.length !== requests.size) return undefined;
      for (const b of allocated) {
        if (requests.get(b.type) !== b.size) return undefined;
        hints[b.type] = [...(hints[b.type] ?? []), { numaAffinity: maskOf(...(b.numaAffinity ?? [])), preferred: true }];
      }
      return hints;
    }
    return Object.fromEntries(this.calculateHints(state.machine, podUID, requests));
  }

  topologyHints(state: MemoryState, pod: NodePod, container: Container): ProviderHints {
    if (qosClass(pod) !== 'Guaranteed') return undefined;
    return this.hintsFor(state, pod.metadata.uid, containerRequests(container), state.entries.get(pod.metadata.uid)?.get(container.name));
  }

  podTopologyHints(state: MemoryState, pod: NodePod): ProviderHints {
    if (qosClass(pod) !== 'Guaranteed') return undefined;
    const requests = podRequests(pod);
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      const blocks = state.entries.get(pod.metadata.uid)?.get(c.name);
      if (blocks !== undefined) return this.hintsFor(state, pod.metadata.uid, requests, blocks);
    }
    return this.hintsFor(state, pod.metadata.uid, requests, undefined);
  }
}
