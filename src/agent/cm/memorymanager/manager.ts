/**
 * The memory manager (upstream: memory_manager.go): the None or Static policy over the state
 * file, `reservedMemory` checked against node allocatable at start, hints and allocation for the
 * topology manager, and each container's NUMA nodes for its cpuset.mems.
 *
 * reservedMemory must reserve, per memory type, exactly what node allocatable reserves (system,
 * orch and hard-eviction memory; hugepages from the reservations), on NUMA nodes that exist;
 * the Static policy also needs some memory reserved. Anything else stops the agent at start.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../../api/pod/index.js';

import { OrchError, messageOf } from '../../../api/errors.js';
import { parseQuantity, quantityValue } from '../../../api/quantity.js';
import type { Logger } from '../../logging/index.js';
import { CPUSet } from '../cpuset.js';
import type { NUMANodeInfo } from '../machine/index.js';
import type { AffinityStore, HintProvider, ProviderHints } from '../topologymanager/index.js';
import { CM_MEMORY_STATE_INVALID, openMemoryState } from './state.js';
import { StaticMemoryPolicy, type ReservedMemory } from './static-policy.js';

/** reservedMemory does not match node allocatable or the machine, or the Static policy has none. */
export const CM_MEMORY_MANAGER_CONFIG = 'CM_MEMORY_MANAGER_CONFIG';

/** Memory of one type on some NUMA nodes (upstream state.Block). */
export interface MemoryBlock {
  readonly type: string;
  readonly bytes: number;
  readonly numaNodes: readonly number[];
}

export interface MemoryReservation {
  readonly numaNode: number;
  readonly limits: Readonly<Record<string, string>>;
}

export interface MemoryManagerOptions {
  readonly policy: 'None' | 'Static';
  readonly nodes: readonly NUMANodeInfo[];
  /** Node allocatable's reservation in bytes by resource (memory, hugepages-*), hard eviction included. */
  readonly allocatableReservation: ReadonlyMap<string, number>;
  readonly reservedMemory: readonly MemoryReservation[];
  readonly stateDir: string;
  readonly logger: Logger;
}

export interface MemoryManager extends HintProvider {
  /** Allocates the container's memory (synchronously), reading its affinity from the topology manager. Throws to refuse the pod. */
  allocate(pod: NodePod, container: Container): void;
  readonly policy: 'None' | 'Static';
  /** The NUMA nodes of a container's memory (its cpuset.mems); empty when it has no exclusive memory. */
  numaNodes(podUID: string, container: string): CPUSet;
  /** The container's memory blocks (type, bytes, NUMA nodes); empty when it has none. */
  memoryBlocks(podUID: string, container: string): readonly MemoryBlock[];
  /** What the Static policy may hand out, by NUMA node and memory type (empty with None). */
  allocatableMemory(): MemoryBlock[];
  /** Releases the memory of every container `keep` does not keep (stale state, a refused pod). */
  releaseUnless(keep: (podUID: string, container: string) => boolean): void;
}

function config(message: string): OrchError {
  return new OrchError(CM_MEMORY_MANAGER_CONFIG, 'invalid', message, { subject: 'reservedMemory' });
}

function formatBytes(bytes: number): string {
  for (const [unit, size] of [['Gi', 1024 ** 3], ['Mi', 1024 ** 2], ['Ki', 1024]] as const) if (bytes > 0 && bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}

/** upstream validateReservedMemory and getSystemReservedMemory. Throws CM_MEMORY_MANAGER_CONFIG. */
export function reservedMemoryByNode(options: Pick<MemoryManagerOptions, 'nodes' | 'allocatableReservation' | 'reservedMemory'>): ReservedMemory {
  const byNode = new Map<number, Map<string, number>>();
  const totals = new Map<string, number>();
  for (const r of options.reservedMemory) {
    if (!options.nodes.some((n) => n.id === r.numaNode)) throw config(`the reserved memory configuration references a NUMA node ${r.numaNode} that does not exist on this machine`);
    const node = byNode.get(r.numaNode) ?? new Map<string, number>();
    for (const [resource, text] of Object.entries(r.limits)) {
      const bytes = quantityValue(parseQuantity(text, `reservedMemory[numaNode ${r.numaNode}].limits.${resource}`));
      node.set(resource, (node.get(resource) ?? 0) + bytes);
      totals.set(resource, (totals.get(resource) ?? 0) + bytes);
    }
    byNode.set(r.numaNode, node);
  }
  const types = new Set([...totals.keys(), ...[...options.allocatableReservation.keys()].filter((k) => k === 'memory' || k.startsWith('hugepages-'))]);
  for (const type of [...types].sort()) {
    const reserved = totals.get(type) ?? 0;
    const allocatable = options.allocatableReservation.get(type) ?? 0;
    if (reserved !== allocatable) {
      throw config(`the total amount "${formatBytes(reserved)}" of type "${type}" is not equal to the value "${formatBytes(allocatable)}" determined by Node Allocatable feature`);
    }
  }
  return byNode;
}

/** Validates, opens the state and starts the policy. Throws CM_MEMORY_MANAGER_CONFIG or CM_MEMORY_STATE_INVALID. */
export function createMemoryManager(options: MemoryManagerOptions, affinity: () => AffinityStore): MemoryManager {
  const log = options.logger;
  let policy: StaticMemoryPolicy | undefined;
  if (options.policy === 'Static') {
    const reserved = reservedMemoryByNode(options);
    const total = [...reserved.values()].reduce((sum, m) => sum + (m.get('memory') ?? 0), 0);
    if (total <= 0) throw config('[memorymanager] you should specify the system reserved memory (reservedMemory, matching the memory reserved for node allocatable)');
    policy = new StaticMemoryPolicy(options.nodes, reserved, { affinity: (pod, c) => affinity().affinity(pod, c) });
  }
  const state = openMemoryState(options.stateDir, options.policy);
  if (policy !== undefined) {
    try {
      policy.start(state);
    } catch (err) {
      throw new OrchError(CM_MEMORY_STATE_INVALID, 'invalid', `${messageOf(err)}; please drain the node and remove the memory manager state file`, { subject: 'memory_manager_state', cause: err });
    }
    log.info('Memory manager started', { policy: 'Static', numaNodes: options.nodes.length });
  }
  return {
    policy: options.policy,
    allocate(pod: NodePod, container: Container) {
      policy?.allocate(state, pod, container);
    },
    topologyHints(pod: NodePod, container: Container): ProviderHints {
      return policy?.topologyHints(state, pod, container);
    },
    podTopologyHints(pod: NodePod): ProviderHints {
      return policy?.podTopologyHints(state, pod);
    },
    numaNodes(podUID, container) {
      return CPUSet.of(...(state.entries.get(podUID)?.get(container) ?? []).flatMap((b) => b.numaAffinity ?? []));
    },
    memoryBlocks(podUID, container) {
      return (state.entries.get(podUID)?.get(container) ?? []).map((b) => ({ type: b.type, bytes: b.size, numaNodes: b.numaAffinity ?? [] }));
    },
    allocatableMemory() {
      if (policy === undefined) return [];
      const out: MemoryBlock[] = [];
      for (const [node, nodeState] of [...state.machine].sort((a, b) => a[0] - b[0])) {
        for (const [type, table] of nodeState.memoryMap) if (table.allocatable > 0) out.push({ type, bytes: table.allocatable, numaNodes: [node] });
      }
      return out;
    },
    releaseUnless(keep) {
      if (policy === undefined) return;
      for (const [podUID, containers] of [...state.entries]) {
        for (const name of [...containers.keys()]) {
          if (keep(podUID, name)) continue;
          log.v(2, 'Memory manager: releasing the memory of a container', { podUID, container: name });
          policy.removeContainer(state, podUID, name);
        }
        if (!state.entries.has(podUID)) policy.forgetPod(podUID);
      }
    },
  };
}
