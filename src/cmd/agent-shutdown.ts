/**
 * Part of nodeagent's composition root: graceful node shutdown (src/agent/shutdown), built when
 * shutdownGracePeriod or shutdownGracePeriodByPodPriority asks for it. Its kills go through the
 * pod workers' kill path; the active pods are the pod manager's (src/agent/syncloop).
 * NODEAGENT_LOGIND_CONF_DIR moves logind's drop-in directory (tests and experiments).
 */
import type { Clock } from '../api/clock.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { killPodNow, type PodWorkers } from '../agent/podworkers/index.js';
import type { PodEvent } from '../agent/prober/index.js';
import { connectLogind, createShutdownManager, shutdownPeriods, type ShutdownManager } from '../agent/shutdown/index.js';
import type { DesiredPods } from '../agent/syncloop/index.js';

export interface NodeShutdownDeps {
  readonly resolved: ResolvedConfiguration;
  readonly logs: LogRoot;
  readonly clock: Clock;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly pods: DesiredPods;
  readonly workers: Pick<PodWorkers, 'updatePod' | 'stateOf'>;
  /** A pod event (API-server mode). */
  readonly podEvent?: ((event: PodEvent) => void) | undefined;
  /** A Node event (API-server mode). */
  readonly nodeEvent?: ((type: 'Normal' | 'Warning', reason: string, message: string) => void) | undefined;
  /** Reports the node status now (API-server mode). */
  readonly nodeStatusChanged?: (() => void) | undefined;
}

/** The shutdown manager, or undefined when graceful node shutdown is not configured. */
export function nodeShutdown(d: NodeShutdownDeps): ShutdownManager | undefined {
  const c = d.resolved.config;
  const periods = shutdownPeriods(c);
  if (periods.length === 0) return undefined;
  const { clock } = d;
  return createShutdownManager({
    periods,
    clock,
    logger: d.logs.logger('nodeshutdown'),
    connect: () => connectLogind({ clock, address: d.env.DBUS_SYSTEM_BUS_ADDRESS, confDir: d.env.NODEAGENT_LOGIND_CONF_DIR }),
    activePods: () => d.pods.activePods(),
    killPod: async (pod, gracePeriodSeconds, failure) => {
      const log = d.logs.logger('nodeshutdown');
      await killPodNow({
        workers: d.workers, clock,
        onExceeded: (p, message) => {
          log.info('Event', { type: 'Warning', reason: 'ExceededGracePeriod', pod: `${p.metadata.namespace}/${p.metadata.name}`, message });
          d.podEvent?.({ type: 'Warning', reason: 'ExceededGracePeriod', message, pod: p });
        },
      }, pod, gracePeriodSeconds, failure);
    },
    ...(d.nodeEvent === undefined ? {} : { onNodeEvent: d.nodeEvent }),
    ...(d.nodeStatusChanged === undefined ? {} : { onShuttingDown: d.nodeStatusChanged }),
  });
}
