/**
 * The object manager (upstream: the kubelet's configMap and secret managers): where the agent's
 * volumes, environment and image pull credentials read ConfigMaps and Secrets from the API
 * server, by configMapAndSecretChangeDetectionStrategy (object-stores.ts). Pods are registered
 * as they become desired (and again when they change) and unregistered when they go; the
 * objects each one names (object-references.ts) are what the Cache and Watch strategies keep.
 */
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../api/clock.js';
import type { NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { RestClient } from '../orchclient/index.js';
import { podReferences, type ObjectKind, type PodReferences } from './object-references.js';
import { cacheStore, getStore, watchStore, type ObjectStore, type StoreOptions } from './object-stores.js';
import type { VolumeObjectSource } from './types.js';

export type ChangeDetectionStrategy = 'Get' | 'Cache' | 'Watch';

/** Upstream's defaultTTL of the Cache strategy. */
export const DEFAULT_OBJECT_CACHE_TTL_MS = 60_000;
/** The Node annotation that sets the Cache strategy's TTL in seconds (upstream: node.alpha.kubernetes.io/ttl, set by the TTL controller). */
export const OBJECT_TTL_ANNOTATION = 'node.alpha.orch.io/ttl';

/** What of the node's own Node object the manager reads. */
export interface NodeAnnotations {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
}

/** The TTL a node's annotation asks for (ms), or undefined when it has none or it is not an integer. */
export function nodeObjectTtlMs(node: NodeAnnotations | undefined): number | undefined {
  const value = node?.metadata?.annotations?.[OBJECT_TTL_ANNOTATION];
  if (value === undefined || !/^-?\d+$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}
/** How long a read under Watch waits for its object's first list. */
export const DEFAULT_WATCH_SYNC_TIMEOUT_MS = 5_000;

export interface ObjectManager extends VolumeObjectSource {
  /** The pod is desired (added, or its object changed): the objects it names stay available. */
  registerPod(pod: NodePod): void;
  /** The pod is gone. Idempotent. */
  unregisterPod(uid: string): void;
  /** The node's Node object as last read: its ttl annotation sets the Cache strategy's TTL. */
  nodeChanged(node: NodeAnnotations | undefined): void;
  /** Stops every watch. */
  stop(): Promise<void>;
}

export interface ObjectManagerOptions {
  readonly rest: RestClient;
  readonly strategy: ChangeDetectionStrategy;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Watch: how long a read waits for the object's first list (default 5 s). */
  readonly watchSyncTimeoutMs?: number;
}

function storeFor<T extends ConfigMap | Secret>(o: ObjectManagerOptions, resource: string, cacheTtlMs: () => number | undefined): ObjectStore<T> {
  const common: StoreOptions = { rest: o.rest, resource, clock: o.clock, logger: o.logger };
  switch (o.strategy) {
    case 'Get':
      return getStore<T>(common);
    case 'Cache':
      return cacheStore<T>({ ...common, ttlMs: () => cacheTtlMs() ?? DEFAULT_OBJECT_CACHE_TTL_MS });
    case 'Watch':
      return watchStore<T>({ ...common, syncTimeoutMs: o.watchSyncTimeoutMs ?? DEFAULT_WATCH_SYNC_TIMEOUT_MS });
  }
}

/** The manager over `rest`. Starts nothing until a pod is registered. */
export function createObjectManager(options: ObjectManagerOptions): ObjectManager {
  // Cache: how long a read copy serves, asked at each read (the Node's ttl annotation once read, else 1 min).
  let nodeTtlMs: number | undefined;
  const ttl = (): number | undefined => nodeTtlMs;
  const stores = { configMap: storeFor<ConfigMap>(options, 'configmaps', ttl), secret: storeFor<Secret>(options, 'secrets', ttl) };
  /** The references each registered pod holds, by UID. */
  const registered = new Map<string, { readonly namespace: string; readonly refs: PodReferences }>();

  function release(uid: string): void {
    const held = registered.get(uid);
    if (held === undefined) return;
    registered.delete(uid);
    for (const kind of ['configMap', 'secret'] as const satisfies readonly ObjectKind[]) {
      for (const name of held.refs[kind]) stores[kind].deleteReference(held.namespace, name);
    }
  }

  return {
    configMap: (namespace, name) => stores.configMap.get(namespace, name),
    secret: (namespace, name) => stores.secret.get(namespace, name),
    registerPod(pod) {
      const { uid, namespace } = pod.metadata;
      const refs = podReferences(pod);
      // New references first, the previous ones after: an object the pod still names keeps its watch.
      for (const kind of ['configMap', 'secret'] as const) for (const name of refs[kind]) stores[kind].addReference(namespace, name);
      release(uid);
      registered.set(uid, { namespace, refs });
    },
    unregisterPod(uid) {
      release(uid);
    },
    nodeChanged(node) {
      nodeTtlMs = nodeObjectTtlMs(node);
    },
    async stop() {
      registered.clear();
      await Promise.all([stores.configMap.stop(), stores.secret.stop()]);
    },
  };
}
