/**
 * The pod workers: one serialized worker per pod UID, driving that pod through
 *
 *   | state       | entered when                              | work done                       |
 *   |-------------|-------------------------------------------|---------------------------------|
 *   | syncing     | the first create/update/sync of the pod   | syncer.syncPod, repeatedly      |
 *   | terminating | a kill update, or the pod became terminal | syncer.syncTerminatingPod, once |
 *   | terminated  | terminating work succeeded                | syncer.syncTerminatedPod, once  |
 *   | finished    | terminated work succeeded                 | none: the worker is forgotten   |
 *
 * Latest update wins: while a sync runs, further updates of the same pod are coalesced into
 * one pending update holding the newest pod object; a sync that says it may be dropped
 * (`stillNeeded`) is asked again just before it would run. A kill always wins over a sync, and a pod
 * never goes back from terminating to syncing (a new pod object needs a new UID). Failed work
 * is retried after a back-off; successful syncs are repeated every `resyncIntervalMs`, or
 * sooner when the syncer asks.
 *
 * Owns: ordering and retrying per-pod work. Must not: talk to the runtime or compute status
 * itself (the PodSyncer does), or run two pieces of work for one pod at once.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { isUnavailable, messageOf } from '../../api/errors.js';
import { podNamespacedName, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';

export type PodWorkerState = 'syncing' | 'terminating' | 'terminated';

export interface SyncOutcome {
  /** The pod reached a terminal phase (Succeeded/Failed): stop its sandbox and finish. */
  readonly terminal?: boolean;
  /** Sync again after this long (ms) instead of the resync interval (e.g. a back-off expiry). */
  readonly requeueAfterMs?: number;
}

/** What the workers call; each call may block and may throw (the worker retries). */
export interface PodSyncer {
  /** `signal` is aborted when a kill of the pod arrives while the sync runs: it stops starting containers. */
  syncPod(pod: NodePod, kind: 'create' | 'update' | 'sync', signal?: AbortSignal): Promise<SyncOutcome>;
  /**
   * Kills the pod's containers with the grace period (seconds; undefined: the pod's own). With
   * `failure`, the agent decided the pod fails (upstream's PodStatusFunc): its status says so
   * from before the kill on.
   */
  syncTerminatingPod(pod: NodePod, gracePeriodSeconds: number | undefined, failure?: PodFailure): Promise<void>;
  /** Releases what the pod held on the node: containers, sandboxes, volumes, cgroups. */
  syncTerminatedPod(pod: NodePod): Promise<void>;
}

/** A failure the agent decided for a pod it kills (phase Failed with this reason and message). */
export interface PodFailure {
  readonly reason: string;
  readonly message: string;
  /** The DisruptionTarget condition's reason, when the kill is a disruption (node shutdown). */
  readonly disruptionReason?: string;
}

export interface PodUpdate {
  readonly type: 'create' | 'update' | 'sync' | 'kill';
  readonly pod: NodePod;
  /** For kill: the grace period in seconds (default: the pod's terminationGracePeriodSeconds). */
  readonly gracePeriodSeconds?: number;
  /** For kill: the failure the agent decided (kept from the first kill that gave one). */
  readonly failure?: PodFailure;
  /**
   * For kill: called once the pod's containers are stopped (its terminating work done), or at
   * once when they already were (upstream's CompletedCh).
   */
  readonly onKilled?: () => void;
  /**
   * For sync: asked when the update is about to run; false drops it (what asked for it was
   * settled meanwhile, e.g. by the sync that was running). Kept only while every update it
   * replaces was droppable too.
   */
  readonly stillNeeded?: () => boolean;
}

export interface PodWorkers {
  /** Queues work for the pod; returns at once. Ignored after the pod finished. */
  updatePod(update: PodUpdate): void;
  /** The worker's state, or undefined when the pod has no worker (never seen, or finished). */
  stateOf(uid: string): PodWorkerState | undefined;
  /** UIDs of every pod with a worker. */
  knownPods(): string[];
  /** Calls `listener` with the UID of each pod whose worker finished (terminated work done). Returns the unsubscribe function. */
  onFinished(listener: (uid: string) => void): () => void;
  /** Waits for every running piece of work to end and stops all timers. */
  stop(): Promise<void>;
}

export interface PodWorkersOptions {
  readonly syncer: PodSyncer;
  readonly logger: Logger;
  /** The resync and back-off timers. */
  readonly clock: Clock;
  /** Periodic resync of a healthy pod (syncFrequency), ms. */
  readonly resyncIntervalMs: number;
  /** First retry delay after failed work, ms (doubles up to maxBackoffMs). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

interface Worker {
  state: PodWorkerState;
  pod: NodePod;
  pending: PodUpdate | undefined;
  running: Promise<void> | undefined;
  timer: Timer | undefined;
  failures: number;
  gracePeriodSeconds: number | undefined;
  failure: PodFailure | undefined;
  /** onKilled callbacks of kill updates, called when the terminating work is done. */
  killed: (() => void)[];
  /** Aborts the running sync (a kill arrived): a pod with hundreds of containers stops starting them at once. */
  abort: AbortController | undefined;
}

export function createPodWorkers(options: PodWorkersOptions): PodWorkers {
  const workers = new Map<string, Worker>();
  const backoffMs = options.backoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 60_000;
  const log = options.logger;
  const finishedListeners = new Set<(uid: string) => void>();
  let stopped = false;

  function schedule(w: Worker, delayMs: number): void {
    w.timer?.cancel();
    w.timer = options.clock.setTimer(delayMs, () => {
      w.timer = undefined;
      enqueue({ type: 'sync', pod: w.pod });
    });
  }

  function enqueue(update: PodUpdate): void {
    if (stopped) return;
    const { uid } = update.pod.metadata;
    let w = workers.get(uid);
    if (w === undefined) {
      if (update.type === 'sync') return; // a timer of a finished worker
      w = { state: 'syncing', pod: update.pod, pending: undefined, running: undefined, timer: undefined, failures: 0, gracePeriodSeconds: undefined, failure: undefined, killed: [], abort: undefined };
      workers.set(uid, w);
    }
    if (update.type === 'kill') {
      w.abort?.abort();
      w.failure ??= update.failure;
      if (update.onKilled !== undefined) {
        if (w.state === 'terminated') update.onKilled();
        else w.killed.push(update.onKilled);
      }
    }
    if (update.type !== 'sync') w.pod = update.pod;
    // Latest wins, but a kill is never replaced by a sync or update, and a droppable sync does
    // not make droppable what it replaces.
    if (w.pending?.type === 'kill' && update.type !== 'kill') {
      w.pending = { ...w.pending, pod: update.pod };
    } else if (update.stillNeeded !== undefined && w.pending !== undefined && w.pending.stillNeeded === undefined) {
      const { stillNeeded: _dropped, ...kept } = update;
      w.pending = kept;
    } else {
      w.pending = update;
    }
    if (w.running === undefined) start(uid, w);
  }

  function start(uid: string, w: Worker): void {
    const update = w.pending;
    if (update === undefined) return;
    w.pending = undefined;
    if (update.type === 'sync' && w.state === 'syncing' && update.stillNeeded?.() === false) return;
    w.running = work(uid, w, update).finally(() => {
      w.running = undefined;
      if (w.pending !== undefined && !stopped) start(uid, w);
    });
  }

  async function work(uid: string, w: Worker, update: PodUpdate): Promise<void> {
    if (update.type === 'kill' && w.state === 'syncing') {
      w.state = 'terminating';
      w.gracePeriodSeconds = update.gracePeriodSeconds;
    }
    try {
      if (w.state === 'syncing') {
        const kind = update.type === 'kill' ? 'sync' : update.type;
        const abort = new AbortController();
        w.abort = abort;
        let outcome: SyncOutcome;
        try {
          outcome = await options.syncer.syncPod(w.pod, kind, abort.signal);
        } finally {
          w.abort = undefined;
        }
        w.failures = 0;
        if (outcome.terminal === true) {
          w.state = 'terminating';
          w.pending ??= { type: 'sync', pod: w.pod };
          return;
        }
        schedule(w, outcome.requeueAfterMs ?? options.resyncIntervalMs);
        return;
      }
      if (w.state === 'terminating') {
        await options.syncer.syncTerminatingPod(w.pod, w.gracePeriodSeconds, w.failure);
        w.state = 'terminated';
        w.failures = 0;
        for (const done of w.killed.splice(0)) done();
        w.pending ??= { type: 'sync', pod: w.pod };
        return;
      }
      await options.syncer.syncTerminatedPod(w.pod);
      w.timer?.cancel();
      workers.delete(uid);
      for (const listener of finishedListeners) listener(uid);
    } catch (err) {
      w.failures++;
      const delay = Math.min(maxBackoffMs, backoffMs * 2 ** (w.failures - 1));
      const fields = { pod: podNamespacedName(w.pod), state: w.state, retryInMs: delay, err: messageOf(err) };
      // An unreachable runtime fails every pod at once: the PLEG says so once, each pod only at v4.
      if (isUnavailable(err)) log.v(4, 'Pod work failed: the container runtime is unreachable; retrying', fields);
      else log.warn('Pod work failed; retrying', fields);
      schedule(w, delay);
    }
  }

  return {
    updatePod: enqueue,
    stateOf: (uid) => workers.get(uid)?.state,
    knownPods: () => [...workers.keys()],
    onFinished(listener) {
      finishedListeners.add(listener);
      return () => finishedListeners.delete(listener);
    },
    async stop() {
      stopped = true;
      const running: Promise<void>[] = [];
      for (const w of workers.values()) {
        w.timer?.cancel();
        if (w.running !== undefined) running.push(w.running);
      }
      await Promise.allSettled(running);
    },
  };
}

export { EXCEEDED_GRACE_PERIOD_MESSAGE, killPodNow, killWaitMs, type KillPodNowOptions } from './kill-now.js';
