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
import type { Clock } from '../../api/clock.js';
import type { ContainerState, PodSandboxState } from '../runtime/cri/index.js';
import type { RuntimePodStatus } from './types.js';

/** A sandbox or container as a relist found it. */
export interface ObservedObject {
  readonly id: string;
  readonly state: PodSandboxState | ContainerState;
}

/** Objects that ask nothing of the agent: a sandbox ready, a container running. */
const SETTLED = new Set<string>(['SANDBOX_READY', 'CONTAINER_RUNNING']);

/** Each sandbox and container of a status by id, in the CRI's terms. */
function observedIn(status: RuntimePodStatus): Map<string, PodSandboxState | ContainerState> {
  const objects = new Map<string, PodSandboxState | ContainerState>();
  for (const s of status.sandboxes) objects.set(s.id, s.state === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY');
  for (const c of status.containers) objects.set(c.id, `CONTAINER_${c.state.toUpperCase()}` as ContainerState);
  return objects;
}

/** The cache as the runtime manager uses it: reads through it, and tells it when it acts on a pod. */
export interface PodStatusReads {
  /** The pod's runtime objects changed, or may have (the agent acted on it). */
  invalidate(uid: string): void;
  /**
   * The pod's status: the kept one when still vouched for, `absent()` when the last relist
   * vouches that the runtime holds nothing of the pod, else `reader`'s (kept for next time).
   */
  read(uid: string, reader: () => Promise<RuntimePodStatus>, absent?: () => RuntimePodStatus): Promise<RuntimePodStatus>;
}

/** The cache as the PLEG feeds it. */
export interface PodStatusObserver {
  /** A relist that began at `startedAt` (ms since the epoch) succeeded; `seen`: the pod UIDs it found. */
  relisted(startedAt: number, seen?: ReadonlySet<string>): void;
  /**
   * A relist at `seenAt` found the pod's sandboxes and containers changed to `observed`.
   * Undefined when the change is one the agent has read already (its own start of a container,
   * read back by the sync that made it) and asks nothing of it: no sync. Otherwise the kept
   * status is forgotten and the answer is the question to ask just before the pod's sync runs:
   * is it still needed? It is not once a status read after `seenAt` shows every sandbox ready
   * and every container running, with each observed object among them on the way there (a
   * sandbox ready, a container created or running): a change seen while the agent was starting
   * the pod (its sandbox before its containers) asks no sync once that start has been read back.
   */
  observe(uid: string, observed: readonly ObservedObject[], seenAt: number): (() => boolean) | undefined;
}

export interface PodStatusCache extends PodStatusReads, PodStatusObserver {}

export interface PodStatusCacheOptions {
  /** When statuses were read and pods invalidated, and how old the last relist is. */
  readonly clock: Pick<Clock, 'now'>;
  /** A relist older than this vouches for nothing (default 5 s: five relist periods). */
  readonly maxRelistAgeMs?: number;
}

export function createPodStatusCache(options: PodStatusCacheOptions): PodStatusCache {
  const now = (): number => options.clock.now();
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


  function invalidate(uid: string): void {
    entries.delete(uid);
    touched.set(uid, now());
    if (reading.has(uid)) invalidated.set(uid, ++generation);
  }

  /** The kept status shows exactly `observed`, all settled: the agent's own change, read back. */
  function holds(uid: string, observed: readonly ObservedObject[]): boolean {
    const kept = entries.get(uid);
    if (kept === undefined || !observed.every((o) => SETTLED.has(o.state))) return false;
    const shown = observedIn(kept.status);
    return shown.size === observed.length && observed.every((o) => shown.get(o.id) === o.state);
  }

  /** A status read after `seenAt`, all settled, holds every observed object on its way there. */
  function explains(uid: string, observed: readonly ObservedObject[], seenAt: number): boolean {
    const kept = entries.get(uid);
    if (kept === undefined || kept.readAt <= seenAt) return false;
    const shown = observedIn(kept.status);
    for (const state of shown.values()) if (!SETTLED.has(state)) return false;
    return observed.every((o) => shown.has(o.id) && (SETTLED.has(o.state) || o.state === 'CONTAINER_CREATED'));
  }

  return {
    invalidate,
    observe(uid, observed, seenAt) {
      if (holds(uid, observed)) return undefined;
      invalidate(uid);
      return () => !explains(uid, observed, seenAt);
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
