/**
 * The pure decisions of an in-place resize (upstream v1.28: the kubelet's canResizePod and the
 * runtime manager's computePodResizeAction): whether the node admits a pod's new requests, and
 * what a running container needs to reach its new resources.
 */
import type { Container, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { resourceAmount } from '../../api/pod/index.js';
import type { ResizeStatus, ResourceList } from './checkpoint.js';

/** What a node can give pods: CPU in millicores, memory in bytes. */
export interface Allocatable {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
}

/** CPU (millicores) and memory (bytes) requested. */
export interface Requested {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
}

/**
 * The node's answer to a pod's new requests: Infeasible when the pod alone asks for more than
 * the node's allocatable, Deferred when it does not fit beside what the other pods hold, else
 * InProgress (accepted: the allocation changes now).
 */
export function admitResize(wanted: Requested, others: Requested, allocatable: Allocatable): Exclude<ResizeStatus, 'Proposed'> {
  if (wanted.cpuMilli > allocatable.cpuMilli || wanted.memoryBytes > allocatable.memoryBytes) return 'Infeasible';
  if (wanted.cpuMilli + others.cpuMilli > allocatable.cpuMilli || wanted.memoryBytes + others.memoryBytes > allocatable.memoryBytes) return 'Deferred';
  return 'InProgress';
}

/** The reason of a decision, for the log and the event. */
export function resizeMessage(decision: ResizeStatus, wanted: Requested, others: Requested, allocatable: Allocatable): string {
  const amounts = `requested cpu ${wanted.cpuMilli}m memory ${wanted.memoryBytes}, other pods hold cpu ${others.cpuMilli}m memory ${others.memoryBytes}, allocatable cpu ${allocatable.cpuMilli}m memory ${allocatable.memoryBytes}`;
  if (decision === 'Infeasible') return `resize is infeasible: the pod alone asks for more than the node's allocatable (${amounts})`;
  if (decision === 'Deferred') return `resize is deferred until the node has room (${amounts})`;
  return `resize accepted (${amounts})`;
}

/** Two resource lists hold the same amounts (quantities compared by value). */
export function sameResourceList(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const names = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const name of names) {
    const x = left[name];
    const y = right[name];
    if (x === undefined || y === undefined) return false;
    if (resourceAmount(x, name) !== resourceAmount(y, name)) return false;
  }
  return true;
}

/** The CPU and memory values the runtime enforces for a container (millicores, bytes; 0: unset). */
export interface EnforcedValues {
  readonly cpuRequest: number;
  readonly cpuLimit: number;
  readonly memoryLimit: number;
}

export function enforcedValues(r: ResourceRequirements | undefined): EnforcedValues {
  return {
    cpuRequest: resourceAmount(r?.requests?.cpu ?? r?.limits?.cpu, 'cpu'),
    cpuLimit: resourceAmount(r?.limits?.cpu, 'cpu'),
    memoryLimit: resourceAmount(r?.limits?.memory, 'memory'),
  };
}

/** The CPU and memory of two requirements are the same (requests and limits, by value). */
export function sameCpuMemory(a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): boolean {
  const pick = (l: Readonly<Record<string, string>> | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    if (l?.cpu !== undefined) out.cpu = l.cpu;
    if (l?.memory !== undefined) out.memory = l.memory;
    return out;
  };
  return sameResourceList(pick(a?.requests), pick(b?.requests)) && sameResourceList(pick(a?.limits), pick(b?.limits));
}

export type ContainerResizeAction = 'none' | 'update' | 'restart';

/**
 * What a running container needs to go from `current` to the resources of `desired`: nothing
 * when the CPU request, CPU limit and memory limit are the same (a memory request is not
 * enforced); a restart when a changed resource's resizePolicy says RestartContainer; else an
 * update of the running container (UpdateContainerResources).
 */
export function containerResizeAction(desired: Container, current: ResourceRequirements): ContainerResizeAction {
  const want = enforcedValues(desired.resources);
  const have = enforcedValues(current);
  const cpuChanged = want.cpuRequest !== have.cpuRequest || want.cpuLimit !== have.cpuLimit;
  const memoryChanged = want.memoryLimit !== have.memoryLimit;
  if (!cpuChanged && !memoryChanged) return 'none';
  const policy = (resource: string): string => desired.resizePolicy?.find((p) => p.resourceName === resource)?.restartPolicy ?? 'NotRequired';
  if ((cpuChanged && policy('cpu') === 'RestartContainer') || (memoryChanged && policy('memory') === 'RestartContainer')) return 'restart';
  return 'update';
}
