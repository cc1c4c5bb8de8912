/**
 * activeDeadlineSeconds (upstream: the active deadline handler): a pod that has been active on
 * the node (since status.startTime) for its activeDeadlineSeconds or longer fails with reason
 * DeadlineExceeded, and its containers are killed. Pure.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';

export const DEADLINE_EXCEEDED_REASON = 'DeadlineExceeded';
export const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/**
 * Milliseconds left before the pod's deadline (0 or less: exceeded), or undefined when it has
 * no deadline or no start time yet.
 */
export function activeDeadlineLeftMs(pod: Pod, startTime: string | undefined, now: Date): number | undefined {
  const seconds = pod.spec?.activeDeadlineSeconds;
  if (seconds === undefined || startTime === undefined) return undefined;
  const start = Date.parse(startTime);
  if (Number.isNaN(start)) return undefined;
  return start + seconds * 1000 - now.getTime();
}
