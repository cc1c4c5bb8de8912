/**
 * A token bucket: `qps` tokens a second, at most `burst` saved up; it starts full. It paces the
 * API requests (orchAPIQPS/orchAPIBurst), event writes (eventRecordQPS/eventBurst) and image
 * pulls (registryPullQPS/registryBurst). Its parameters have one meaning: qps > 0, burst an
 * integer >= 1. What a configuration's 0 means (the default, or no limit) is decided by the
 * caller where it reads the configuration; `NO_LIMIT` stands in for a bucket that never refuses.
 *
 * Time comes from the injected Clock. A clock that goes back neither adds nor removes tokens.
 */
import type { Clock } from './clock.js';
import { OrchError } from './errors.js';

/** createTokenBucket's qps or burst is out of range. */
export const API_TOKEN_BUCKET_INVALID = 'API_TOKEN_BUCKET_INVALID';

export interface TokenBucket {
  /** Takes a token when one is available now; never waits. */
  tryTake(): boolean;
  /** Milliseconds until tryTake would succeed (0: now). */
  delayMs(): number;
  /**
   * Takes a token and resolves true when it is due. Each waiter reserves its token at once (the
   * bucket may go below zero), so waiters are served in arrival order, one every 1/qps seconds.
   * When `signal` fires first the token goes back and it resolves false. Never rejects. A wait
   * keeps the process alive (the work that waits for its turn is under way).
   */
  wait(signal?: AbortSignal): Promise<boolean>;
}

export interface TokenBucketOptions {
  /** Tokens a second: > 0. */
  readonly qps: number;
  /** Tokens saved up at most, and at the start: an integer >= 1. */
  readonly burst: number;
  readonly clock: Clock;
}

/** A bucket that never refuses nor waits (a configured qps of 0 where 0 means no limit). */
export const NO_LIMIT: TokenBucket = Object.freeze({
  tryTake: () => true,
  delayMs: () => 0,
  wait: () => Promise.resolve(true),
});

/** Throws API_TOKEN_BUCKET_INVALID (category invalid) for a qps not > 0 or a burst not an integer >= 1. */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const { qps, burst, clock } = options;
  if (!(qps > 0) || !Number.isFinite(qps)) {
    throw new OrchError(API_TOKEN_BUCKET_INVALID, 'invalid', `token bucket: qps ${qps} must be a positive number`, { subject: 'qps' });
  }
  if (!Number.isInteger(burst) || burst < 1) {
    throw new OrchError(API_TOKEN_BUCKET_INVALID, 'invalid', `token bucket: burst ${burst} must be an integer of at least 1`, { subject: 'burst' });
  }
  let tokens = burst;
  let last = clock.now();

  /** Adds the tokens of the time passed since the last look. */
  function refill(): void {
    const t = clock.now();
    if (t > last) {
      tokens = Math.min(burst, tokens + ((t - last) / 1000) * qps);
      last = t;
    }
  }

  return {
    tryTake() {
      refill();
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    delayMs() {
      refill();
      return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / qps);
    },
    wait(signal) {
      if (signal?.aborted === true) return Promise.resolve(false);
      refill();
      tokens -= 1;
      if (tokens >= 0) return Promise.resolve(true);
      const waitMs = (-tokens / qps) * 1000;
      return new Promise<boolean>((resolve) => {
        const onAbort = (): void => {
          timer.cancel();
          refill();
          tokens = Math.min(burst, tokens + 1);
          resolve(false);
        };
        const timer = clock.setTimer(waitMs, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        }, { keepAlive: true });
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
