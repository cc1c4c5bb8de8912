/**
 * The API server's pod source (upstream: config.NewSourceApiserver): the pods whose
 * spec.nodeName is this node, listed and watched through a reflector (resuming after
 * disconnects, re-listing on 410), delivered as full snapshots to the pod config's `api`
 * source. Mirror pods (the API copies of this node's static pods) are kept apart: they are not
 * pods to run, the mirror manager and the status writer read them. A pod enters the agent here:
 * it becomes a NodePod, or is logged and left out when it has no UID or no name.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../api/clock.js';
import { isMirrorPod, isStaticPod, podNamespacedName, toNodePod, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import { createReflector, type Reflector } from '../orchclient/index.js';
import type { RestClient, WatchEvent } from '../orchclient/index.js';

export interface ApiPodSourceOptions {
  readonly rest: RestClient;
  /** The reflector's back-off. */
  readonly clock: Clock;
  readonly nodeName: string;
  readonly logger: Logger;
  /** The pods to run (SET semantics), after each change; coalesced within a macrotask. */
  readonly push: (pods: readonly NodePod[]) => void;
}

export interface ApiPodSource {
  start(): void;
  stop(): Promise<void>;
  /** The newest API object of a pod by UID (pods to run and mirror pods alike). */
  byUID(uid: string): NodePod | undefined;
  /** The mirror pod of a static pod, by namespace and name. */
  mirrorOf(namespace: string, name: string): NodePod | undefined;
  /** Every mirror pod on this node. */
  mirrors(): NodePod[];
  /** The API object a desired pod's status is written to: a static pod's mirror, any other pod's own object. */
  apiObjectOf(pod: NodePod): NodePod | undefined;
  /** True once the first list was delivered. */
  hasSynced(): boolean;
  /** Calls `listener` whenever mirror pods changed (listed, or created, edited or deleted by someone). Returns the unsubscribe function. */
  onMirrorsChanged(listener: () => void): () => void;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

export function createApiPodSource(options: ApiPodSourceOptions): ApiPodSource {
  const pods = new Map<string, NodePod>();
  const mirrors = new Map<string, NodePod>();
  let scheduled: NodeJS.Immediate | undefined;
  let listed = false;
  let stopped = false;
  const mirrorListeners = new Set<() => void>();
  const mirrorsChanged = (): void => {
    for (const listener of mirrorListeners) listener();
  };

  function flush(): void {
    scheduled = undefined;
    if (stopped) return;
    options.push([...pods.values()]);
  }

  function schedule(): void {
    scheduled ??= setImmediate(flush);
  }

  /** The pod as a NodePod; undefined (logged) when it has no identity. */
  function admit(pod: Pod): NodePod | undefined {
    const result = toNodePod(pod);
    if (result.ok) return result.pod;
    options.logger.warn('Ignored a pod of the API server without an identity', { pod: podNamespacedName(pod), problem: result.problem });
    return undefined;
  }

  function put(pod: NodePod): void {
    const { uid, namespace, name } = pod.metadata;
    if (isMirrorPod(pod)) mirrors.set(key(namespace, name), pod);
    else pods.set(uid, pod);
  }

  function drop(pod: NodePod): void {
    const { uid, namespace, name } = pod.metadata;
    if (!isMirrorPod(pod)) {
      pods.delete(uid);
      return;
    }
    const k = key(namespace, name);
    if (mirrors.get(k)?.metadata.uid === uid) mirrors.delete(k);
  }

  const reflector: Reflector = createReflector<Pod>({
    rest: options.rest,
    clock: options.clock,
    path: '/api/v1/pods',
    query: { fieldSelector: `spec.nodeName=${options.nodeName}` },
    logger: options.logger,
    name: 'pods of this node',
    onList(items) {
      pods.clear();
      mirrors.clear();
      for (const item of items) {
        const pod = admit(item);
        if (pod !== undefined) put(pod);
      }
      listed = true;
      schedule();
      mirrorsChanged();
    },
    onEvent(event: WatchEvent<Pod>) {
      if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') return;
      const pod = admit(event.object);
      if (pod === undefined) return;
      if (event.type === 'DELETED') drop(pod);
      else put(pod);
      if (isMirrorPod(pod)) mirrorsChanged();
      else schedule();
    },
  });

  function byUID(uid: string): NodePod | undefined {
    const pod = pods.get(uid);
    if (pod !== undefined) return pod;
    for (const m of mirrors.values()) if (m.metadata.uid === uid) return m;
    return undefined;
  }

  return {
    start() {
      reflector.start();
    },
    async stop() {
      stopped = true;
      if (scheduled !== undefined) clearImmediate(scheduled);
      await reflector.stop();
    },
    byUID,
    mirrorOf: (namespace, name) => mirrors.get(key(namespace, name)),
    mirrors: () => [...mirrors.values()],
    apiObjectOf(pod) {
      return isStaticPod(pod) ? mirrors.get(key(pod.metadata.namespace, pod.metadata.name)) : byUID(pod.metadata.uid);
    },
    hasSynced: () => listed,
    onMirrorsChanged(listener) {
      mirrorListeners.add(listener);
      return () => mirrorListeners.delete(listener);
    },
  };
}
