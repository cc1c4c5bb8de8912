/**
 * The two limits on image pulls: how many run at once (one when pulls are serialized, as
 * upstream's default; maxParallelImagePulls otherwise) and how many may start per second
 * (registryPullQPS with registryBurst, a token bucket that, as upstream's, refuses rather
 * than waits: 0 is no limit).
 */
import type { Clock } from '../../api/clock.js';
import { createTokenBucket, NO_LIMIT, type TokenBucket } from '../../api/token-bucket.js';

/** Runs tasks with at most `limit` at once (0: no limit), in arrival order: the pull-parallelism bound (maxParallelImagePulls / serializeImagePulls): the runtime manager's semaphore. */
export { Semaphore as PullSlots } from './semaphore.js';

/** registryPullQPS/registryBurst as a bucket: a qps of 0 is no limit, a burst below 1 is 1. */
export function pullBudget(qps: number, burst: number, clock: Clock): TokenBucket {
  return qps > 0 ? createTokenBucket({ qps, burst: Math.max(1, Math.floor(burst)), clock }) : NO_LIMIT;
}
