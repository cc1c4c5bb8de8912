/**
 * What the scheduler reads of a pod and of a node, computed once per version of the object:
 * a pod's priority, creation time, effective requests (and the non-zero requests scoring uses:
 * 100m cpu and 200Mi memory for containers that request none, as upstream), host ports; a node's
 * allocatable (its capacity when the node gives no allocatable, as upstream's defaulting does);
 * the claims its volumes name.
 */
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { containerRequests, hostPortsOf, podRequest, requestedResources, resourceAmount, type HostPort, type PodRequestOptions } from '../../../api/pod/index.js';
import { metaOf, str, type WireObject } from '../../registry/index.js';
import { objectKey } from '../client/index.js';

/** Upstream's DefaultMilliCPURequest and DefaultMemoryRequest (scoring only). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

const FIT_ORDER = ['cpu', 'memory', 'ephemeral-storage'];

export interface PodInfo {
  /** `namespace/name`. */
  readonly key: string;
  readonly uid: string;
  readonly object: WireObject;
  readonly pod: Pod;
  readonly priority: number;
  /** creationTimestamp in ms (0 when absent). */
  readonly createdMs: number;
  /**
   * Requested amounts (cpu in millicores, memory in bytes, others in units), zero requests left
   * out, in the order upstream's NodeResourcesFit names them in its reasons: cpu, memory,
   * ephemeral-storage, then the others by name (sorted once here, not per node filtered).
   */
  readonly requests: ReadonlyMap<string, number>;
  readonly nonZeroCpu: number;
  readonly nonZeroMemory: number;
  readonly ports: readonly HostPort[];
  /** `namespace/name` of the claims its persistentVolumeClaim volumes name (ReadWriteOncePod counts them). */
  readonly claims: readonly string[];
  /** It has volumes through claims (persistentVolumeClaim or generic ephemeral): the volume filters look at it. */
  readonly hasClaimVolumes: boolean;
}

function nonZero(pod: Pod, resource: 'cpu' | 'memory', fallback: number, options: PodRequestOptions): number {
  const one = (requests: Record<string, string> | undefined): number => {
    const value = requests?.[resource];
    return value === undefined ? fallback : resourceAmount(value, resource);
  };
  let sum = 0;
  for (const c of pod.spec?.containers ?? []) sum += containerRequests(pod, c, options).get(resource) ?? fallback;
  let initMax = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') sum += one(c.resources?.requests);
    else initMax = Math.max(initMax, one(c.resources?.requests));
  }
  return Math.max(sum, initMax) + resourceAmount(pod.spec?.overhead?.[resource], resource);
}

/**
 * What the scheduler reads of the pod. With InPlacePodVerticalScaling (`options`) a container
 * counts the larger of its spec's requests and its status's allocatedResources (upstream
 * calculateResource through PodRequests), for the fit and the scores alike.
 */
export function podInfo(object: WireObject, options: PodRequestOptions = {}): PodInfo {
  const pod = object as Pod;
  const amounts: [string, number][] = [];
  for (const resource of requestedResources(pod, options)) {
    const amount = podRequest(pod, resource, options);
    if (amount > 0) amounts.push([resource, amount]);
  }
  const rank = (r: string): number => FIT_ORDER.indexOf(r) + 1 || FIT_ORDER.length + 1;
  const requests = new Map(amounts.sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)));
  const created = Date.parse(str(metaOf(object).creationTimestamp));
  return {
    key: objectKey(object),
    uid: str(metaOf(object).uid),
    object,
    pod,
    priority: typeof pod.spec?.priority === 'number' ? pod.spec.priority : 0,
    createdMs: Number.isNaN(created) ? 0 : created,
    requests,
    nonZeroCpu: nonZero(pod, 'cpu', DEFAULT_MILLI_CPU_REQUEST, options),
    nonZeroMemory: nonZero(pod, 'memory', DEFAULT_MEMORY_REQUEST, options),
    ports: hostPortsOf(pod),
    claims: [...new Set((pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim === undefined ? [] : [`${str(metaOf(object).namespace)}/${v.persistentVolumeClaim.claimName}`])))],
    hasClaimVolumes: (pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim !== undefined || v.ephemeral !== undefined),
  };
}

/** A node's allocatable resources (capacity when no allocatable is given). */
export function allocatableOf(node: Node): Map<string, number> {
  const list = node.status?.allocatable ?? node.status?.capacity ?? {};
  return new Map(Object.entries(list).map(([resource, value]) => [resource, resourceAmount(value, resource)]));
}
