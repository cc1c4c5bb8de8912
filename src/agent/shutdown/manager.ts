/**
 * The node shutdown manager (upstream: nodeshutdown's managerImpl on Linux). At start it makes
 * sure logind lets shutdown be delayed for the whole period (raising InhibitDelayMaxSec when it
 * is shorter, failing when logind keeps it shorter), takes a delay inhibitor lock and watches
 * PrepareForShutdown. On PrepareForShutdown(true) the node turns NotReady ("node is shutting
 * down"), new pods are refused, and the active pods are killed group by group, lowest priority
 * first, each group within its share of the period (a pod's own shorter grace period wins), each
 * pod Failed with reason Terminated; then the lock is released. On PrepareForShutdown(false)
 * (shutdown cancelled) the lock is taken again. When the bus connection ends, the watch starts
 * again after a second. A node without logind gets one warning; the agent runs on.
 */
import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { podNamespacedName, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { PodFailure } from '../podworkers/index.js';
import type { InhibitLock, Logind } from './logind.js';
import { groupByPriority, periodRequested, type PriorityPeriod } from './periods.js';

export const NODE_SHUTDOWN_REASON = 'Terminated';
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
/** The DisruptionTarget condition's reason (upstream's TerminationByKubelet, renamed). */
export const NODE_SHUTDOWN_DISRUPTION_REASON = 'TerminationByNodeagent';
export const NODE_SHUTDOWN_NOT_ADMITTED_REASON = 'NodeShutdown';
export const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = 'Pod was rejected as the node is shutting down.';
/** What the node's Ready condition says while it shuts down. */
export const NODE_SHUTTING_DOWN = 'node is shutting down';
/** The Node event reason of a shutdown or its cancellation. */
export const NODE_SHUTDOWN_EVENT_REASON = 'NodeShutdown';
/** Upstream's dbusReconnectPeriod. */
export const RECONNECT_MS = 1000;

export interface ShutdownManagerOptions {
  /** The groups, lowest priority first (shutdownPeriods). */
  readonly periods: readonly PriorityPeriod[];
  /** Connects to logind (connectLogind; a fake in tests). */
  readonly connect: () => Promise<Logind>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The pods to end: the admitted pods that are not terminal. */
  readonly activePods: () => readonly NodePod[];
  /** Kills a pod with the grace period and the failure; resolves once its containers are stopped. */
  readonly killPod: (pod: NodePod, gracePeriodSeconds: number, failure: PodFailure) => Promise<void>;
  /** A Node event (NodeShutdown). */
  readonly onNodeEvent?: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** The node's readiness changed: its status should be reported now. */
  readonly onShuttingDown?: () => void;
}

export interface ShutdownManager {
  /** Connects and takes the lock; resolves after the first attempt. Never rejects: a failure is one log line. */
  start(): Promise<void>;
  /** NODE_SHUTTING_DOWN while the node shuts down (the Ready condition's problem), else undefined. */
  problem(): string | undefined;
  /** Refuses pods while the node shuts down (upstream's admit handler). */
  admit(pod: NodePod): { readonly admit: boolean; readonly reason?: string; readonly message?: string };
  /** Releases the lock and closes the bus connection (kills under way go on in the pod workers). */
  stop(): Promise<void>;
}

export function createShutdownManager(options: ShutdownManagerOptions): ShutdownManager {
  const { clock, logger, periods } = options;
  const requested = periodRequested(periods);
  let logind: Logind | undefined;
  let lock: InhibitLock | undefined;
  let shuttingDown = false;
  let stopped = false;
  let processing: Promise<void> | undefined;
  let reconnect: { cancel(): void } | undefined;

  async function takeLock(bus: Logind): Promise<void> {
    lock?.release();
    lock = await bus.inhibitShutdown();
    logger.v(1, 'Shutdown inhibitor lock taken', { periodSeconds: requested });
  }

  /** One watch: the delay checked (raised if need be), the lock, the signal. Throws when any step fails. */
  async function watch(): Promise<void> {
    const bus = await options.connect();
    try {
      let delayMs = await bus.inhibitDelayMaxMs();
      if (requested * 1000 > delayMs) {
        await bus.overrideInhibitDelay(requested);
        delayMs = await bus.inhibitDelayMaxMs();
        if (requested * 1000 > delayMs) {
          throw new Error(`logind's InhibitDelayMaxSec stays ${delayMs / 1000}s after the override, less than the shutdown grace period ${requested}s`);
        }
      }
      await takeLock(bus);
    } catch (err) {
      bus.close();
      throw err;
    }
    logind = bus;
    bus.onPrepareForShutdown((active) => { onSignal(bus, active); });
    bus.onDisconnect((reason) => {
      if (stopped || logind !== bus) return;
      logind = undefined;
      lock = undefined;
      logger.error('Ended watching the node for shutdown events; watching again', { reason, retryInMs: RECONNECT_MS });
      scheduleReconnect();
    });
  }

  function scheduleReconnect(): void {
    reconnect = clock.setTimer(RECONNECT_MS, () => {
      reconnect = undefined;
      if (stopped) return;
      logger.v(1, 'Restarting watch for node shutdown events');
      watch().catch((err: unknown) => {
        logger.error('Unable to watch the node for shutdown events', { err: messageOf(err) });
        scheduleReconnect();
      });
    });
  }

  function onSignal(bus: Logind, active: boolean): void {
    logger.info('Shutdown manager detected a shutdown event', { event: active ? 'shutdown' : 'cancelled' });
    options.onNodeEvent?.('Normal', NODE_SHUTDOWN_EVENT_REASON, active ? 'Shutdown manager detected shutdown event' : 'Shutdown manager detected shutdown cancellation');
    shuttingDown = active;
    options.onShuttingDown?.();
    if (active) {
      processing ??= processShutdown().finally(() => { processing = undefined; });
      return;
    }
    takeLock(bus).catch((err: unknown) => { logger.error('Cannot take the shutdown inhibitor lock again', { err: messageOf(err) }); });
  }

  async function processShutdown(): Promise<void> {
    logger.info('Shutdown manager processing the shutdown event');
    try {
      for (const group of groupByPriority(periods, options.activePods())) {
        if (group.pods.length === 0) continue;
        const kills = group.pods.map(async (pod) => {
          const own = pod.spec?.terminationGracePeriodSeconds;
          const grace = own !== undefined && own <= group.shutdownGracePeriodSeconds ? own : group.shutdownGracePeriodSeconds;
          logger.v(1, 'Shutdown manager killing pod', { pod: podNamespacedName(pod), gracePeriod: grace, priority: group.priority });
          try {
            await options.killPod(pod, grace, { reason: NODE_SHUTDOWN_REASON, message: NODE_SHUTDOWN_MESSAGE, disruptionReason: NODE_SHUTDOWN_DISRUPTION_REASON });
            logger.v(1, 'Shutdown manager finished killing pod', { pod: podNamespacedName(pod) });
          } catch (err) {
            logger.warn('Shutdown manager failed killing pod', { pod: podNamespacedName(pod), err: messageOf(err) });
          }
        });
        const timeUp = new AbortController();
        const timedOut = clock.sleep(group.shutdownGracePeriodSeconds * 1000, timeUp.signal).then(() => !timeUp.signal.aborted);
        const late = await Promise.race([Promise.all(kills).then(() => false), timedOut]);
        timeUp.abort();
        if (late) logger.info('Shutdown manager pod killing time out', { gracePeriod: group.shutdownGracePeriodSeconds, priority: group.priority });
      }
    } finally {
      lock?.release();
      lock = undefined;
      logger.info('Shutdown manager completed processing the shutdown event; the node will shut down shortly');
    }
  }

  return {
    async start() {
      try {
        await watch();
        logger.info('Watching the node for shutdown events (graceful node shutdown)', { periods: periods.map((p) => `${p.priority}:${p.shutdownGracePeriodSeconds}s`) });
      } catch (err) {
        logger.warn(`Graceful node shutdown is configured (${requested}s) but cannot work: ${messageOf(err)}; pods will not be ended before the node shuts down`);
      }
    },
    problem: () => (shuttingDown ? NODE_SHUTTING_DOWN : undefined),
    admit: () => (shuttingDown ? { admit: false, reason: NODE_SHUTDOWN_NOT_ADMITTED_REASON, message: NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE } : { admit: true }),
    stop() {
      stopped = true;
      reconnect?.cancel();
      lock?.release();
      lock = undefined;
      logind?.close();
      logind = undefined;
      return Promise.resolve();
    },
  };
}
