/**
 * The two limits on image pulls: how many run at once (one when pulls are serialized, as
 * upstream's default; maxParallelImagePulls otherwise) and how many may start per second
 * (registryPullQPS with registryBurst, a token bucket that, as upstream's, refuses rather
 * than waits).
 */

/** Runs tasks with at most `limit` at once (0: no limit), in arrival order: the pull-parallelism bound (maxParallelImagePulls / serializeImagePulls): the runtime manager's semaphore. */
export { Semaphore as PullSlots } from './semaphore.js';

/** A token bucket: `burst` tokens, refilled at `qps` per second; qps 0 never refuses. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly burst: number;

  constructor(
    private readonly qps: number,
    burst: number,
    private readonly now: () => number,
  ) {
    this.burst = Math.max(1, burst);
    this.tokens = this.burst;
    this.last = now();
  }

  /** Takes a token if one is there (upstream: TryAccept). */
  tryAccept(): boolean {
    if (this.qps <= 0) return true;
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
