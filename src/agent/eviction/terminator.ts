/**
 * The pod terminator of the eviction manager (upstream's killPodNow behind
 * TerminatePodAbnormallyAndWait): hands the pod worker a kill with the grace period and the
 * failure the pod's status carries from then on (phase Failed, the reason and message, the
 * DisruptionTarget condition for a pressure eviction), and waits until the worker has killed
 * the containers: at most the grace period and half again, and never less than 10 s, as upstream.
 */
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { podNamespacedName, type NodePod } from '../../api/pod/index.js';
import type { PodTerminator } from './types.js';

/** A pod the eviction manager killed was still terminating after the wait. */
export const EVICTION_KILL_TIMEOUT = 'EVICTION_KILL_TIMEOUT';

const MIN_WAIT_MS = 10_000;
const POLL_MS = 100;

/** The failure a kill carries (the pod workers' PodFailure). */
export interface KillFailure {
  readonly reason: string;
  readonly message: string;
  readonly disruptionReason?: string;
}

export interface PodTerminatorDeps {
  /** The pod workers: the kill with its failure, and the worker's state (undefined once it finished). */
  readonly workers: {
    updatePod(update: { readonly type: 'kill'; readonly pod: NodePod; readonly gracePeriodSeconds: number; readonly failure: KillFailure }): void;
    stateOf(uid: string): string | undefined;
  };
  readonly clock: Clock;
  /** Told when the wait ran out (upstream's ExceededGracePeriod event on the pod), before the timeout is thrown. */
  readonly onExceeded?: (pod: NodePod, message: string) => void;
}

/** Upstream's ExceededGracePeriod message. */
export const EXCEEDED_GRACE_PERIOD_MESSAGE = 'Container runtime did not kill the pod within specified grace period.';

export function createPodTerminator(d: PodTerminatorDeps): PodTerminator {
  return {
    async terminate(pod, options) {
      const { uid } = pod.metadata;
      const { gracePeriodSeconds, ...failure } = options;
      d.workers.updatePod({ type: 'kill', pod, gracePeriodSeconds, failure });
      const waitMs = Math.max(MIN_WAIT_MS, Math.floor(gracePeriodSeconds * 1.5) * 1000);
      const deadline = d.clock.now() + waitMs;
      const killed = (): boolean => { const s = d.workers.stateOf(uid); return s !== 'syncing' && s !== 'terminating'; };
      while (!killed()) {
        if (d.clock.now() >= deadline) {
          d.onExceeded?.(pod, EXCEEDED_GRACE_PERIOD_MESSAGE);
          throw new OrchError(EVICTION_KILL_TIMEOUT, 'timeout', `timeout waiting to kill pod ${podNamespacedName(pod)} (${waitMs / 1000}s)`, { subject: podNamespacedName(pod) });
        }
        await d.clock.sleep(POLL_MS);
      }
    },
  };
}
