/**
 * The pod lifecycle event generator: relists the runtime's sandboxes and containers every
 * relist period and reports, per pod UID, that something changed (a container started, died,
 * was created or removed; a sandbox changed state). The pod worker of that pod then syncs.
 *
 * It feeds the pod status cache (kuberuntime's PodStatusCache, upstream's pod cache): what each
 * relist found, so that the cache can vouch for the statuses it keeps, and each change it saw,
 * which the cache tells apart from the agent's own changes that it has read back already.
 *
 * Owns: the relist loop and its health (/healthz/syncloop fails when relisting stalls).
 * Must not: read statuses in detail or act on pods (the workers do); touch runtime objects
 * that lack the agent's pod UID label.
 *
 * containerd 1.6 has no CRI container events, so relisting is the only source; with 110 pods
 * its two list calls cost 3–4 ms of client CPU together on a 2-core VM, most of it in grpc-js.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { isUnavailable, messageOf } from '../../api/errors.js';
import type { ObservedObject, PodStatusObserver } from '../kuberuntime/index.js';
import { POD_UID_LABEL } from '../kuberuntime/index.js';
import type { Logger } from '../logging/index.js';

/** A sandbox or container as a list call returns it (what the PLEG reads of it). */
interface RelistObject extends ObservedObject {
  readonly labels: Readonly<Record<string, string>>;
}

/** The two list calls the PLEG makes. */
export interface RelistSource {
  listPodSandbox(): Promise<readonly RelistObject[]>;
  listContainers(): Promise<readonly RelistObject[]>;
}

export interface PlegOptions {
  readonly runtime: RelistSource;
  readonly logger: Logger;
  /** Told what each relist found and each change it saw (see PodStatusObserver). */
  readonly cache: PodStatusObserver;
  /** The relist timer and the health's age. */
  readonly clock: Clock;
  /**
   * Called once per relist for each pod whose sandboxes or containers changed in a way the
   * cache does not explain; `stillNeeded` is the cache's question to ask just before the pod's
   * sync runs.
   */
  readonly onPodChanged: (uid: string, stillNeeded: () => boolean) => void;
  readonly relistPeriodMs?: number;
  /** A relist older than this makes the PLEG unhealthy (upstream: 3 minutes). */
  readonly relistThresholdMs?: number;
}

export interface PlegHealth {
  readonly healthy: boolean;
  /** When the last relist succeeded (ms since the epoch; 0: never). */
  readonly lastRelist: number;
  readonly message: string;
}

export interface Pleg {
  /** Starts relisting; the first relist runs at once. Idempotent. */
  start(): void;
  /** Runs one relist now (also used by tests); never throws. */
  relist(): Promise<void>;
  health(): PlegHealth;
  /** Stops the loop and waits for a running relist. */
  stop(): Promise<void>;
}

export function createPleg(options: PlegOptions): Pleg {
  const period = options.relistPeriodMs ?? 1000;
  const threshold = options.relistThresholdMs ?? 3 * 60_000;
  const { clock } = options;
  const now = (): number => clock.now();
  const log = options.logger;
  /** id -> each sandbox and container of the previous relist that has a pod UID label. */
  let previous = new Map<string, RelistObject>();
  /** The pod UIDs the previous relist found. */
  let previousSeen: ReadonlySet<string> = new Set<string>();
  let lastRelist = 0;
  let lastError = '';
  /** When a relist first found the runtime unreachable (one line when it goes, one when it comes back). */
  let unreachableSince: number | undefined;
  let timer: Timer | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  /**
   * How many of `objects` with a pod UID label the previous relist found with the same UID and
   * state; -Infinity as soon as one is new or changed. Together equal to the previous relist's
   * size, the lists hold exactly what it held (ids are unique).
   */
  function sameAsBefore(objects: readonly RelistObject[]): number {
    let same = 0;
    for (const o of objects) {
      const uid = o.labels[POD_UID_LABEL];
      if (uid === undefined) continue;
      const before = previous.get(o.id);
      if (before === undefined || before.state !== o.state || before.labels[POD_UID_LABEL] !== uid) return -Infinity;
      same++;
    }
    return same;
  }

  async function relistOnce(): Promise<void> {
    let sandboxes;
    let containers;
    const startedAt = now();
    try {
      [sandboxes, containers] = await Promise.all([options.runtime.listPodSandbox(), options.runtime.listContainers()]);
    } catch (err) {
      lastError = messageOf(err);
      if (isUnavailable(err) && unreachableSince === undefined) {
        unreachableSince = startedAt;
        log.warn('The container runtime is unreachable; pods wait for it to come back', { err: lastError });
      } else {
        log.v(2, 'PLEG relist failed', { err: lastError });
      }
      return;
    }
    lastError = '';
    if (unreachableSince !== undefined) {
      log.info('The container runtime is reachable again', { unreachableForMs: startedAt - unreachableSince });
      unreachableSince = undefined;
    }
    if (sameAsBefore(sandboxes) + sameAsBefore(containers) === previous.size) {
      // The usual relist: everything as before. Nothing is built (this runs every second).
      lastRelist = now();
      options.cache.relisted(startedAt, previousSeen);
      return;
    }
    // Nothing is built per object beyond map entries (the CRI client hands back the previous
    // list's objects for unchanged elements).
    const current = new Map<string, RelistObject>();
    const seen = new Set<string>();
    const changed = new Set<string>();
    const note = (o: RelistObject): void => {
      const uid = o.labels[POD_UID_LABEL];
      if (uid === undefined) return;
      current.set(o.id, o);
      seen.add(uid);
      const before = previous.get(o.id);
      if (before === undefined || before.labels[POD_UID_LABEL] !== uid || before.state !== o.state) changed.add(uid);
    };
    for (const o of sandboxes) note(o);
    for (const o of containers) note(o);
    for (const [id, before] of previous) if (!current.has(id)) changed.add(before.labels[POD_UID_LABEL] ?? '');
    previous = current;
    previousSeen = seen;
    lastRelist = now();
    if (changed.size > 0) {
      const seenAt = now();
      const observed = new Map<string, RelistObject[]>([...changed].map((uid) => [uid, []]));
      for (const o of current.values()) observed.get(o.labels[POD_UID_LABEL] ?? '')?.push(o);
      for (const [uid, objects] of observed) {
        const stillNeeded = options.cache.observe(uid, objects, seenAt);
        if (stillNeeded !== undefined) options.onPodChanged(uid, stillNeeded);
      }
    }
    options.cache.relisted(startedAt, seen);
  }

  function loop(): void {
    if (stopped) return;
    running = relistOnce().finally(() => {
      running = undefined;
      if (!stopped) {
        timer = clock.setTimer(period, loop);
      }
    });
  }

  return {
    start() {
      if (timer !== undefined || running !== undefined || stopped) return;
      loop();
    },
    async relist() {
      await (running ?? relistOnce());
    },
    health() {
      const age = now() - lastRelist;
      const healthy = lastRelist !== 0 && age <= threshold;
      const message = healthy
        ? 'ok'
        : lastRelist === 0
          ? `PLEG has not relisted yet${lastError === '' ? '' : `: ${lastError}`}`
          : `PLEG is not healthy: the last relist was ${Math.round(age / 1000)}s ago (threshold ${Math.round(threshold / 1000)}s)${lastError === '' ? '' : `: ${lastError}`}`;
      return { healthy, lastRelist, message };
    },
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
