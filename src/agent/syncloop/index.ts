/**
 * The sync loop: turns pod config updates and PLEG events into work for the pod workers,
 * admits new pods (max pods), and keeps the node clean (housekeeping: orphaned containers,
 * sandboxes, pod directories and cgroups of pods no source wants any more).
 *
 * Owns: the set of desired pods, admission decisions, and orphan cleanup. Orphans are removed
 * only once every pod source delivered its first snapshot, so an agent restart adopts what
 * runs instead of killing it. Must not: sync pods itself (the workers do) or touch runtime
 * objects without the agent's labels (the runtime manager filters them).
 */
import type { Clock, Timer } from '../../api/clock.js';
import { isUnavailable, messageOf } from '../../api/errors.js';
import { podNamespacedName, type NodePod } from '../../api/pod/index.js';
import type { PodRuntimeManager } from '../kuberuntime/index.js';
import type { Logger } from '../logging/index.js';
import type { PodWorkers } from '../podworkers/index.js';
import { rejectedPodStatus, type StatusManager } from '../status/index.js';
import type { PodManager } from './pod-manager.js';

export { createPodManager, type DesiredPods, type PodManager, type PodManagerOptions, type PodRegistrar } from './pod-manager.js';

export interface PodConfigUpdate {
  readonly op: 'ADD' | 'UPDATE' | 'REMOVE' | 'RECONCILE';
  readonly pods: readonly NodePod[];
}

export interface SyncLoopOptions {
  readonly podConfig: {
    subscribe(listener: (u: PodConfigUpdate) => void): () => void;
    sourcesReady(): boolean;
  };
  readonly workers: PodWorkers;
  /** The desired pods: the loop writes them as updates arrive. */
  readonly pods: PodManager;
  readonly runtime: Pick<PodRuntimeManager, 'listPods' | 'killPod' | 'removePod'>;
  readonly volumes: { listPodDirs(): Promise<string[]>; cleanupPodVolumes(uid: string): Promise<void> };
  readonly cgroups: { listPodUIDs(): Promise<string[]>; remove(uid: string): Promise<void> };
  readonly status: StatusManager;
  /** The pod capacity: maxPods, capped by podsPerCore × cores when podsPerCore > 0. */
  readonly podCapacity: number;
  readonly logger: Logger;
  /** The housekeeping timer, and the times the loop keeps and writes. */
  readonly clock: Clock;
  readonly housekeepingPeriodMs?: number;
  /** A loop whose housekeeping has not completed for this long is unhealthy (default 3 minutes, as upstream's sync loop check). */
  readonly stallAfterMs?: number;
  /**
   * Housekeeping lists the runtime, the pod directories and the cgroups at every period only
   * while something may need cleaning up (a pod removed or finished, the PLEG reporting a pod
   * nobody wants, something left over by the previous pass); otherwise at most this often
   * (default 30 s), to catch what appears behind the agent's back.
   */
  readonly fullHousekeepingPeriodMs?: number;
  /**
   * Admission checks run in order after the pod-capacity check, each with the pods already
   * admitted (upstream's admit handlers: sysctls, resources, host ports, node selector,
   * taints). The first refusal fails the pod with its reason. A check may answer later (a
   * device plugin's Allocate): the pod updates behind it wait, so that pods are admitted one
   * at a time and in order, as upstream's sync loop admits them.
   */
  readonly admit?: readonly AdmitHandler[];
  /** A pod was refused at admission (after it was logged): the agent records a Warning event. */
  readonly onReject?: (pod: NodePod, reason: string, message: string) => void;
}

export interface AdmitResult {
  readonly admit: boolean;
  readonly reason?: string;
  readonly message?: string;
}

export type AdmitHandler = (pod: NodePod, admitted: readonly NodePod[]) => AdmitResult | Promise<AdmitResult>;

/** Runs the handlers in order until one refuses; synchronous while they all are. */
function runAdmitHandlers(handlers: readonly AdmitHandler[], pod: NodePod, admitted: readonly NodePod[], from = 0): AdmitResult | Promise<AdmitResult> {
  for (let i = from; i < handlers.length; i++) {
    const handler = handlers[i];
    if (handler === undefined) continue;
    const result = handler(pod, admitted);
    if (result instanceof Promise) {
      return result.then((r) => (r.admit ? runAdmitHandlers(handlers, pod, admitted, i + 1) : r));
    }
    if (!result.admit) return result;
  }
  return { admit: true };
}

export interface SyncLoop {
  start(): void;
  stop(): Promise<void>;
  /**
   * Tells the loop that the runtime changed for a pod (the PLEG calls it). `stillNeeded`, when
   * given, is asked just before the sync would run; false drops it (see PodUpdate).
   */
  podChanged(uid: string, stillNeeded?: () => boolean): void;
  /**
   * Calls `listener` with each desired pod that has nothing left running on the node: its
   * worker finished it, or it never had one (refused at admission, or terminal before it ran)
   * and the API server is deleting it. Returns the unsubscribe function.
   */
  onPodFinished(listener: (pod: NodePod) => void): () => void;
  /**
   * The active pods (the pod manager's definition: desired, neither rejected nor finished) and
   * the pods waiting to be admitted: what the resource managers keep allocations for.
   */
  activePods(): NodePod[];
  /** When housekeeping last completed (ms since the epoch; 0: never). */
  lastHousekeeping(): number;
  /**
   * Undefined while the loop keeps up; the reason once housekeeping has not completed for
   * `stallAfterMs` (since the loop started, when it never did).
   */
  health(): string | undefined;
  /** Runs one housekeeping pass now (tests use it); orphans are killed in the background. */
  housekeeping(): Promise<void>;
  /** Waits for the orphan cleanups under way (tests use it). */
  orphansCleaned(): Promise<void>;
}

function graceOf(pod: NodePod): { gracePeriodSeconds?: number } {
  const g = pod.metadata.deletionGracePeriodSeconds;
  return g === undefined ? {} : { gracePeriodSeconds: g };
}

export function podCapacity(maxPods: number, podsPerCore: number, cores: number): number {
  return podsPerCore > 0 ? Math.min(maxPods, podsPerCore * cores) : maxPods;
}

export function createSyncLoop(options: SyncLoopOptions): SyncLoop {
  const { workers, logger: log, status, pods: desired, clock } = options;
  const finishedListeners = new Set<(pod: NodePod) => void>();
  let unsubscribe: (() => void) | undefined;
  let timer: Timer | undefined;
  let running: Promise<void> | undefined;
  let last = 0;
  let startedAt = 0;
  /** When the last full housekeeping pass started (ms; 0: never), and whether one is due. */
  let lastFull = 0;
  let dirty = true;
  /** Orphans being killed and removed (in the background: a grace period may be long). */
  const cleaning = new Map<string, Promise<void>>();
  /** Pod updates not applied yet: they wait behind an admission that waits for its answer. */
  const pending: { readonly op: PodConfigUpdate['op']; readonly pod: NodePod }[] = [];
  /** The admission being waited for, and its pod (the PLEG does not sync it before it is admitted). */
  let admitting: { readonly uid: string; readonly done: Promise<void> } | undefined;

  function announceFinished(pod: NodePod): void {
    for (const listener of finishedListeners) listener(pod);
  }

  /** The pod's worker finished it. */
  function podFinished(uid: string): void {
    dirty = true;
    const pod = desired.pod(uid);
    if (pod === undefined) {
      status.removePod(uid);
      return;
    }
    desired.markFinished(uid);
    announceFinished(pod);
  }

  function reject(pod: NodePod, reason: string, message: string): void {
    const { uid } = pod.metadata;
    desired.markRejected(uid);
    log.warn('Pod rejected at admission', { pod: podNamespacedName(pod), reason, message });
    status.setPodStatus(uid, rejectedPodStatus(pod, reason, message, clock.now()));
    options.onReject?.(pod, reason, message);
  }

  function add(pod: NodePod): void {
    const { uid } = pod.metadata;
    if (desired.isDesired(uid)) {
      update(pod);
      return;
    }
    const used = desired.activeCount();
    desired.set(uid, pod);
    const apiPhase = pod.status?.phase;
    if ((apiPhase === 'Succeeded' || apiPhase === 'Failed') && workers.stateOf(uid) === undefined) {
      // Terminal in the API server already (e.g. before an agent restart): never run again.
      desired.markFinished(uid);
      status.setPodStatus(uid, pod.status ?? {});
      if (pod.metadata.deletionTimestamp !== undefined) announceFinished(pod);
      return;
    }
    if (pod.metadata.deletionTimestamp !== undefined) {
      // Deleted before it ran: nothing to start; the worker only cleans up and finishes.
      workers.updatePod({ type: 'kill', pod, ...graceOf(pod) });
      return;
    }
    if (used >= options.podCapacity) {
      reject(pod, 'OutOfpods', `Node didn't have enough resource: pods, requested: 1, used: ${used}, capacity: ${options.podCapacity}`);
      return;
    }
    if (options.admit !== undefined && options.admit.length > 0) {
      const admitted = desired.activePods().filter((p) => p.metadata.uid !== uid);
      const result = runAdmitHandlers(options.admit, pod, admitted);
      if (result instanceof Promise) {
        const done = result.then((r) => { finishAdmission(pod, r); }, (err: unknown) => {
          finishAdmission(pod, { admit: false, reason: 'UnexpectedAdmissionError', message: `Allocate failed due to ${messageOf(err)}, which is unexpected` });
        }).finally(() => {
          admitting = undefined;
          drain();
        });
        admitting = { uid, done };
        return;
      }
      finishAdmission(pod, result);
      return;
    }
    workers.updatePod({ type: 'create', pod });
  }

  /** The end of a pod's admission: refused, or handed to its worker. */
  function finishAdmission(pod: NodePod, result: AdmitResult): void {
    if (!result.admit) {
      reject(pod, result.reason ?? 'UnexpectedAdmissionError', result.message ?? 'the pod was rejected at admission');
      return;
    }
    workers.updatePod({ type: 'create', pod });
  }

  function update(pod: NodePod): void {
    const { uid } = pod.metadata;
    desired.set(uid, pod);
    if (desired.isRejected(uid) || desired.isFinished(uid)) {
      if (pod.metadata.deletionTimestamp !== undefined && workers.stateOf(uid) === undefined) announceFinished(pod);
      return;
    }
    if (pod.metadata.deletionTimestamp !== undefined) {
      // Graceful deletion through the API server: stop the containers with the deletion's grace period.
      workers.updatePod({ type: 'kill', pod, ...graceOf(pod) });
      return;
    }
    workers.updatePod({ type: 'update', pod });
  }

  function remove(pod: NodePod): void {
    const { uid } = pod.metadata;
    dirty = true;
    const known = desired.pod(uid) ?? pod;
    const wasRejected = desired.isRejected(uid);
    desired.remove(uid);
    if (wasRejected) {
      status.removePod(uid);
      return;
    }
    // A finished pod has no worker; housekeeping removes its stopped containers.
    if (workers.stateOf(uid) !== undefined) workers.updatePod({ type: 'kill', pod: known });
  }

  /** Applies the pending updates in order, until one's admission has to wait. */
  function drain(): void {
    while (admitting === undefined) {
      const next = pending.shift();
      if (next === undefined) return;
      if (next.op === 'ADD') add(next.pod);
      else if (next.op === 'UPDATE') update(next.pod);
      else if (next.op === 'REMOVE') remove(next.pod);
    }
  }

  function onUpdate(u: PodConfigUpdate): void {
    // As upstream's syncLoopIteration: one line per update at V(2) (RECONCILE, status-only, at V(4)),
    // so that a pod's arrival is visible with -v=2 and costs nothing at the default verbosity.
    const level = u.op === 'RECONCILE' ? 4 : 2;
    if (u.pods.length > 0 && log.enabled(level)) log.v(level, `SyncLoop ${u.op}`, { pods: u.pods.map(podNamespacedName) });
    for (const pod of u.pods) pending.push({ op: u.op, pod });
    drain();
  }

  async function housekeeping(): Promise<void> {
    if (!options.podConfig.sourcesReady()) return;
    const keep = (uid: string): boolean => desired.isDesired(uid) || workers.stateOf(uid) !== undefined || cleaning.has(uid);
    lastFull = clock.now();
    // Whatever is listed and not desired (cleaned now, being cleaned, or still terminating)
    // makes the next pass a full one too.
    let leftover = false;
    dirty = false;
    try {
      for (const running of await options.runtime.listPods()) {
        if (!desired.isDesired(running.uid)) leftover = true;
        if (keep(running.uid)) continue;
        log.info('Cleaning up orphaned pod', { pod: `${running.namespace}/${running.name}`, uid: running.uid });
        const work = (async () => {
          await options.runtime.killPod(running);
          await options.runtime.removePod(running.uid);
        })()
          .catch((err: unknown) => {
            // An unreachable runtime is the PLEG's to report, once.
            if (isUnavailable(err)) log.v(4, 'Cleaning up an orphaned pod failed: the runtime is unreachable', { uid: running.uid, err: messageOf(err) });
            else log.warn('Cleaning up an orphaned pod failed; retrying at the next housekeeping', { uid: running.uid, err: messageOf(err) });
          })
          .finally(() => cleaning.delete(running.uid));
        cleaning.set(running.uid, work);
      }
      for (const uid of await options.volumes.listPodDirs()) {
        if (!desired.isDesired(uid)) leftover = true;
        if (keep(uid)) continue;
        try {
          await options.volumes.cleanupPodVolumes(uid);
        } catch (err) {
          // One pod's volumes (a CSI driver not registered yet, a busy mount) must not hold back the others' cleanup.
          log.warn('Cleaning up the volumes of an orphaned pod failed; retrying at the next housekeeping', { uid, err: messageOf(err) });
        }
      }
      for (const uid of await options.cgroups.listPodUIDs()) {
        if (!desired.isDesired(uid)) leftover = true;
        if (!keep(uid)) await options.cgroups.remove(uid);
      }
      last = clock.now();
      if (leftover) dirty = true;
    } catch (err) {
      dirty = true;
      // An unreachable runtime is the PLEG's to report, once; housekeeping runs every 2 s.
      if (isUnavailable(err)) log.v(4, 'Housekeeping failed: the runtime is unreachable', { err: messageOf(err) });
      else log.warn('Housekeeping failed; retrying at the next period', { err: messageOf(err) });
    }
  }

  /** A periodic pass: the full one when due, else only the liveness mark (nothing to list). */
  async function periodic(): Promise<void> {
    const t = clock.now();
    if (dirty || t - lastFull >= (options.fullHousekeepingPeriodMs ?? 30_000)) await housekeeping();
    else if (options.podConfig.sourcesReady()) last = t;
  }

  function tick(): void {
    running = periodic().finally(() => {
      running = undefined;
      if (timer !== undefined || unsubscribe !== undefined) {
        timer = clock.setTimer(options.housekeepingPeriodMs ?? 2000, tick);
      }
    });
  }

  return {
    start() {
      if (unsubscribe !== undefined) return;
      startedAt = clock.now();
      const fromConfig = options.podConfig.subscribe(onUpdate);
      const fromWorkers = workers.onFinished(podFinished);
      unsubscribe = () => {
        fromConfig();
        fromWorkers();
      };
      tick();
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      timer?.cancel();
      timer = undefined;
      await running;
      pending.length = 0;
      await admitting?.done;
    },
    podChanged(uid, stillNeeded) {
      const pod = desired.pod(uid);
      if (pod === undefined) dirty = true; // the runtime holds something of a pod nobody wants
      if (pod === undefined || desired.isRejected(uid) || desired.isFinished(uid) || pod.metadata.deletionTimestamp !== undefined || admitting?.uid === uid) return;
      workers.updatePod({ type: 'sync', pod, ...(stillNeeded === undefined ? {} : { stillNeeded }) });
    },
    onPodFinished(listener) {
      finishedListeners.add(listener);
      return () => finishedListeners.delete(listener);
    },
    activePods() {
      const active = desired.activePods();
      // Pods waiting behind an admission count too: the resource managers must not free what they hold (an agent restart re-admits them one by one).
      const waiting = pending.filter((u) => u.op === 'ADD' && !desired.isDesired(u.pod.metadata.uid)).map((u) => u.pod);
      return waiting.length === 0 ? active : [...active, ...waiting];
    },
    lastHousekeeping: () => last,
    health() {
      const reference = last === 0 ? startedAt : last;
      const age = clock.now() - reference;
      return age > (options.stallAfterMs ?? 3 * 60_000) ? `sync loop stalled: last housekeeping ${Math.round(age / 1000)}s ago` : undefined;
    },
    housekeeping,
    async orphansCleaned() {
      await Promise.all(cleaning.values());
    },
  };
}
