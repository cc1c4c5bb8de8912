/**
 * watchcache: orch-apiserver's watch cache (upstream's cacher, staging/src/k8s.io/apiserver/
 * pkg/storage/cacher), as a Store decorator: per cached resource it lists from the store, then
 * watches from that revision and keeps every object (as encoded JSON, off V8's heap), so that
 * reads with resourceVersion "0" (any state) or "N" (not older than N) are answered from memory
 * instead of the store. Consistent reads (no resourceVersion), Exact lists, continue tokens
 * and "N" with a limit go to the store, as upstream's do; so does every read while a cache is
 * not ready. Writes and watches pass through.
 *
 * Must not: know HTTP, resource types or selectors (a list's index hint comes from the caller).
 * Errors: the store's not-found; APISERVER_WATCH_CACHE_RV_TOO_LARGE (timeout: 504 with cause
 * ResourceVersionTooLarge) and APISERVER_WATCH_CACHE_INVALID_RV (invalid: 400).
 */
export { withWatchCache, type CachedStore, type WatchCacheOptions } from './cached-store.js';
export { WatchCacheErrorCode } from './errors.js';
