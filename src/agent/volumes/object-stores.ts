/**
 * How the object manager reads one kind of object (ConfigMaps or Secrets) for each
 * configMapAndSecretChangeDetectionStrategy, as upstream's managers:
 *
 *   | strategy | reads                                                                  | requests       |
 *   |----------|------------------------------------------------------------------------|----------------|
 *   | Get      | a GET on every read                                                    | one per read   |
 *   | Cache    | a GET when the kept copy is older than the TTL (the Node's ttl          | one per object |
 *   |          | annotation, else 1 min), or when a pod                                  |                |
 *   |          | naming the object was registered since (added or changed)              | per TTL        |
 *   | Watch    | memory: one list and watch per object (fieldSelector metadata.name),    | a re-opened    |
 *   |          | shared by the pods naming it, stopped when the last one goes or once   | watch per 5 to |
 *   |          | the object is immutable                                                | 10 min         |
 *
 * With Cache and Watch an object no registered pod names cannot be read (as upstream: "not
 * registered"). Each store resolves undefined for an object that does not exist.
 */
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { createReflector, getIfExists, type Reflector, type RestClient } from '../orchclient/index.js';
import { VOLUME_OBJECT_UNAVAILABLE } from './types.js';

/** An object a store reads (a ConfigMap or a Secret, as the API server answers it). */
export type ApiObject = { readonly metadata?: { readonly resourceVersion?: string; readonly name?: string }; readonly immutable?: boolean };

/** The reads of one kind of object, and the references that keep them. */
export interface ObjectStore<T extends ApiObject> {
  get(namespace: string, name: string): Promise<T | undefined>;
  /** A pod named the object (again): keep it available. */
  addReference(namespace: string, name: string): void;
  /** That pod no longer names it. */
  deleteReference(namespace: string, name: string): void;
  stop(): Promise<void>;
}

export interface StoreOptions {
  readonly rest: RestClient;
  /** The collection's plural: `configmaps`, `secrets`. */
  readonly resource: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

function objectPath(resource: string, namespace: string, name?: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

function notRegistered(resource: string, namespace: string, name: string): OrchError {
  return new OrchError(VOLUME_OBJECT_UNAVAILABLE, 'unavailable', `${resource} ${namespace}/${name} is not registered: no pod of this node names it`, { subject: `${resource} ${namespace}/${name}` });
}

/** Get: every read asks the API server. */
export function getStore<T extends ApiObject>(o: StoreOptions): ObjectStore<T> {
  return {
    get: (namespace, name) => getIfExists<T>(o.rest, objectPath(o.resource, namespace, name)),
    addReference: () => undefined,
    deleteReference: () => undefined,
    stop: () => Promise.resolve(),
  };
}

interface CacheItem<T> {
  refs: number;
  /** The kept answer and when it was read; undefined: read on the next get. */
  data: { readonly object: T | undefined; readonly at: number } | undefined;
  inflight: Promise<T | undefined> | undefined;
}

/** Cache: a copy kept for `ttlMs()`, dropped when a pod naming the object is registered. */
export function cacheStore<T extends ApiObject>(o: StoreOptions & { readonly ttlMs: () => number }): ObjectStore<T> {
  const items = new Map<string, CacheItem<T>>();
  async function fetch(item: CacheItem<T>, namespace: string, name: string): Promise<T | undefined> {
    try {
      const object = await getIfExists<T>(o.rest, objectPath(o.resource, namespace, name));
      item.data = { object, at: o.clock.now() };
      return object;
    } catch (err) {
      // A failed refresh keeps serving the copy it has (upstream returns the cached data).
      if (item.data === undefined) throw err;
      o.logger.v(2, 'cannot refresh a cached object; using the kept copy', { resource: o.resource, object: key(namespace, name), err: messageOf(err) });
      return item.data.object;
    } finally {
      item.inflight = undefined;
    }
  }
  return {
    get(namespace, name) {
      const item = items.get(key(namespace, name));
      if (item === undefined) return Promise.reject(notRegistered(o.resource, namespace, name));
      if (item.data !== undefined && o.clock.now() - item.data.at < o.ttlMs()) return Promise.resolve(item.data.object);
      item.inflight ??= fetch(item, namespace, name);
      return item.inflight;
    },
    addReference(namespace, name) {
      const k = key(namespace, name);
      const item = items.get(k) ?? { refs: 0, data: undefined, inflight: undefined };
      item.refs++;
      item.data = undefined;
      items.set(k, item);
    },
    deleteReference(namespace, name) {
      const k = key(namespace, name);
      const item = items.get(k);
      if (item === undefined) return;
      if (--item.refs <= 0) items.delete(k);
    },
    stop: () => Promise.resolve(),
  };
}

interface WatchItem<T> {
  refs: number;
  object: T | undefined;
  synced: boolean;
  reflector: Reflector | undefined;
  /** Told once the first list arrived. */
  readonly waiters: Set<() => void>;
}

/** Watch: one reflector per object while pods name it; reads wait for its first list up to `syncTimeoutMs`. */
export function watchStore<T extends ApiObject>(o: StoreOptions & { readonly syncTimeoutMs: number }): ObjectStore<T> {
  const items = new Map<string, WatchItem<T>>();
  const stopping = new Set<Promise<void>>();

  function stopReflector(item: WatchItem<T>): void {
    const reflector = item.reflector;
    item.reflector = undefined;
    if (reflector === undefined) return;
    const done = reflector.stop().finally(() => stopping.delete(done));
    stopping.add(done);
  }

  function observe(item: WatchItem<T>, object: T | undefined): void {
    item.object = object;
    if (!item.synced) {
      item.synced = true;
      for (const wake of item.waiters) wake();
      item.waiters.clear();
    }
    // An immutable object never changes: no need to keep watching it (upstream does the same).
    if (object?.immutable === true) stopReflector(item);
  }

  function start(namespace: string, name: string, item: WatchItem<T>): void {
    item.reflector = createReflector<T>({
      rest: o.rest, clock: o.clock, logger: o.logger, name: `${o.resource} ${key(namespace, name)}`,
      path: objectPath(o.resource, namespace), query: { fieldSelector: `metadata.name=${name}` }, pageSize: 0,
      onList: (list) => { observe(item, list[0]); },
      onEvent: (event) => { observe(item, event.type === 'DELETED' ? undefined : event.object); },
    });
    item.reflector.start();
  }

  async function waitSynced(item: WatchItem<T>, namespace: string, name: string): Promise<void> {
    if (item.synced) return;
    const gate = new AbortController();
    const wake = (): void => { gate.abort(); };
    item.waiters.add(wake);
    await o.clock.sleep(o.syncTimeoutMs, gate.signal);
    item.waiters.delete(wake);
    // The gate opens only when the first list arrived.
    if (!gate.signal.aborted) {
      throw new OrchError(VOLUME_OBJECT_UNAVAILABLE, 'unavailable', `${o.resource} ${namespace}/${name}: the watch has not listed it within ${o.syncTimeoutMs} ms`, {
        subject: `${o.resource} ${namespace}/${name}`,
      });
    }
  }

  return {
    async get(namespace, name) {
      const item = items.get(key(namespace, name));
      if (item === undefined) throw notRegistered(o.resource, namespace, name);
      await waitSynced(item, namespace, name);
      return item.object;
    },
    addReference(namespace, name) {
      const k = key(namespace, name);
      let item = items.get(k);
      if (item === undefined) {
        item = { refs: 0, object: undefined, synced: false, reflector: undefined, waiters: new Set() };
        items.set(k, item);
        start(namespace, name, item);
      }
      item.refs++;
    },
    deleteReference(namespace, name) {
      const k = key(namespace, name);
      const item = items.get(k);
      if (item === undefined || --item.refs > 0) return;
      items.delete(k);
      stopReflector(item);
    },
    async stop() {
      for (const item of items.values()) stopReflector(item);
      items.clear();
      await Promise.all([...stopping]);
    },
  };
}
