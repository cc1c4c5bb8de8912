/**
 * The pods the sources want on this node, by UID (upstream's pod manager): the sync loop writes
 * it as pod config updates arrive; the per-pod sync, the servers and API-server mode read it.
 * A pod is desired from its ADD until its REMOVE, whether it was admitted, rejected or finished.
 */
import type { NodePod } from '../../api/pod/index.js';

/** What the other modules read. */
export interface DesiredPods {
  /** The newest object of a desired pod. */
  pod(uid: string): NodePod | undefined;
  isDesired(uid: string): boolean;
  /** Every desired pod, admitted, rejected or finished. */
  pods(): NodePod[];
}

/** The sync loop's side: the only writer. */
export interface PodManager extends DesiredPods {
  /** Adds the pod or replaces its object. */
  set(uid: string, pod: NodePod): void;
  /** Forgets the pod. Idempotent. */
  remove(uid: string): void;
  /** How many pods are desired. */
  readonly size: number;
}

export function createPodManager(): PodManager {
  const pods = new Map<string, NodePod>();
  return {
    pod: (uid) => pods.get(uid),
    isDesired: (uid) => pods.has(uid),
    pods: () => [...pods.values()],
    set(uid, pod) {
      pods.set(uid, pod);
    },
    remove(uid) {
      pods.delete(uid);
    },
    get size() {
      return pods.size;
    },
  };
}
