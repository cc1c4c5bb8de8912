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
 * With 110 pods a relist's two list calls cost 3–4 ms of client CPU together on a 2-core VM,
 * most of it in grpc-js. With the EventedPLEG gate (evented.ts) containerd's task events drive
 * it instead: an event inspects the one pod it concerns at once, and the relist is a safety net
 * every 300 s while the event stream is live, back to every second while it is not.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { isUnavailable, messageOf } from '../../api/errors.js';
import type { ObservedObject, PodStatusObserver } from '../kuberuntime/index.js';
import type { TaskEvent, TaskEventSource } from '../runtime/events/index.js';
import { POD_UID_LABEL } from '../kuberuntime/index.js';
import type { Logger } from '../logging/index.js';
import { keepSubscribed, type StreamKeeper } from './evented.js';

/** A sandbox or container as a list call returns it (what the PLEG reads of it). */
export interface RelistObject extends ObservedObject {
  readonly labels: Readonly<Record<string, string>>;
}

/** The two list calls the PLEG makes. */
export interface RelistSource {
  listPodSandbox(): Promise<readonly RelistObject[]>;
  listContainers(): Promise<readonly RelistObject[]>;
}

/** The evented PLEG's inputs (the EventedPLEG gate). */
export interface PlegEvents {
  /** The runtime's task events (containerd's event service). */
  readonly source: TaskEventSource;
  /** The sandboxes and containers of one pod (its UID label): what an event inspects. */
  readonly listPod: (uid: string) => Promise<readonly RelistObject[]>;
  /** The safety-net relist period while the stream is live (upstream: 300 s). */
  readonly relistPeriodMs?: number;
}

export interface PlegOptions {
  readonly runtime: RelistSource;
  readonly logger: Logger;
  /** Told what each relist found and each change it saw (see PodStatusObserver). */
  readonly cache: PodStatusObserver;
  /** The relist timer and the health's age. */
  readonly clock: Clock;
  /**
   * Called once per relist (or event) for each pod whose sandboxes or containers changed in a
   * way the cache does not explain; `stillNeeded` is the cache's question to ask just before the
   * pod's sync runs.
   */
  readonly onPodChanged: (uid: string, stillNeeded: () => boolean) => void;
  /** The relist period; with events, the period while the event stream is not live. */
  readonly relistPeriodMs?: number;
  /** A relist older than this makes the PLEG unhealthy (upstream: 3 minutes). */
  readonly relistThresholdMs?: number;
  /** EventedPLEG: driven by the runtime's events, the relist as a safety net. */
  readonly events?: PlegEvents;
}

export interface PlegHealth {
  readonly healthy: boolean;
  /** When the last relist succeeded, or the live event stream last vouched (ms since the epoch; 0: never). */
  readonly lastRelist: number;
  readonly message: string;
}

export interface Pleg {
  /** Starts relisting (and, evented, subscribing); the first relist runs at once. Idempotent. */
  start(): void;
  /** Runs one relist now (also used by tests); never throws. */
  relist(): Promise<void>;
  health(): PlegHealth;
  /** Stops the loop and waits for a running relist. */
  stop(): Promise<void>;
}

/** upstream's relist period with evented PLEG. */
export const EVENTED_RELIST_PERIOD_MS = 300_000;
/**
 * Once the stream is live again after a failure, the PLEG still relists every period for this
 * long before the long period: a runtime that has just restarted may still be recovering its
 * containers (containerd's CRI plugin recovers them after its event service answers), and an
 * exit it published before the new subscription reaches the PLEG only through a relist.
 */
export const LIVE_AGAIN_SETTLE_MS = 30_000;
/**
 * A live stream vouches for the pod status cache as of this long ago: an event still on its
 * way from the runtime (milliseconds) is not vouched for.
 */
export const EVENT_GRACE_MS = 1000;
/** An event's expected state is looked for again after 10 ms, doubling, this many times (about 5 s in all). */
const EXPECT_TRIES = 9;

/** What an event says about one object: it exists, runs (a sandbox ready), or no longer runs. */
type Want = 'present' | 'running' | 'stopped';
interface Expectation {
  readonly id: string;
  readonly want: Want;
  readonly attempt: number;
}

const WANTS: Readonly<Record<TaskEvent['topic'], Want>> = { create: 'present', start: 'running', exit: 'stopped', oom: 'stopped', delete: 'stopped' };
const RUNNING = new Set<string>(['SANDBOX_READY', 'CONTAINER_RUNNING']);

function meets(object: RelistObject | undefined, want: Want): boolean {
  if (want === 'present') return object !== undefined;
  if (want === 'running') return object !== undefined && RUNNING.has(object.state);
  return object === undefined || !RUNNING.has(object.state);
}

export function createPleg(options: PlegOptions): Pleg {
  const period = options.relistPeriodMs ?? 1000;
  const threshold = options.relistThresholdMs ?? 3 * 60_000;
  const events = options.events;
  const eventedPeriod = events?.relistPeriodMs ?? EVENTED_RELIST_PERIOD_MS;
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
  let vouchTimer: Timer | undefined;
  /** The stream failed once: a later live is a recovery (LIVE_AGAIN_SETTLE_MS applies). */
  let wentDown = false;
  /** Until then the stream is live again too recently for the long period. */
  let settleUntil = 0;
  let stopped = false;
  let started = false;
  let stream: StreamKeeper | undefined;
  /** Work for the one runner: a full relist, pods to inspect, unknown ids to look for in a relist. */
  let fullWanted = false;
  let podsWanted = new Map<string, Expectation[]>();
  let unknownWanted: Expectation[] = [];
  /** Expectations waiting for their next look. */
  const retrying = new Set<Timer>();
  let running: Promise<void> | undefined;

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

  function reachable(startedAt: number): void {
    lastError = '';
    if (unreachableSince !== undefined) {
      log.info('The container runtime is reachable again', { unreachableForMs: startedAt - unreachableSince });
      unreachableSince = undefined;
    }
  }

  function failed(err: unknown, startedAt: number): void {
    lastError = messageOf(err);
    if (isUnavailable(err) && unreachableSince === undefined) {
      unreachableSince = startedAt;
      log.warn('The container runtime is unreachable; pods wait for it to come back', { err: lastError });
    } else {
      log.v(2, 'PLEG relist failed', { err: lastError });
    }
  }

  /** Tells the cache of each changed pod's objects, and the pod's worker unless the cache explains it. */
  function report(changed: ReadonlySet<string>): void {
    if (changed.size === 0) return;
    const seenAt = now();
    const observed = new Map<string, RelistObject[]>([...changed].map((uid) => [uid, []]));
    for (const o of previous.values()) observed.get(o.labels[POD_UID_LABEL] ?? '')?.push(o);
    for (const [uid, objects] of observed) {
      const stillNeeded = options.cache.observe(uid, objects, seenAt);
      if (stillNeeded !== undefined) options.onPodChanged(uid, stillNeeded);
    }
  }

  async function relistOnce(): Promise<boolean> {
    let sandboxes;
    let containers;
    const startedAt = now();
    try {
      [sandboxes, containers] = await Promise.all([options.runtime.listPodSandbox(), options.runtime.listContainers()]);
    } catch (err) {
      failed(err, startedAt);
      return false;
    }
    reachable(startedAt);
    if (sameAsBefore(sandboxes) + sameAsBefore(containers) === previous.size) {
      // The usual relist: everything as before. Nothing is built (this runs every second).
      lastRelist = now();
      options.cache.relisted(startedAt, previousSeen);
      return true;
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
    report(changed);
    options.cache.relisted(startedAt, seen);
    return true;
  }

  /** Lists one pod's objects and reports it when they differ from what the PLEG held; false when the list failed. */
  async function inspectPod(uid: string, listPod: PlegEvents['listPod']): Promise<boolean> {
    let objects;
    const startedAt = now();
    try {
      objects = await listPod(uid);
    } catch (err) {
      failed(err, startedAt);
      return false;
    }
    reachable(startedAt);
    const mine = objects.filter((o) => o.labels[POD_UID_LABEL] === uid);
    let differs = false;
    let held = 0;
    for (const o of previous.values()) if (o.labels[POD_UID_LABEL] === uid) held++;
    for (const o of mine) {
      const before = previous.get(o.id);
      if (before === undefined || before.state !== o.state || before.labels[POD_UID_LABEL] !== uid) differs = true;
    }
    if (!differs && held === mine.length) return true;
    for (const [id, o] of [...previous]) if (o.labels[POD_UID_LABEL] === uid) previous.delete(id);
    for (const o of mine) previous.set(o.id, o);
    const seen = new Set(previousSeen);
    if (mine.length > 0) seen.add(uid);
    else seen.delete(uid);
    previousSeen = seen;
    report(new Set([uid]));
    return true;
  }

  /** Looks again after a back-off for what an event said, or gives up (the next relist catches it). */
  function later(expectation: Expectation, uid: string | undefined): void {
    const attempt = expectation.attempt + 1;
    if (attempt > EXPECT_TRIES) {
      log.v(2, 'The runtime never showed what an event said; the next relist looks again', { id: expectation.id, want: expectation.want });
      return;
    }
    const retry = clock.setTimer(10 * 2 ** (attempt - 1), () => {
      retrying.delete(retry);
      want({ ...expectation, attempt }, uid);
    });
    retrying.add(retry);
  }

  function want(expectation: Expectation, uid: string | undefined): void {
    if (stopped) return;
    if (uid === undefined) {
      unknownWanted.push(expectation);
      fullWanted = true;
    } else {
      const list = podsWanted.get(uid) ?? [];
      list.push(expectation);
      podsWanted.set(uid, list);
    }
    void run();
  }

  function onEvent(event: TaskEvent): void {
    const known = previous.get(event.containerId);
    const uid = known?.labels[POD_UID_LABEL];
    // The deletion of an object the PLEG never saw changes nothing it holds.
    if (uid === undefined && event.topic === 'delete') return;
    want({ id: event.containerId, want: WANTS[event.topic], attempt: 0 }, uid);
  }

  /** The one runner of relists and inspections, in turn; resolves when nothing is left to do. */
  function run(): Promise<void> {
    running ??= (async () => {
      try {
        while (!stopped && (fullWanted || podsWanted.size > 0)) {
          if (fullWanted) {
            fullWanted = false;
            const expected = unknownWanted;
            unknownWanted = [];
            const ok = await relistOnce();
            // An id the PLEG did not know: found now in the state the event said, or looked for
            // again (in its pod's inspection once known, else in another relist).
            for (const e of expected) {
              const object = ok ? previous.get(e.id) : undefined;
              if (ok && meets(object, e.want)) continue;
              later(e, object?.labels[POD_UID_LABEL]);
            }
            continue;
          }
          const pods = podsWanted;
          podsWanted = new Map();
          for (const [uid, expected] of pods) {
            const ok = events === undefined ? false : await inspectPod(uid, events.listPod);
            for (const e of expected) if (!ok || !meets(previous.get(e.id), e.want)) later(e, uid);
          }
        }
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  /**
   * A relist now, then the next one a period after it ends (300 s while the stream is live, but
   * for LIVE_AGAIN_SETTLE_MS after it came back).
   */
  function tick(): void {
    timer?.cancel();
    timer = undefined;
    fullWanted = true;
    void run().then(() => {
      const long = stream?.live === true && now() >= settleUntil;
      if (!stopped && timer === undefined) timer = clock.setTimer(long ? eventedPeriod : period, tick);
    });
  }

  /** While the stream is live and nothing is pending, the PLEG vouches for the cache as a relist would. */
  function vouch(): void {
    vouchTimer = clock.setTimer(period, vouch);
    if (stream?.live !== true || fullWanted || podsWanted.size > 0 || retrying.size > 0 || running !== undefined) return;
    lastRelist = now();
    // No `seen`: only a relist says which pods the runtime holds nothing of.
    options.cache.relisted(lastRelist - EVENT_GRACE_MS);
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      if (events !== undefined) {
        stream = keepSubscribed({
          source: events.source, clock, logger: log, onEvent,
          // Live: a full relist for what was missed before, then the long period; live again
          // after a failure: relists every period for a while first (LIVE_AGAIN_SETTLE_MS).
          onLive: () => {
            if (wentDown) settleUntil = now() + LIVE_AGAIN_SETTLE_MS;
            tick();
          },
          onDown: () => {
            wentDown = true;
            tick();
          },
        });
        vouchTimer = clock.setTimer(period, vouch);
      }
      tick();
    },
    async relist() {
      fullWanted = true;
      await run();
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
      vouchTimer?.cancel();
      for (const t of retrying) t.cancel();
      retrying.clear();
      stream?.stop();
      await running;
    },
  };
}
