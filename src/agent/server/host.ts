/**
 * What the servers read from the rest of the agent: narrow, read-only views handed in by the
 * composition root (pods and their statuses, the CRI calls the handlers make, the health
 * checks, the logger root). The servers never change a pod.
 */
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import type { ImageService, RuntimeService } from '../runtime/cri/index.js';
import type { NodePod } from '../../api/pod/index.js';

export interface PodsView {
  /** The pods the agent runs (what its sources want, admitted or not), as the sources gave them. */
  desiredPods(): readonly NodePod[];
  /** The newest status the agent computed for a pod. */
  podStatus(uid: string): PodStatus | undefined;
}

/** The CRI calls of the handlers (lists, stats, logs, streaming). */
export type ServerCri = Pick<RuntimeService,
  | 'listPodSandbox' | 'listContainers' | 'containerStatus' | 'execSync' | 'exec' | 'attach' | 'portForward'
  | 'listContainerStats' | 'listPodSandboxStats' | 'checkpointContainer'> & Pick<ImageService, 'imageFsInfo'>;

/** The pod of `namespace`/`name` (and `uid` when given), with its newest status. */
export function findPod(view: PodsView, namespace: string, name: string, uid?: string): NodePod | undefined {
  const pod = view.desiredPods().find((p) => p.metadata.name === name && p.metadata.namespace === namespace);
  if (pod === undefined || (uid !== undefined && uid !== '' && pod.metadata.uid !== uid)) return undefined;
  const status = view.podStatus(pod.metadata.uid);
  return status === undefined ? pod : { ...pod, status };
}
