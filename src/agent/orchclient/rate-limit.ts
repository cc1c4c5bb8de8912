/**
 * The REST client's rate limiter (orchAPIQPS/orchAPIBurst), as upstream's client-side limiter:
 * the token bucket of src/api/token-bucket.ts, whose waits delay a request and never reject it
 * (waiters are served in arrival order, one every 1/qps seconds). A waiter whose signal fires
 * gives its token back and rejects with ORCHCLIENT_ABORTED. What a configured 0 means (the
 * spec's defaults) is decided by createRestClient, which reads the configuration.
 */
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { createTokenBucket } from '../../api/token-bucket.js';
import { ORCHCLIENT_ABORTED } from './status.js';

/** Bad options of the REST client (negative QPS, a burst that is not an integer, …). */
export const ORCHCLIENT_OPTIONS_INVALID = 'ORCHCLIENT_OPTIONS_INVALID';

export interface RateLimiter {
  /** Resolves when the caller may send; rejects (ORCHCLIENT_ABORTED) when `signal` fires first. */
  wait(signal?: AbortSignal): Promise<void>;
  /** Takes a token if one is available now, without waiting. */
  tryAccept(): boolean;
}

export interface RateLimiterOptions {
  /** Requests a second; > 0. */
  readonly qps: number;
  /** Requests saved up at most; an integer >= 1. */
  readonly burst: number;
  readonly clock: Clock;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const bucket = createTokenBucket(options);
  return {
    async wait(signal) {
      if (signal?.aborted === true) throw new OrchError(ORCHCLIENT_ABORTED, 'unavailable', 'rate limit: aborted before a token was taken');
      if (!(await bucket.wait(signal))) throw new OrchError(ORCHCLIENT_ABORTED, 'unavailable', 'rate limit: aborted while waiting for a token', { cause: signal?.reason });
    },
    tryAccept: () => bucket.tryTake(),
  };
}
