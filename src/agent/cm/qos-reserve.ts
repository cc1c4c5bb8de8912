/**
 * Memory limits of the QoS cgroups under qosReserved (upstream: the QoS container manager's
 * setMemoryReserve, behind the QOSReserved gate): a percentage of the memory requested by the
 * pods of the classes above is held back from those below.
 *
 *   burstable limit  = allocatable − Guaranteed requests × percent / 100
 *   besteffort limit = burstable limit − Burstable requests × percent / 100
 *
 * `allocatable` is node allocatable's absolute memory (capacity − system − orch reserved). A
 * pod's request is its PodRequests memory (long-running containers' sum against init peaks).
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

import { parseQuantity, quantityValue } from '../../api/quantity.js';
import { podAmount } from './pod-resources.js';
import { qosClass } from '../../api/pod/index.js';

export interface QosMemoryReserve {
  /** qosReserved memory, in percent (0 to 100). */
  readonly percent: number;
  /** Node allocatable memory (absolute) in bytes. */
  readonly allocatableBytes: number;
}

function memoryRequest(pod: Pod): number {
  return podAmount(pod, 'memory', (c) => {
    const text = c.resources?.requests?.memory ?? c.resources?.limits?.memory;
    return text === undefined ? 0 : quantityValue(parseQuantity(text));
  });
}

export function qosMemoryLimits(pods: Iterable<Pod>, reserve: QosMemoryReserve): { readonly Burstable: number; readonly BestEffort: number } {
  let guaranteed = 0;
  let burstable = 0;
  for (const pod of pods) {
    const qos = qosClass(pod);
    if (qos === 'Guaranteed') guaranteed += memoryRequest(pod);
    else if (qos === 'Burstable') burstable += memoryRequest(pod);
  }
  const burstableLimit = reserve.allocatableBytes - Math.floor((guaranteed * reserve.percent) / 100);
  return { Burstable: burstableLimit, BestEffort: burstableLimit - Math.floor((burstable * reserve.percent) / 100) };
}

/** The percentage of `qosReserved` (`memory=50%`), or undefined when memory is not reserved. */
export function qosReservedPercent(qosReserved: Readonly<Record<string, string>>): number | undefined {
  const text = qosReserved['memory'];
  if (text === undefined) return undefined;
  return Number(text.replace(/%$/, ''));
}
