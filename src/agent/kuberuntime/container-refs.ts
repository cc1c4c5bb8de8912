/**
 * The agent's running containers with the pod and container they belong to, by the agent's
 * labels (for the CPU manager's reconcile, which updates their cpusets), and the cpuset update
 * itself (upstream: updateContainerCPUSet, an UpdateContainerResources carrying only the CPUs).
 */
import type { ContainerService, ContainerUpdateService } from '../runtime/cri/index.js';
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from './labels.js';

export interface RunningContainerRef {
  readonly id: string;
  readonly podUID: string;
  readonly name: string;
}

export async function runningContainerRefs(runtime: Pick<ContainerService, 'listContainers'>): Promise<RunningContainerRef[]> {
  const list = await runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
  const refs: RunningContainerRef[] = [];
  for (const c of list) {
    const podUID = c.labels[POD_UID_LABEL];
    const name = c.labels[CONTAINER_NAME_LABEL];
    if (podUID !== undefined && name !== undefined) refs.push({ id: c.id, podUID, name });
  }
  return refs;
}

export function updateContainerCpuset(runtime: ContainerUpdateService, id: string, cpus: string): Promise<void> {
  return runtime.updateContainerResources({ containerId: id, linux: { cpusetCpus: cpus } });
}
