/**
 * Killing a pod and waiting for it (upstream's killPodNow, the kill of node shutdown and
 * eviction): the kill goes through the pod's worker; a kill not done within its grace period and
 * half again (at least 10 s) is given up on with upstream's ExceededGracePeriod event, and the
 * caller goes on (the worker keeps at it).
 */
import type { Clock } from '../../api/clock.js';
import type { NodePod } from '../../api/pod/index.js';
import type { PodFailure, PodWorkers } from './index.js';

export const EXCEEDED_GRACE_PERIOD_MESSAGE = 'Container runtime did not kill the pod within specified grace period.';

/** The pod's default grace period when it names none (upstream's DefaultTerminationGracePeriodSeconds). */
const DEFAULT_GRACE_SECONDS = 30;
const MIN_WAIT_SECONDS = 10;

export interface KillPodNowOptions {
  readonly workers: Pick<PodWorkers, 'updatePod'>;
  readonly clock: Pick<Clock, 'setTimer'>;
  /** Told of the ExceededGracePeriod event (a Warning on the pod). */
  readonly onExceeded: (pod: NodePod, message: string) => void;
}

/** How long the kill is waited for: the grace period and half again, at least 10 s (upstream's). */
export function killWaitMs(pod: NodePod, gracePeriodSeconds: number | undefined): number {
  const grace = gracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  return Math.max(MIN_WAIT_SECONDS, grace + Math.floor(grace / 2)) * 1000;
}

/** Resolves true once the pod's containers are stopped, false when the wait ran out first (the event was recorded). */
export function killPodNow(o: KillPodNowOptions, pod: NodePod, gracePeriodSeconds: number | undefined, failure?: PodFailure): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const timer = o.clock.setTimer(killWaitMs(pod, gracePeriodSeconds), () => {
      if (settled) return;
      settled = true;
      o.onExceeded(pod, EXCEEDED_GRACE_PERIOD_MESSAGE);
      resolve(false);
    });
    o.workers.updatePod({
      type: 'kill', pod, ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }), ...(failure === undefined ? {} : { failure }),
      onKilled: () => {
        if (settled) return;
        settled = true;
        timer.cancel();
        resolve(true);
      },
    });
  });
}
