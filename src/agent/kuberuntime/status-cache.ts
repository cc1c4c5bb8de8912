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
 *
 * A pod the last relist did not see at all (a new pod's first sync) is known to hold nothing in
 * the runtime under the same conditions — the relist is recent and nothing touched the pod since
 * it began — so its first sync starts without listing the runtime for it.
 */
import type { RuntimePodStatus } from './types.js';

/** `<id> <CRI state>` of each sandbox and container of a status, sorted (the PLEG's form). */
function observedIn(status: RuntimePodStatus): string[] {
  return [
    ...status.sandboxes.map((s) => `${s.id} ${s.state === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY'}`),
    ...status.containers.map((c) => `${c.id} CONTAINER_${c.state.toUpperCase()}`),
  ].sort();
}

export interface PodStatusCache {
  /** The pod's runtime objects changed, or may have (the PLEG saw it, or the agent acted). */
  invalidate(uid: string): void;
  /**
   * Whether the kept status of the pod shows exactly `observed` (`<id> <CRI state>` of each
   * sandbox and container, sorted) with every sandbox ready and every container running: then
   * a change the PLEG saw is one the agent has read already (its own start of a container, read
   * back by the sync that made it) and that asks nothing of it, so neither the kept status nor a
   * sync of the pod is needed again. A container that exited or was only created, or a sandbox
   * not ready, may want the agent to act (a restart, the next init container): never held.
   */
  holds(uid: string, observed: readonly string[]): boolean;
  /**
   * Whether the kept status of the pod, read after `seenAt` (ms since the epoch), leaves nothing
   * to do about what the PLEG observed then: every sandbox ready, every container running, and
   * each observed object among them in a state on the way there (a sandbox ready, a container
   * created or running). So a change the PLEG saw while the agent was starting the pod (its
   * sandbox before its containers) asks no sync once that start has been read back.
   */
  explains(uid: string, observed: readonly string[], seenAt: number): boolean;
  /** A relist that began at `startedAt` (ms since the epoch) succeeded; `seen`: the pod UIDs it found. */
  relisted(startedAt: number, seen?: ReadonlySet<string>): void;
  /**
   * The pod's status: the kept one when still vouched for, `absent()` when the last relist
   * vouches that the runtime holds nothing of the pod, else `reader`'s (kept for next time).
   */
  read(uid: string, reader: () => Promise<RuntimePodStatus>, absent?: () => RuntimePodStatus): Promise<RuntimePodStatus>;
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
  /** Pod UIDs the last relist found (undefined: it did not say). */
  let lastSeen: ReadonlySet<string> | undefined;
  /** When each pod was last invalidated, kept while no relist began after it. */
  const touched = new Map<string, number>();

  return {
    invalidate(uid) {
      entries.delete(uid);
      touched.set(uid, now());
      if (reading.has(uid)) invalidated.set(uid, ++generation);
    },
    holds(uid, observed) {
      const kept = entries.get(uid);
      if (kept === undefined || !observed.every((entry) => entry.endsWith(' SANDBOX_READY') || entry.endsWith(' CONTAINER_RUNNING'))) return false;
      const shown = observedIn(kept.status);
      return shown.length === observed.length && shown.every((entry, i) => entry === observed[i]);
    },
    explains(uid, observed, seenAt) {
      const kept = entries.get(uid);
      if (kept === undefined || kept.readAt <= seenAt) return false;
      const shown = observedIn(kept.status);
      if (!shown.every((entry) => entry.endsWith(' SANDBOX_READY') || entry.endsWith(' CONTAINER_RUNNING'))) return false;
      const ids = new Set(shown.map((entry) => entry.slice(0, entry.indexOf(' '))));
      return observed.every((entry) => {
        const space = entry.indexOf(' ');
        const state = entry.slice(space + 1);
        return ids.has(entry.slice(0, space)) && (state === 'SANDBOX_READY' || state === 'CONTAINER_CREATED' || state === 'CONTAINER_RUNNING');
      });
    },
    relisted(startedAt, seen) {
      if (startedAt < lastRelist) return;
      lastRelist = startedAt;
      lastSeen = seen;
      // Kept: touches at or after the relist began (it may have missed what they did).
      for (const [uid, at] of touched) if (at < startedAt) touched.delete(uid);
    },
    async read(uid, reader, absent) {
      const kept = entries.get(uid);
      const fresh = now() - lastRelist <= maxAge;
      if (kept !== undefined && lastRelist > kept.readAt && fresh) return kept.status;
      if (kept === undefined && absent !== undefined && fresh && lastSeen !== undefined && !lastSeen.has(uid) && !touched.has(uid)) return absent();
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
