/**
 * The CPU manager (upstream: cpu_manager.go): opens the state file with the configured policy,
 * answers the topology manager as a hint provider and allocates at admission, tells the runtime
 * manager each container's CPU set (its exclusive CPUs or the shared pool) when the container is
 * created, and reconciles: every `reconcilePeriod` the state of pods no longer active is released
 * and each running container of an active pod whose CPU set changed (the shared pool shrinks and
 * grows with exclusive allocations) is updated through CRI UpdateContainerResources.
 *
 * With the none policy nothing is allocated, the state file keeps policy "none" and an empty
 * default set (so that no cpuset is given to containers), and there is no reconcile loop.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../../api/pod/index.js';

import { OrchError, messageOf } from '../../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import { CPUSet } from '../cpuset.js';
import type { CPUTopology } from '../machine/index.js';
import { allContainers, type AffinityStore, type HintProvider, type ProviderHints } from '../topologymanager/index.js';
import { parseStaticPolicyOptions, validateStaticPolicyOptions } from './options.js';
import { CM_CPU_STATE_INVALID, openCPUState, type CPUState } from './state.js';
import { StaticPolicy } from './static-policy.js';

/** The CPU manager's settings do not fit this machine (no CPU reservation, reserved CPUs offline). */
export const CM_CPU_MANAGER_CONFIG = 'CM_CPU_MANAGER_CONFIG';

export interface CPUManagerOptions {
  readonly policy: 'none' | 'static';
  readonly policyOptions: Readonly<Record<string, string>>;
  readonly gates: { enabled(name: string): boolean };
  readonly topology: CPUTopology;
  /** The CPU reservation of node allocatable in millicores (system + orch reserved). */
  readonly reservedMilliCPU: number;
  /** reservedSystemCPUs (empty: none). */
  readonly reservedSystemCPUs: CPUSet;
  /** The topology manager's policy (align-by-socket is incompatible with single-numa-node). */
  readonly topologyPolicy: string;
  /** Where cpu_manager_state lives (the agent's root directory). */
  readonly stateDir: string;
  readonly logger: Logger;
}

/** A running container of the agent's, as the runtime lists it. */
export interface RunningContainer {
  readonly id: string;
  readonly podUID: string;
  readonly name: string;
}

export interface CPUManager extends HintProvider {
  /** Allocates the container's CPUs (synchronously), reading its affinity from the topology manager. Throws to refuse the pod. */
  allocate(pod: NodePod, container: Container): void;
  readonly policy: 'none' | 'static';
  /** The CPU set a container runs on: its exclusive CPUs, else the shared pool (empty with the none policy). */
  cpuAffinity(podUID: string, container: string): CPUSet;
  /** The container's exclusive CPUs (empty on the shared pool). */
  exclusiveCPUs(podUID: string, container: string): CPUSet;
  /** The CPUs the static policy may hand out exclusively (empty with the none policy). */
  allocatableCPUs(): CPUSet;
  /** Releases the CPUs of every container `keep` does not keep (stale state, a refused pod). */
  releaseUnless(keep: (podUID: string, container: string) => boolean): void;
  /** Releases stale state, then updates running containers of `active` pods whose CPU set differs from the one last applied. */
  reconcile(active: readonly NodePod[], running: readonly RunningContainer[], update: (id: string, cpus: string) => Promise<void>): Promise<void>;
}

/** Keeps the containers of `active` pods (upstream removeStaleState's rule). */
export function activeContainers(active: readonly NodePod[]): (podUID: string, container: string) => boolean {
  const live = new Map(active.map((p) => [p.metadata.uid, new Set(allContainers(p).map((c) => c.name))]));
  return (podUID, container) => live.get(podUID)?.has(container) === true;
}

function config(message: string, subject: string): OrchError {
  return new OrchError(CM_CPU_MANAGER_CONFIG, 'invalid', message, { subject });
}

function buildStatic(options: CPUManagerOptions, affinity: () => AffinityStore): StaticPolicy {
  const { topology } = options;
  if (!options.reservedSystemCPUs.isSubsetOf(topology.cpus())) {
    throw config(`reservedSystemCPUs: ${options.reservedSystemCPUs.toString()} is not a subset of online-cpus: ${topology.cpus().toString()}`, 'reservedSystemCPUs');
  }
  if (options.reservedMilliCPU <= 0) {
    throw config('the static policy requires systemReserved.cpu + orchReserved.cpu (or reservedSystemCPUs) to be greater than zero', 'cpuManagerPolicy');
  }
  const opts = parseStaticPolicyOptions(options.policyOptions, options.gates);
  validateStaticPolicyOptions(opts, topology, options.topologyPolicy);
  const reserved = StaticPolicy.reservedCPUs(topology, Math.ceil(options.reservedMilliCPU / 1000), options.reservedSystemCPUs);
  return new StaticPolicy(topology, reserved, opts, { affinity: (pod, c) => affinity().affinity(pod, c) });
}

/**
 * Opens the state and starts the policy. Throws CM_CPU_MANAGER_CONFIG, CM_CPU_POLICY_OPTION or
 * CM_CPU_STATE_INVALID (a changed policy, a corrupt file, a state that does not add up).
 */
export function createCPUManager(options: CPUManagerOptions, affinity: () => AffinityStore): CPUManager {
  const log = options.logger;
  const policy = options.policy === 'static' ? buildStatic(options, affinity) : undefined;
  const state: CPUState = openCPUState(options.stateDir, options.policy);
  if (policy !== undefined) {
    try {
      policy.start(state);
    } catch (err) {
      throw new OrchError(CM_CPU_STATE_INVALID, 'invalid', `static policy invalid state: ${messageOf(err)}; please drain the node and remove the CPU manager state file`, { subject: 'cpu_manager_state', cause: err });
    }
    log.info('CPU manager started', { policy: 'static', reserved: policy.reserved.toString(), allocatable: policy.allocatableCPUs().toString() });
  }
  /** The CPU set last applied to each running container, by container ID. */
  const applied = new Map<string, string>();

  const removeContainer = (podUID: string, name: string): void => {
    log.v(2, 'CPU manager: releasing the CPUs of a container', { podUID, container: name });
    policy?.removeContainer(state, podUID, name);
  };

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
    cpuAffinity(podUID, container) {
      return state.cpuSet(podUID, container) ?? state.defaultCPUSet();
    },
    exclusiveCPUs(podUID, container) {
      return state.cpuSet(podUID, container) ?? CPUSet.EMPTY;
    },
    allocatableCPUs() {
      return policy?.allocatableCPUs() ?? CPUSet.EMPTY;
    },
    releaseUnless(keep) {
      if (policy === undefined) return;
      for (const [podUID, containers] of [...state.assignments()]) {
        for (const name of [...containers.keys()]) if (!keep(podUID, name)) removeContainer(podUID, name);
        if (!state.assignments().has(podUID)) policy.forgetPod(podUID);
      }
    },
    async reconcile(active, running, update) {
      if (policy === undefined) return;
      this.releaseUnless(activeContainers(active));
      const byRef = new Map(running.map((c) => [`${c.podUID}\0${c.name}`, c.id]));
      const seen = new Set<string>();
      for (const pod of active) {
        for (const c of allContainers(pod)) {
          const id = byRef.get(`${pod.metadata.uid}\0${c.name}`);
          if (id === undefined) continue;
          seen.add(id);
          const cpus = this.cpuAffinity(pod.metadata.uid, c.name).toString();
          if (cpus === '' || applied.get(id) === cpus) continue;
          try {
            await update(id, cpus);
            applied.set(id, cpus);
            log.v(2, 'CPU manager: updated the CPU set of a container', { pod: pod.metadata.name, container: c.name, containerID: id, cpuset: cpus });
          } catch (err) {
            log.warn('CPU manager: cannot update the CPU set of a container; trying again at the next reconcile', { pod: pod.metadata.name, container: c.name, containerID: id, err: messageOf(err) });
          }
        }
      }
      for (const id of [...applied.keys()]) if (!seen.has(id)) applied.delete(id);
    },
  };
}
