/**
 * A token bucket as upstream's client rate limiter: `qps` tokens a second, at most `burst`
 * saved up (the bucket starts full). `wait()` takes a token and resolves when it is due: a
 * request is delayed, never rejected. Each waiter reserves its token at once (the bucket may go
 * below zero), so waiters are served in arrival order, one every 1/qps seconds. A waiter whose
 * signal fires gives its token back and rejects with ORCHCLIENT_ABORTED. Clock and sleep are
 * injected (tests drive them by hand).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { OrchError } from '../../api/errors.js';
import { ORCHCLIENT_ABORTED } from './status.js';

/** Bad options of the REST client or its rate limiter (negative QPS, burst below 1, …). */
export const ORCHCLIENT_OPTIONS_INVALID = 'ORCHCLIENT_OPTIONS_INVALID';

export interface RateLimiter {
  /** Resolves when the caller may send; rejects (ORCHCLIENT_ABORTED) when `signal` fires first. */
  wait(signal?: AbortSignal): Promise<void>;
  /** Takes a token if one is available now, without waiting. */
  tryAccept(): boolean;
}

export interface TokenBucketOptions {
  /** Tokens a second; > 0. */
  readonly qps: number;
  /** Tokens saved up at most; >= 1. */
  readonly burst: number;
  /** Milliseconds, monotonic; default performance.now. */
  readonly now?: () => number;
  /** Waits `ms`; rejects when `signal` fires. Default node:timers/promises setTimeout. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal === undefined ? {} : { signal });
}

export function createTokenBucket(options: TokenBucketOptions): RateLimiter {
  const { qps, burst } = options;
  if (!(qps > 0) || !Number.isFinite(qps)) {
    throw new OrchError(ORCHCLIENT_OPTIONS_INVALID, 'invalid', `rate limit: qps ${qps} must be a positive number`, { subject: 'qps' });
  }
  if (!Number.isInteger(burst) || burst < 1) {
    throw new OrchError(ORCHCLIENT_OPTIONS_INVALID, 'invalid', `rate limit: burst ${burst} must be an integer of at least 1`, { subject: 'burst' });
  }
  const now = options.now ?? ((): number => performance.now());
  const sleep = options.sleep ?? defaultSleep;
  let tokens = burst;
  let last = now();

  /** Refills for the time passed since the last look. */
  function advance(): void {
    const t = now();
    if (t > last) {
      tokens = Math.min(burst, tokens + ((t - last) / 1000) * qps);
      last = t;
    }
  }

  return {
    async wait(signal) {
      if (signal?.aborted === true) throw new OrchError(ORCHCLIENT_ABORTED, 'unavailable', 'rate limit: aborted before a token was taken');
      advance();
      tokens -= 1;
      if (tokens >= 0) return;
      const waitMs = (-tokens / qps) * 1000;
      try {
        await sleep(waitMs, signal);
      } catch (err) {
        // The request will not be sent: its token goes back for the others.
        advance();
        tokens = Math.min(burst, tokens + 1);
        throw new OrchError(ORCHCLIENT_ABORTED, 'unavailable', 'rate limit: aborted while waiting for a token', { cause: err });
      }
    },
    tryAccept() {
      advance();
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
  };
}
