/**
 * The pods the sources want on this node, by UID (upstream's pod manager): the sync loop writes
 * it as pod config updates arrive; the per-pod sync, the servers and API-server mode read it.
 * A pod is desired from its ADD until its REMOVE, whether it was admitted, rejected or finished.
 *
 * It is also where the node's one definition of the active pods lives (upstream's
 * GetActivePods): the desired pods neither rejected at admission nor finished (their worker
 * done, or terminal before they ran). A pod being terminated is still active. Graceful node
 * shutdown, the eviction manager and the resource managers (through the sync loop) read it.
 * As upstream's, it registers each pod with the object manager (API-server mode) as it is set
 * and unregisters it when it goes, so that the ConfigMaps and Secrets a pod names stay readable
 * while it is desired.
 */
import type { NodePod } from '../../api/pod/index.js';

/** What the other modules read. */
export interface DesiredPods {
  /** The newest object of a desired pod. */
  pod(uid: string): NodePod | undefined;
  isDesired(uid: string): boolean;
  /** Every desired pod, admitted, rejected or finished. */
  pods(): NodePod[];
  /** The active pods: desired, not rejected at admission, not finished. */
  activePods(): NodePod[];
}

/** The sync loop's side: the only writer. */
export interface PodManager extends DesiredPods {
  /** Adds the pod or replaces its object. */
  set(uid: string, pod: NodePod): void;
  /** Forgets the pod, and that it was rejected or finished. Idempotent. */
  remove(uid: string): void;
  /** How many pods are desired. */
  readonly size: number;
  /** How many pods are active. */
  activeCount(): number;
  /** The desired pod was refused at admission: it never runs. */
  markRejected(uid: string): void;
  /** The desired pod finished (its worker is done, or it was terminal before it ran): it never runs again. */
  markFinished(uid: string): void;
  isRejected(uid: string): boolean;
  isFinished(uid: string): boolean;
}

/** What keeps the objects of the desired pods (the ConfigMap and Secret manager in API-server mode). */
export interface PodRegistrar {
  registerPod(pod: NodePod): void;
  unregisterPod(uid: string): void;
}

export interface PodManagerOptions {
  /** Told of each pod set (added or changed) and each pod removed. */
  readonly registrar?: PodRegistrar | undefined;
}

export function createPodManager(options: PodManagerOptions = {}): PodManager {
  const pods = new Map<string, NodePod>();
  const rejected = new Set<string>();
  const finished = new Set<string>();
  const { registrar } = options;
  const isActive = (uid: string): boolean => !rejected.has(uid) && !finished.has(uid);
  return {
    pod: (uid) => pods.get(uid),
    isDesired: (uid) => pods.has(uid),
    pods: () => [...pods.values()],
    activePods: () => [...pods.values()].filter((p) => isActive(p.metadata.uid)),
    activeCount() {
      // Rejected and finished pods are always desired ones (remove() forgets all three).
      let n = pods.size - rejected.size;
      for (const uid of finished) if (!rejected.has(uid)) n--;
      return n;
    },
    markRejected(uid) {
      if (pods.has(uid)) rejected.add(uid);
    },
    markFinished(uid) {
      if (pods.has(uid)) finished.add(uid);
    },
    isRejected: (uid) => rejected.has(uid),
    isFinished: (uid) => finished.has(uid),
    set(uid, pod) {
      registrar?.registerPod(pod);
      pods.set(uid, pod);
    },
    remove(uid) {
      pods.delete(uid);
      rejected.delete(uid);
      finished.delete(uid);
      registrar?.unregisterPod(uid);
    },
    get size() {
      return pods.size;
    },
  };
}
