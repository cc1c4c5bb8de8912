/**
 * A Store that answers some reads from watch caches (one per cached resource), with upstream's
 * rules (cacher.go, v1.28):
 * - get: resourceVersion absent or "" from the store (a consistent read); "0" from the cache, any
 *   state; "N" from the cache once it reached N (at most the wait, then 504 Too large resource
 *   version);
 * - list: from the cache for resourceVersion "0" (a limit is ignored: every item, no continue)
 *   and for "N" with NotOlderThan (or no match) and no limit; from the store for no
 *   resourceVersion (consistent), Exact, continue tokens and "N" with a limit.
 * A cache that is not ready (listing, or listing again after its watch broke) sends its reads to
 * the store: never a wrong answer, only a costlier one. Writes and watches go to the store; an
 * update takes the cache's copy of the object along as the state to start from (see
 * UpdateOptions.cachedExisting).
 */
import type { Clock } from '../../api/clock.js';
import type { GetOptions, ListOptions, ListResult, ManagedStore, StoredObject } from '../storage/index.js';
import { parseRevision } from './errors.js';
import { ResourceCache } from './resource-cache.js';

export interface WatchCacheOptions {
  /** The top-level prefixes to cache, `/pods/` (upstream caches every resource but events). */
  readonly prefixes: readonly string[];
  readonly clock: Clock;
  readonly log: (message: string) => void;
  /** How long a read waits for the cache to reach its resourceVersion; default 3 s (upstream's blockTimeout). */
  readonly waitMs?: number;
  /** Back-off of a cache that cannot list or watch; defaults 500 ms doubling to 30 s. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Called for every change a cache applies, with the resource (apiserver_watch_cache_events_received_total). */
  readonly onEvent?: (resource: string) => void;
}

/** The store with caches in front, and what the caches hold (for tests and diagnostics). */
export interface CachedStore extends ManagedStore {
  /** Per cached prefix: ready, revision, objects, bytes of encoded JSON. */
  cacheStats(): Record<string, { ready: boolean; revision: number; objects: number; bytes: number }>;
}

/** `/pods/default/web` -> `/pods/`. */
function topPrefix(keyOrPrefix: string): string {
  const end = keyOrPrefix.indexOf('/', 1);
  return end < 0 ? `${keyOrPrefix}/` : keyOrPrefix.slice(0, end + 1);
}

/** Whether a list is delegated to the store (upstream's shouldDelegateList, chunking on). */
function delegated(options: ListOptions): boolean {
  const rv = options.resourceVersion ?? '';
  const limit = options.limit ?? 0;
  return rv === ''
    || (options.continue !== undefined && options.continue !== '')
    || (limit > 0 && rv !== '0')
    || (options.resourceVersionMatch !== undefined && options.resourceVersionMatch !== 'NotOlderThan');
}

export function withWatchCache(store: ManagedStore, options: WatchCacheOptions): CachedStore {
  const caches = new Map<string, ResourceCache>();
  for (const prefix of new Set(options.prefixes)) {
    const resource = prefix.slice(1, -1);
    const onEvent = options.onEvent;
    caches.set(prefix, new ResourceCache({
      store, prefix, clock: options.clock, log: options.log,
      waitMs: options.waitMs ?? 3000, backoffMs: options.backoffMs ?? 500, maxBackoffMs: options.maxBackoffMs ?? 30_000,
      ...(onEvent === undefined ? {} : { onEvent: () => { onEvent(resource); } }),
    }));
  }
  for (const cache of caches.values()) cache.start();
  let closing: Promise<void> | undefined;

  const get = async (key: string, getOptions: GetOptions = {}): Promise<StoredObject> => {
    const rv = getOptions.resourceVersion ?? '';
    const cache = rv === '' ? undefined : caches.get(topPrefix(key));
    if (cache === undefined) return store.get(key, getOptions);
    const revision = parseRevision(rv);
    if (!cache.isReady()) return store.get(key, getOptions);
    return cache.get(key, revision);
  };

  const list = async (prefix: string, listOptions: ListOptions = {}): Promise<ListResult> => {
    const cache = delegated(listOptions) ? undefined : caches.get(topPrefix(prefix));
    if (cache === undefined) return store.list(prefix, listOptions);
    const revision = parseRevision(listOptions.resourceVersion ?? '');
    if (!cache.isReady()) return store.list(prefix, listOptions);
    const result = await cache.list(prefix, revision, listOptions.index);
    return (listOptions.limit ?? 0) > 0 ? { ...result, limitIgnored: true } : result;
  };

  return {
    create: (key, object, createOptions) => store.create(key, object, createOptions),
    get,
    list,
    update: (key, updateOptions, mutate) => {
      // Upstream's cacher hands the store its copy of the object (cachedExistingObject): on etcd
      // that saves the read before each write when the copy is current.
      const cache = caches.get(topPrefix(key));
      const cachedExisting = cache?.isReady() === true ? cache.peek(key) : undefined;
      return store.update(key, cachedExisting === undefined ? updateOptions : { ...updateOptions, cachedExisting }, mutate);
    },
    delete: (key, deleteOptions) => store.delete(key, deleteOptions),
    watch: (keyOrPrefix, watchOptions) => store.watch(keyOrPrefix, watchOptions),
    currentRevision: () => store.currentRevision(),
    compact: (revision) => store.compact(revision),
    close: () => {
      closing ??= (async () => {
        await Promise.all([...caches.values()].map((cache) => cache.stop()));
        await store.close();
      })();
      return closing;
    },
    cacheStats: () => {
      const stats: Record<string, { ready: boolean; revision: number; objects: number; bytes: number }> = {};
      for (const [prefix, cache] of caches) stats[prefix] = { ready: cache.isReady(), revision: cache.currentRevision(), ...cache.stats() };
      return stats;
    },
  };
}
