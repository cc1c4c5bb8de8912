/**
 * The CPU manager's static policy (upstream: policy_static.go). CPU pools:
 *
 * - shared: the state's default CPU set; Burstable, BestEffort and non-integer Guaranteed
 *   containers run here; it shrinks and grows as exclusive CPUs are handed out and given back;
 * - reserved: `reservedSystemCPUs`, or the ceiling of the CPU reservation taken by topology from
 *   the lowest cores; part of the shared pool, never handed out;
 * - exclusive: a Guaranteed pod's container with an integer CPU request gets that many CPUs of
 *   its own (aligned with its topology affinity when it has one); init containers' CPUs are
 *   reused by the pod's later containers (not those of restartable init containers).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../../api/pod/index.js';

import { parseQuantity, quantityMilliValue } from '../../../api/quantity.js';
import { AdmissionError, SMT_ALIGNMENT_ERROR, allocationFailed } from '../admission.js';
import { CPUSet } from '../cpuset.js';
import type { CPUTopology } from '../machine/index.js';
import { qosClass } from '../../../api/pod/index.js';
import { bitsOf, countOf, isSet, iterateBitMasks, type AffinityStore, type BitMask, type ProviderHints, type TopologyHint } from '../topologymanager/index.js';
import { takeByTopologyDistributed, takeByTopologyPacked } from './accumulator.js';
import type { StaticPolicyOptions } from './options.js';
import type { CPUState } from './state.js';

export function isRestartable(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

/** The CPUs a container gets exclusively: its integer CPU request in a Guaranteed pod, else 0. */
export function guaranteedCPUs(pod: NodePod, container: Container): number {
  if (qosClass(pod) !== 'Guaranteed') return 0;
  const text = container.resources?.requests?.cpu ?? container.resources?.limits?.cpu;
  if (text === undefined) return 0;
  const milli = quantityMilliValue(parseQuantity(text));
  return milli > 0 && milli % 1000 === 0 ? milli / 1000 : 0;
}

/** The exclusive CPUs of the whole pod (init containers' peak against the long-running ones' sum). */
export function podGuaranteedCPUs(pod: NodePod): number {
  let init = 0;
  let restartable = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const n = guaranteedCPUs(pod, c);
    if (isRestartable(c)) restartable += n;
    else init = Math.max(init, restartable + n);
  }
  let app = 0;
  for (const c of pod.spec?.containers ?? []) app += guaranteedCPUs(pod, c);
  return Math.max(init, app + restartable);
}

/** SMTAlignmentError, as upstream words it. */
function smtAlignmentError(requested: number, cpusPerCore: number, availablePhysical?: number): AdmissionError {
  return new AdmissionError(SMT_ALIGNMENT_ERROR, availablePhysical === undefined
    ? `SMT Alignment Error: requested ${requested} cpus not multiple cpus per core = ${cpusPerCore}`
    : `SMT Alignment Error: not enough free physical CPUs: available physical CPUs = ${availablePhysical}, requested CPUs = ${requested}, CPUs per core = ${cpusPerCore}`);
}

export class StaticPolicy {
  readonly name = 'static';
  private readonly cpusToReuse = new Map<string, CPUSet>();

  constructor(
    private readonly topology: CPUTopology,
    readonly reserved: CPUSet,
    private readonly options: StaticPolicyOptions,
    private readonly affinity: AffinityStore,
  ) {}

  /** The reserved set: `specific` when given, else `count` CPUs by topology from the lowest cores. */
  static reservedCPUs(topology: CPUTopology, count: number, specific: CPUSet): CPUSet {
    const reserved = specific.size() > 0 ? specific : takeByTopologyPacked(topology, topology.cpus(), count);
    if (reserved.size() !== count) throw allocationFailed(`unable to reserve the required amount of CPUs (size of ${reserved.toString()} did not equal ${count})`, 'reservedSystemCPUs');
    return reserved;
  }

  /** upstream validateState: a new state gets every CPU as its default set; a restored one must add up. */
  start(state: CPUState): void {
    const assignments = state.assignments();
    const shared = state.defaultCPUSet();
    const all = this.topology.cpus();
    if (shared.isEmpty()) {
      if (assignments.size > 0) throw new Error('default cpuset cannot be empty');
      state.setDefaultCPUSet(all);
      return;
    }
    if (!this.reserved.isSubsetOf(shared)) throw new Error(`not all reserved cpus: "${this.reserved.toString()}" are present in defaultCpuSet: "${shared.toString()}"`);
    let known = shared;
    for (const [pod, containers] of assignments) {
      for (const [name, cpus] of containers) {
        if (!cpus.intersection(shared).isEmpty()) throw new Error(`pod: ${pod}, container: ${name} cpuset: "${cpus.toString()}" overlaps with default cpuset "${shared.toString()}"`);
        known = known.union(cpus);
      }
    }
    if (!known.equals(all)) throw new Error(`current set of available CPUs "${all.toString()}" doesn't match with CPUs in state "${known.toString()}"`);
  }

  allocatableCPUs(): CPUSet {
    return this.topology.cpus().difference(this.reserved);
  }

  availableCPUs(state: CPUState): CPUSet {
    return state.defaultCPUSet().difference(this.reserved);
  }

  allocate(state: CPUState, pod: NodePod, container: Container): void {
    const numCPUs = guaranteedCPUs(pod, container);
    if (numCPUs === 0) return;
    const { uid } = pod.metadata;
    // An assignment kept from before an agent restart stands as it is (checked first, so that
    // the CPUs it holds do not count as missing below).
    const existing = state.cpuSet(uid, container.name);
    if (existing !== undefined) {
      this.updateCPUsToReuse(pod, container, existing);
      return;
    }
    if (this.options.fullPhysicalCPUsOnly) {
      const perCore = this.topology.cpusPerCore();
      if (numCPUs % perCore !== 0) throw smtAlignmentError(numCPUs, perCore);
      const physical = this.availableCPUs(state).difference(this.topology.coreSiblingsOf(this.reserved)).size();
      if (numCPUs > physical) throw smtAlignmentError(numCPUs, perCore, physical);
    }
    const hint = this.affinity.affinity(uid, container.name);
    const cpus = this.allocateCPUs(state, numCPUs, hint.numaAffinity, this.cpusToReuse.get(uid) ?? CPUSet.EMPTY);
    state.setCPUSet(uid, container.name, cpus);
    this.updateCPUsToReuse(pod, container, cpus);
  }

  removeContainer(state: CPUState, podUID: string, name: string): void {
    const released = state.cpuSet(podUID, name);
    if (released === undefined) return;
    let inUse = CPUSet.EMPTY;
    for (const [other, cpus] of state.assignments().get(podUID) ?? []) if (other !== name) inUse = inUse.union(cpus);
    state.delete(podUID, name);
    state.setDefaultCPUSet(state.defaultCPUSet().union(released.difference(inUse)));
  }

  forgetPod(podUID: string): void {
    this.cpusToReuse.delete(podUID);
  }

  private updateCPUsToReuse(pod: NodePod, container: Container, cpus: CPUSet): void {
    const uid = pod.metadata.uid;
    for (const other of this.cpusToReuse.keys()) if (other !== uid) this.cpusToReuse.delete(other);
    const current = this.cpusToReuse.get(uid) ?? CPUSet.EMPTY;
    const init = (pod.spec?.initContainers ?? []).find((c) => c.name === container.name);
    if (init !== undefined) {
      if (!isRestartable(init)) this.cpusToReuse.set(uid, current.union(cpus));
      return;
    }
    this.cpusToReuse.set(uid, current.difference(cpus));
  }

  private alignedCPUs(affinity: BitMask, allocatable: CPUSet): CPUSet {
    const nodes = bitsOf(affinity);
    if (this.options.alignBySocket) {
      const sockets = this.topology.socketsInNUMANodes(...nodes).list();
      return allocatable.intersection(this.topology.cpusInSockets(...sockets));
    }
    return allocatable.intersection(this.topology.cpusInNUMANodes(...nodes));
  }

  private allocateCPUs(state: CPUState, numCPUs: number, affinity: BitMask | undefined, reusable: CPUSet): CPUSet {
    const allocatable = this.availableCPUs(state).union(reusable);
    let result = CPUSet.EMPTY;
    if (affinity !== undefined) {
      const aligned = this.alignedCPUs(affinity, allocatable);
      result = this.takeByTopology(aligned, Math.min(numCPUs, aligned.size()));
    }
    result = result.union(this.takeByTopology(allocatable.difference(result), numCPUs - result.size()));
    state.setDefaultCPUSet(state.defaultCPUSet().difference(result));
    return result;
  }

  takeByTopology(available: CPUSet, numCPUs: number): CPUSet {
    if (this.options.distributeCPUsAcrossNUMA) {
      return takeByTopologyDistributed(this.topology, available, numCPUs, this.options.fullPhysicalCPUsOnly ? this.topology.cpusPerCore() : 1);
    }
    return takeByTopologyPacked(this.topology, available, numCPUs);
  }

  topologyHints(state: CPUState, pod: NodePod, container: Container): ProviderHints {
    const requested = guaranteedCPUs(pod, container);
    if (requested === 0) return undefined;
    const allocated = state.cpuSet(pod.metadata.uid, container.name);
    if (allocated !== undefined) {
      return { cpu: allocated.size() === requested ? this.generateHints(allocated, CPUSet.EMPTY, requested) : [] };
    }
    return { cpu: this.generateHints(this.availableCPUs(state), this.cpusToReuse.get(pod.metadata.uid) ?? CPUSet.EMPTY, requested) };
  }

  podTopologyHints(state: CPUState, pod: NodePod): ProviderHints {
    const requested = podGuaranteedCPUs(pod);
    if (requested === 0) return undefined;
    let assigned = CPUSet.EMPTY;
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      const allocated = state.cpuSet(pod.metadata.uid, c.name);
      if (allocated === undefined) continue;
      if (allocated.size() !== guaranteedCPUs(pod, c)) return { cpu: [] };
      assigned = assigned.union(allocated);
    }
    if (assigned.size() === requested) return { cpu: this.generateHints(assigned, CPUSet.EMPTY, requested) };
    const reusable = (this.cpusToReuse.get(pod.metadata.uid) ?? CPUSet.EMPTY).union(assigned);
    return { cpu: this.generateHints(this.availableCPUs(state), reusable, requested) };
  }

  /** upstream generateCPUTopologyHints: every NUMA mask with enough CPUs; the narrowest ones preferred. */
  private generateHints(available: CPUSet, reusable: CPUSet, request: number): TopologyHint[] {
    const nodes = this.topology.numaNodes().list();
    let minAffinity = nodes.length;
    const masks: BitMask[] = [];
    iterateBitMasks(nodes, (mask) => {
      const inMask = (cpu: number): boolean => isSet(mask, this.topology.info(cpu)?.numaNode ?? -1);
      if (this.topology.cpusInNUMANodes(...bitsOf(mask)).size() >= request && countOf(mask) < minAffinity) minAffinity = countOf(mask);
      if (!reusable.list().every(inMask)) return;
      const matching = reusable.size() + available.list().filter(inMask).length;
      if (matching >= request) masks.push(mask);
    });
    return masks.map((mask) => ({
      numaAffinity: mask,
      preferred: (this.options.alignBySocket && this.isSocketAligned(mask, minAffinity)) || countOf(mask) === minAffinity,
    }));
  }

  private isSocketAligned(mask: BitMask, minAffinity: number): boolean {
    const perSocket = Math.floor(this.topology.numNUMANodes / this.topology.numSockets);
    if (perSocket === 0) return false;
    const minSockets = Math.floor((minAffinity + perSocket - 1) / perSocket);
    return this.topology.socketsInNUMANodes(...bitsOf(mask)).size() === minSockets;
  }
}
