/**
 * The device, CPU, memory and topology managers together (upstream: the container manager's
 * resource managers): the topology manager admits each pod with the device, CPU and memory
 * managers as its hint providers (in that order, as upstream registers them); a refused pod's
 * CPU and memory allocations are released at once (its devices at the device manager's next
 * sweep, as upstream); the state of pods no longer active is released by `sweep`; each new
 * container's cpuset comes from the CPU manager (its CPUs) and the memory manager (its nodes).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';

import type { Logger } from '../logging/index.js';
import { ADMIT, type AdmitResult } from './admission.js';
import { CPUSet } from './cpuset.js';
import { activeContainers, createCPUManager, type CPUManager, type RunningContainer } from './cpumanager/index.js';
import { CPUTopology, type MachineTopology } from './machine/index.js';
import { createMemoryManager, type MemoryBlock, type MemoryManager, type MemoryReservation } from './memorymanager/index.js';
import { createTopologyManager, type HintProvider, type PolicyName, type ScopeName, type TopologyManager } from './topologymanager/index.js';

export interface ResourceManagerSettings {
  readonly cpuManagerPolicy: 'none' | 'static';
  readonly cpuManagerPolicyOptions: Readonly<Record<string, string>>;
  readonly reservedSystemCPUs: CPUSet;
  readonly memoryManagerPolicy: 'None' | 'Static';
  readonly reservedMemory: readonly MemoryReservation[];
  readonly topologyManagerPolicy: PolicyName;
  readonly topologyManagerScope: ScopeName;
  readonly topologyManagerPolicyOptions: Readonly<Record<string, string>>;
  readonly gates: { enabled(name: string): boolean };
  /** Where the state files live (the agent's root directory). */
  readonly stateDir: string;
  /** The device manager, the first hint provider; absent: no devices. */
  readonly devices?: HintProvider | undefined;
}

/** The CPUs and memory the CPU and memory managers hand out and have handed out (the pod resources API). */
export interface ResourceAssignments {
  exclusiveCPUs(podUID: string, container: string): number[];
  allocatableCPUs(): number[];
  memory(podUID: string, container: string): readonly MemoryBlock[];
  allocatableMemory(): readonly MemoryBlock[];
}

/** Before the managers start: nothing handed out, nothing to hand out. */
export const NO_ASSIGNMENTS: ResourceAssignments = {
  exclusiveCPUs: () => [],
  allocatableCPUs: () => [],
  memory: () => [],
  allocatableMemory: () => [],
};

export interface ResourceManagers {
  /** The topology manager's admission (allocating through the device, CPU and memory managers). Never rejects. */
  admit(pod: NodePod, admitted: readonly NodePod[], sweep: boolean): Promise<AdmitResult>;
  /** A new container's cpuset.cpus and cpuset.mems ('' when not set). */
  cpuset(pod: NodePod, container: Container): { readonly cpus: string; readonly mems: string };
  /** Releases what pods no longer in `active` hold. */
  sweep(active: readonly NodePod[]): void;
  /** The CPU manager's reconcile of running containers (static policy only). */
  reconcile(active: readonly NodePod[], running: readonly RunningContainer[], update: (id: string, cpus: string) => Promise<void>): Promise<void>;
  readonly cpuPolicy: 'none' | 'static';
  readonly assignments: ResourceAssignments;
  /** The topology manager's affinity of each admitted container. */
  readonly topology: TopologyManager;
}

/**
 * Builds the managers over the machine. `reservation` is node allocatable's (cpu in millicores,
 * memory and hugepages in bytes). Throws the managers' errors (a changed policy, a corrupt
 * state file, reservations that do not fit, more than 8 NUMA nodes for a topology policy).
 */
export function createResourceManagers(s: ResourceManagerSettings, machine: MachineTopology, reservation: ReadonlyMap<string, number>, logger: Logger): ResourceManagers {
  const numa = { nodes: machine.numaNodes.map((n) => n.id), distances: new Map(machine.numaNodes.map((n) => [n.id, n.distances])) };
  // The CPU and memory managers read affinities from the topology manager, which is built over them.
  const built: { topology?: TopologyManager } = {};
  const affinity = (): TopologyManager => {
    if (built.topology === undefined) throw new Error('the topology manager is not built yet');
    return built.topology;
  };
  const cpu: CPUManager = createCPUManager({
    policy: s.cpuManagerPolicy,
    policyOptions: s.cpuManagerPolicyOptions,
    gates: s.gates,
    topology: CPUTopology.of(machine),
    reservedMilliCPU: reservation.get('cpu') ?? 0,
    reservedSystemCPUs: s.reservedSystemCPUs,
    topologyPolicy: s.topologyManagerPolicy,
    stateDir: s.stateDir,
    logger: logger.named('cpumanager'),
  }, affinity);
  const memory: MemoryManager | undefined = s.gates.enabled('MemoryManager')
    ? createMemoryManager({
      policy: s.memoryManagerPolicy,
      nodes: machine.numaNodes,
      allocatableReservation: reservation,
      reservedMemory: s.reservedMemory,
      stateDir: s.stateDir,
      logger: logger.named('memorymanager'),
    }, affinity)
    : undefined;
  const providers: HintProvider[] = [...(s.devices === undefined ? [] : [s.devices]), cpu, ...(memory === undefined ? [] : [memory])];
  const tm = createTopologyManager({
    policy: s.topologyManagerPolicy,
    scope: s.topologyManagerScope,
    policyOptions: { preferClosestNUMA: s.topologyManagerPolicyOptions['prefer-closest-numa-nodes'] === 'true' },
    numa,
    logger: logger.named('topologymanager'),
  }, () => providers);
  built.topology = tm;
  logger.info('Resource managers started', { cpuManagerPolicy: cpu.policy, memoryManagerPolicy: memory?.policy ?? 'off (MemoryManager gate)', topologyManagerPolicy: tm.policy, topologyManagerScope: s.topologyManagerScope });

  const releaseUnless = (keep: (podUID: string, container: string) => boolean): void => {
    cpu.releaseUnless(keep);
    memory?.releaseUnless(keep);
  };

  return {
    cpuPolicy: cpu.policy,
    topology: tm,
    assignments: {
      exclusiveCPUs: (podUID, container) => cpu.exclusiveCPUs(podUID, container).list(),
      allocatableCPUs: () => cpu.allocatableCPUs().list(),
      memory: (podUID, container) => memory?.memoryBlocks(podUID, container) ?? [],
      allocatableMemory: () => memory?.allocatableMemory() ?? [],
    },
    async admit(pod, admitted, sweep) {
      if (sweep) {
        const keep = activeContainers([...admitted, pod]);
        releaseUnless(keep);
        tm.forgetUnless((uid) => uid === pod.metadata.uid || admitted.some((p) => p.metadata.uid === uid));
      }
      const result = await tm.admit(pod);
      if (result.admit) return ADMIT;
      const uid = pod.metadata.uid;
      releaseUnless((podUID) => podUID !== uid);
      tm.forgetUnless((podUID) => podUID !== uid);
      return result;
    },
    cpuset(pod, container) {
      const uid = pod.metadata.uid;
      return { cpus: cpu.cpuAffinity(uid, container.name).toString(), mems: memory?.numaNodes(uid, container.name).toString() ?? '' };
    },
    sweep(active) {
      releaseUnless(activeContainers(active));
      const uids = new Set(active.map((p) => p.metadata.uid));
      tm.forgetUnless((uid) => uids.has(uid));
    },
    reconcile: (active, running, update) => cpu.reconcile(active, running, update),
  };
}
