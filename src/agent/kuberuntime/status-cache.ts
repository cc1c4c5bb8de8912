/**
 * What the runtime held for each pod at its last read (getPodStatus), kept while the PLEG
 * vouches that nothing changed since: a periodic resync of a pod nobody touched then costs no
 * runtime call (110 pods resynced every minute made 4 CRI calls each), as upstream's pod cache
 * serves its workers. A status is reused only when
 *  - nothing invalidated the pod since its read began: the PLEG saw its sandboxes or
 *    containers change (ids or states), or the agent acted on it (sync, kill, remove); and
 *  - a relist began after the read ended (the PLEG has looked since) and the last relist is
 *    recent (a stalled PLEG vouches for nothing): the status is at most one relist period stale,
 *    as with upstream's cache.
 * Everything else in a status (exit codes, IPs, times, termination messages) is fixed for a
 * container id in a given state.
 */
import type { RuntimePodStatus } from './types.js';

export interface PodStatusCache {
  /** The pod's runtime objects changed, or may have (the PLEG saw it, or the agent acted). */
  invalidate(uid: string): void;
  /** A relist that began at `startedAt` (ms since the epoch) succeeded. */
  relisted(startedAt: number): void;
  /** The pod's status: the kept one when still vouched for, else `reader`'s (kept for next time). */
  read(uid: string, reader: () => Promise<RuntimePodStatus>): Promise<RuntimePodStatus>;
}

export interface PodStatusCacheOptions {
  readonly now?: () => number;
  /** A relist older than this vouches for nothing (default 5 s: five relist periods). */
  readonly maxRelistAgeMs?: number;
}

export function createPodStatusCache(options: PodStatusCacheOptions = {}): PodStatusCache {
  const now = options.now ?? Date.now;
  const maxAge = options.maxRelistAgeMs ?? 5000;
  /** Counts invalidations and reads, to tell whether one came after the other. */
  let generation = 0;
  const entries = new Map<string, { readonly status: RuntimePodStatus; readonly readAt: number }>();
  /** Generation of a pod's last invalidation, kept only while reads of it are under way. */
  const invalidated = new Map<string, number>();
  const reading = new Map<string, number>();
  let lastRelist = 0;

  return {
    invalidate(uid) {
      entries.delete(uid);
      if (reading.has(uid)) invalidated.set(uid, ++generation);
    },
    relisted(startedAt) {
      lastRelist = Math.max(lastRelist, startedAt);
    },
    async read(uid, reader) {
      const kept = entries.get(uid);
      if (kept !== undefined && lastRelist > kept.readAt && now() - lastRelist <= maxAge) return kept.status;
      const began = ++generation;
      reading.set(uid, (reading.get(uid) ?? 0) + 1);
      try {
        const status = await reader();
        if ((invalidated.get(uid) ?? 0) < began) entries.set(uid, { status, readAt: now() });
        else entries.delete(uid);
        return status;
      } finally {
        const left = (reading.get(uid) ?? 1) - 1;
        if (left > 0) reading.set(uid, left);
        else {
          reading.delete(uid);
          invalidated.delete(uid);
        }
      }
    },
  };
}
