/**
 * The topology manager (upstream: topology_manager.go and scope*.go): at admission it asks the
 * hint providers (the device, CPU and memory managers) for NUMA hints, merges them with its
 * policy, keeps the merged hint per container as that container's affinity, and has the
 * providers allocate in that order (a device plugin's Allocate is a call the admission waits
 * for). Scopes:
 *
 *   | policy none      | each container is allocated without hints                         |
 *   | scope container  | hints, merge and allocation container by container (init first)   |
 *   | scope pod        | one merge over the whole pod's hints; every container gets it      |
 *
 * A merge the policy does not admit refuses the pod with TopologyAffinityError; an allocation
 * that fails refuses it with its own reason (or UnexpectedAdmissionError).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../../api/pod/index.js';

import { OrchError } from '../../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import { ADMIT, refusal, topologyAffinityError, type AdmitResult } from '../admission.js';
import { formatMask } from './bitmask.js';
import type { NUMAInfo, ProviderHints, TopologyHint } from './merge.js';
import { createPolicy, type PolicyName, type PolicyOptions } from './policy.js';

/** The topology manager cannot run on this machine with its settings (e.g. more than 8 NUMA nodes). */
export const CM_TOPOLOGY_UNSUPPORTED = 'CM_TOPOLOGY_UNSUPPORTED';

/** upstream's limit on NUMA nodes for any policy but none. */
export const MAX_NUMA_NODES = 8;

export type ScopeName = 'container' | 'pod';

/** What the device, CPU and memory managers offer the topology manager. */
export interface HintProvider {
  topologyHints(pod: NodePod, container: Container): ProviderHints;
  podTopologyHints(pod: NodePod): ProviderHints;
  /**
   * Allocates the container's resources with its merged hint (`affinity`, also in the store).
   * Throws or rejects to refuse the pod.
   */
  allocate(pod: NodePod, container: Container, affinity: TopologyHint): void | Promise<void>;
}

/** The merged hint of each admitted container (upstream topologymanager.Store). */
export interface AffinityStore {
  affinity(podUID: string, containerName: string): TopologyHint;
}

export interface TopologyManager extends AffinityStore {
  readonly policy: PolicyName;
  /** Admits the pod or refuses it with upstream's reason; the providers have allocated once it is admitted. Never rejects. */
  admit(pod: NodePod): Promise<AdmitResult>;
  /** Forgets the affinities of every pod `keep` does not keep (gone or refused). */
  forgetUnless(keep: (podUID: string) => boolean): void;
}

export interface TopologyManagerOptions {
  readonly policy: PolicyName;
  readonly scope: ScopeName;
  readonly policyOptions: PolicyOptions;
  readonly numa: NUMAInfo;
  readonly logger: Logger;
}

export function allContainers(pod: NodePod): Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
}

/** Throws CM_TOPOLOGY_UNSUPPORTED when the policy cannot run on this machine. */
export function createTopologyManager(options: TopologyManagerOptions, providers: () => readonly HintProvider[]): TopologyManager {
  if (options.policy !== 'none' && options.numa.nodes.length > MAX_NUMA_NODES) {
    throw new OrchError(CM_TOPOLOGY_UNSUPPORTED, 'invalid',
      `topologyManagerPolicy ${options.policy} is unsupported on machines with more than ${MAX_NUMA_NODES} NUMA nodes (this one has ${options.numa.nodes.length})`,
      { subject: 'topologyManagerPolicy' });
  }
  const policy = createPolicy(options.policy, options.numa, options.policyOptions);
  const affinities = new Map<string, Map<string, TopologyHint>>();
  const log = options.logger;

  const setAffinity = (podUID: string, container: string, hint: TopologyHint): void => {
    const pod = affinities.get(podUID) ?? new Map<string, TopologyHint>();
    pod.set(container, hint);
    affinities.set(podUID, pod);
  };

  const none: TopologyHint = { numaAffinity: undefined, preferred: false };
  const affinityOf = (podUID: string, container: string): TopologyHint => affinities.get(podUID)?.get(container) ?? none;

  const allocate = async (pod: NodePod, container: Container): Promise<void> => {
    const hint = affinityOf(pod.metadata.uid, container.name);
    for (const p of providers()) await p.allocate(pod, container, hint);
  };

  const refuseAffinity = (pod: NodePod, hint: TopologyHint, container?: string): AdmitResult => {
    log.info('Topology affinity refused', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, ...(container === undefined ? {} : { container }), policy: policy.name, numaAffinity: formatMask(hint.numaAffinity), preferred: hint.preferred });
    return refusal(topologyAffinityError());
  };

  async function admitNone(pod: NodePod): Promise<AdmitResult> {
    for (const c of allContainers(pod)) await allocate(pod, c);
    return ADMIT;
  }

  async function admitContainers(pod: NodePod): Promise<AdmitResult> {
    for (const c of allContainers(pod)) {
      const { hint, admit } = policy.merge(providers().map((p) => p.topologyHints(pod, c)));
      if (!admit) return refuseAffinity(pod, hint, c.name);
      log.v(2, 'Topology affinity', { pod: pod.metadata.name, container: c.name, numaAffinity: formatMask(hint.numaAffinity), preferred: hint.preferred });
      setAffinity(pod.metadata.uid, c.name, hint);
      await allocate(pod, c);
    }
    return ADMIT;
  }

  async function admitPod(pod: NodePod): Promise<AdmitResult> {
    const { hint, admit } = policy.merge(providers().map((p) => p.podTopologyHints(pod)));
    if (!admit) return refuseAffinity(pod, hint);
    for (const c of allContainers(pod)) {
      setAffinity(pod.metadata.uid, c.name, hint);
      await allocate(pod, c);
    }
    return ADMIT;
  }

  return {
    policy: policy.name,
    async admit(pod) {
      try {
        if (policy.name === 'none') return await admitNone(pod);
        return await (options.scope === 'pod' ? admitPod(pod) : admitContainers(pod));
      } catch (err) {
        return refusal(err);
      }
    },
    forgetUnless(keep) {
      for (const uid of [...affinities.keys()]) if (!keep(uid)) affinities.delete(uid);
    },
    affinity: affinityOf,
  };
}
