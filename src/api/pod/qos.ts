/**
 * A pod's QoS class, computed as upstream (ComputePodQOS) from the cpu and memory requests and
 * limits of its init and regular containers:
 *
 * | class      | when                                                                        |
 * |------------|-----------------------------------------------------------------------------|
 * | BestEffort | no container has a non-zero cpu or memory request or limit                  |
 * | Guaranteed | every container has non-zero cpu and memory limits, and for each resource   |
 * |            | the summed requests equal the summed limits                                 |
 * | Burstable  | anything else                                                               |
 *
 * A limit without a request counts as a request of the same value: the API server defaults
 * requests from limits, and pods from files get the same defaulting. A class already in
 * status.qosClass wins, as upstream (it is immutable once set). Quantities are summed exactly
 * (nano units as bigint), never as floats.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

import { memoizeByObject } from '../memo.js';
import { parseQuantity } from '../quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'] as const;
type QOSResource = (typeof QOS_RESOURCES)[number];

function isQOSClass(value: string): value is QOSClass {
  return value === 'Guaranteed' || value === 'Burstable' || value === 'BestEffort';
}

/** The quantity in nano units (exact: a parsed quantity's exponent is never below -9). */
function nanos(text: string, subject: string): bigint {
  const q = parseQuantity(text, subject);
  return q.mantissa * 10n ** BigInt(q.exponent + 9);
}

/**
 * The pod's QoS class. Throws OrchError `API_INVALID_QUANTITY` for a malformed cpu or memory
 * quantity, naming the field. Computed once per pod object (the agent's pods are never changed
 * in place): each sync asks several times (the pod cgroup, the container resources, the
 * status), and the sums allocate.
 */
export const qosClass: (pod: Pod) => QOSClass = memoizeByObject(computeQOSClass);

function computeQOSClass(pod: Pod): QOSClass {
  const recorded = pod.status?.qosClass;
  if (recorded !== undefined && isQOSClass(recorded)) return recorded;
  const requests = new Map<QOSResource, bigint>();
  const limits = new Map<QOSResource, bigint>();
  let guaranteed = true;
  const groups = [['containers', pod.spec?.containers ?? []], ['initContainers', pod.spec?.initContainers ?? []]] as const;
  for (const [field, containers] of groups) {
    for (const [index, container] of containers.entries()) {
      const found = new Set<QOSResource>();
      for (const resource of QOS_RESOURCES) {
        const base = `spec.${field}[${index}].resources`;
        const limitText = container.resources?.limits?.[resource];
        const requestText = container.resources?.requests?.[resource];
        const limit = limitText === undefined ? 0n : nanos(limitText, `${base}.limits.${resource}`);
        const request = requestText === undefined ? limit : nanos(requestText, `${base}.requests.${resource}`);
        if (request > 0n) requests.set(resource, (requests.get(resource) ?? 0n) + request);
        if (limit > 0n) {
          found.add(resource);
          limits.set(resource, (limits.get(resource) ?? 0n) + limit);
        }
      }
      if (found.size < QOS_RESOURCES.length) guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [resource, request] of requests) {
      if (limits.get(resource) !== request) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
