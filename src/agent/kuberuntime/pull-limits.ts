/**
 * The two limits on image pulls: how many run at once (one when pulls are serialized, as
 * upstream's default; maxParallelImagePulls otherwise) and how many may start per second
 * (registryPullQPS with registryBurst, a token bucket that, as upstream's, refuses rather
 * than waits).
 */

/** Runs tasks with at most `limit` at once (0: no limit), in arrival order. */
export class PullSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.limit > 0 && this.running >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next === undefined) this.running--;
      else next(); // the slot passes to the next task
    }
  }

  /** Tasks running and waiting (for tests). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

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
