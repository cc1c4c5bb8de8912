/**
 * The errors the watch cache answers with itself (a missing object is the store's not-found:
 * the registry maps store codes). The HTTP layer maps categories: timeout 504 with the cause
 * ResourceVersionTooLarge and Retry-After 1 (as upstream's cacher), invalid 400.
 */
import { OrchError } from '../../api/errors.js';
import { StoreErrorCode } from '../storage/index.js';

export const WatchCacheErrorCode = {
  /** The cache did not reach the asked resourceVersion within the wait (3 s, as upstream). */
  tooLargeResourceVersion: 'APISERVER_WATCH_CACHE_RV_TOO_LARGE',
  /** A resourceVersion is not a decimal revision. */
  invalidResourceVersion: 'APISERVER_WATCH_CACHE_INVALID_RV',
} as const;

/** Upstream's words: "Too large resource version: N, current: M". */
export const tooLargeResourceVersion = (wanted: number, current: number): OrchError =>
  new OrchError(WatchCacheErrorCode.tooLargeResourceVersion, 'timeout', `Too large resource version: ${wanted}, current: ${current}`, { subject: 'resourceVersion' });

export const invalidResourceVersion = (text: string): OrchError =>
  new OrchError(WatchCacheErrorCode.invalidResourceVersion, 'invalid',
    `invalid value for query parameter resourceVersion: ${JSON.stringify(text)}: a resourceVersion is a revision of this server (digits), "0" or empty`, { subject: 'resourceVersion' });

/** The store's not-found (the registry answers 404 naming the object). */
export const notFound = (key: string): OrchError =>
  new OrchError(StoreErrorCode.notFound, 'not-found', `no object at ${key}`, { subject: key });

/** The revision a resourceVersion names; 0 for "0". Throws invalid. */
export function parseRevision(text: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) throw invalidResourceVersion(text);
  return Number(text);
}
