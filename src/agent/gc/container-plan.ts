/**
 * What one container GC pass removes, decided from the runtime's lists alone (upstream's
 * containerGC: evictContainers and evictSandboxes). Pure: container-gc.ts lists and removes.
 *
 * Containers: the evictable ones are those not running and created at least `minAgeMs` ago,
 * grouped by (pod UID, container name), newest first. In that order:
 *   1. once every pod source is ready, those of pods that are gone (`isRemovable`) all go;
 *   2. each group keeps at most `maxPerPodContainer` (negative: no limit);
 *   3. when more than `maxContainers` are left (negative: no limit), each group keeps
 *      `maxContainers / groups` (at least 1), then the oldest go until the bound holds.
 * The newest dead instance of each container of a pod that is not gone always stays: the
 * pod's status (its last termination, a completed init container) and `kubectl logs
 * --previous` read it. The limits apply to the older ones, so `maxContainers` cannot go below
 * one per such container.
 *
 * Sandboxes: a sandbox that is not ready and holds no container is removed, except the newest
 * sandbox of a pod that is not gone (the pod's next sync may reuse what it knows of it).
 */

export interface ContainerGCPolicy {
  /** --minimum-container-ttl-duration in ms: younger dead containers stay. */
  readonly minAgeMs: number;
  /** --maximum-dead-containers-per-container (negative: no limit). */
  readonly maxPerPodContainer: number;
  /** --maximum-dead-containers (negative: no limit). */
  readonly maxContainers: number;
}

/** What GC asks about pods (upstream's podStateProvider). */
export interface PodStates {
  /** Every pod source delivered its first snapshot: a pod no source wants is gone for good. */
  sourcesReady(): boolean;
  /** The pod is gone (no source wants it and no worker holds it): all it left may go. */
  isRemovable(uid: string): boolean;
  /**
   * The pod is terminated (no worker holds it) though a source may still want it: the
   * eviction manager's reclaim (upstream's DeleteAllUnusedContainers) removes its dead
   * containers too. Default: never.
   */
  isTerminated?(uid: string): boolean;
}

/** A container of the agent's as the list call gives it. */
export interface GcContainer {
  readonly id: string;
  readonly podUid: string;
  /** Its name in the pod spec. */
  readonly name: string;
  readonly sandboxId: string;
  readonly state: 'created' | 'running' | 'exited' | 'unknown';
  /** ms since the epoch. */
  readonly createdAt: number;
}

export interface GcSandbox {
  readonly id: string;
  readonly podUid: string;
  readonly ready: boolean;
  /** ms since the epoch. */
  readonly createdAt: number;
}

const newestFirst = <T extends { readonly createdAt: number }>(a: T, b: T): number => b.createdAt - a.createdAt;

/** The newest non-running instance of each (pod, container) of pods not gone, by container ID. */
function protectedInstances(all: readonly GcContainer[], pods: PodStates): Set<string> {
  const newest = new Map<string, GcContainer>();
  for (const c of all) {
    if (c.state === 'running' || pods.isRemovable(c.podUid)) continue;
    const key = `${c.podUid}/${c.name}`;
    const known = newest.get(key);
    if (known === undefined || c.createdAt > known.createdAt) newest.set(key, c);
  }
  return new Set([...newest.values()].map((c) => c.id));
}

/** The containers to remove, oldest first. */
export function planContainerRemovals(all: readonly GcContainer[], policy: ContainerGCPolicy, nowMs: number, pods: PodStates): GcContainer[] {
  const keep = protectedInstances(all, pods);
  const units = new Map<string, GcContainer[]>();
  for (const c of all) {
    if (c.state === 'running' || c.createdAt > nowMs - policy.minAgeMs) continue;
    const key = `${c.podUid}/${c.name}`;
    units.set(key, [...(units.get(key) ?? []), c]);
  }
  for (const unit of units.values()) unit.sort(newestFirst);
  const removed: GcContainer[] = [];
  /** Removes the unit's instances past the `keepCount` newest (never a protected one); returns what stays. */
  const trim = (unit: readonly GcContainer[], keepCount: number): GcContainer[] => {
    const stay: GcContainer[] = [];
    unit.forEach((c, i) => {
      if (i < keepCount || keep.has(c.id)) stay.push(c);
      else removed.push(c);
    });
    return stay;
  };
  if (pods.sourcesReady()) {
    for (const [key, unit] of units) {
      if (!pods.isRemovable(unit[0]?.podUid ?? '')) continue;
      removed.push(...unit);
      units.delete(key);
    }
  }
  if (policy.maxPerPodContainer >= 0) for (const [key, unit] of units) units.set(key, trim(unit, policy.maxPerPodContainer));
  const count = (): number => [...units.values()].reduce((n, u) => n + u.length, 0);
  if (policy.maxContainers >= 0 && count() > policy.maxContainers && units.size > 0) {
    const perUnit = Math.max(1, Math.floor(policy.maxContainers / units.size));
    for (const [key, unit] of units) units.set(key, trim(unit, perUnit));
    let excess = count() - policy.maxContainers;
    const oldestFirst = [...units.values()].flat().sort((a, b) => a.createdAt - b.createdAt);
    for (const c of oldestFirst) {
      if (excess <= 0) break;
      if (keep.has(c.id)) continue;
      removed.push(c);
      excess--;
    }
  }
  return removed.sort((a, b) => a.createdAt - b.createdAt);
}

/** The sandboxes to remove, given the containers that stay after this pass's removals. */
export function planSandboxRemovals(sandboxes: readonly GcSandbox[], remaining: readonly GcContainer[], pods: PodStates): GcSandbox[] {
  const withContainers = new Set(remaining.map((c) => c.sandboxId));
  const byPod = new Map<string, GcSandbox[]>();
  for (const s of sandboxes) byPod.set(s.podUid, [...(byPod.get(s.podUid) ?? []), s]);
  const removed: GcSandbox[] = [];
  for (const [uid, list] of byPod) {
    list.sort(newestFirst);
    const gone = pods.sourcesReady() && pods.isRemovable(uid);
    for (const [i, s] of list.entries()) {
      if ((gone || i > 0) && !s.ready && !withContainers.has(s.id)) removed.push(s);
    }
  }
  return removed;
}
