/**
 * The token bucket that paces event writes: `qps` tokens per second, at most `burst` saved up
 * (eventRecordQPS, eventBurst). It starts full, as upstream's client-side limiter does. A qps
 * of 0 means no limit (the configuration's rule); a burst below 1 with a positive qps is read
 * as 1 (one write must always be possible).
 *
 * The bucket only answers questions; it never sleeps. Its time comes from the injected `now`.
 */
import { OrchError } from '../../api/errors.js';

/** Options of createEventRecorder or the token bucket are out of range. */
export const EVENTS_INVALID_OPTIONS = 'EVENTS_INVALID_OPTIONS';

export interface TokenBucket {
  /** Takes one token when one is available now. Never blocks. */
  tryTake(): boolean;
  /** Milliseconds until a token is available (0 when one is now). */
  delayMs(): number;
}

export interface TokenBucketOptions {
  /** Tokens per second; 0: unlimited. */
  readonly qps: number;
  /** Tokens saved up at most (ignored when qps is 0). */
  readonly burst: number;
  /** Milliseconds since the epoch (or any monotonic origin). */
  readonly now: () => number;
}

function checkCount(value: number, name: string): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new OrchError(EVENTS_INVALID_OPTIONS, 'invalid', `${name} must be a finite number >= 0, got ${String(value)}`, { subject: name });
  }
}

/** Throws EVENTS_INVALID_OPTIONS (category invalid) for a negative or non-finite qps or burst. */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  checkCount(options.qps, 'eventRecordQPS');
  checkCount(options.burst, 'eventBurst');
  if (options.qps === 0) return { tryTake: () => true, delayMs: () => 0 };
  const rate = options.qps / 1000;
  const capacity = Math.max(1, Math.floor(options.burst));
  let tokens = capacity;
  let last = options.now();

  function refill(): void {
    const now = options.now();
    // A clock that goes back (tests, NTP steps) neither adds nor removes tokens.
    if (now > last) tokens = Math.min(capacity, tokens + (now - last) * rate);
    last = now;
  }

  return {
    tryTake() {
      refill();
      if (tokens >= 1) {
        tokens -= 1;
        return true;
      }
      return false;
    },
    delayMs() {
      refill();
      return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / rate);
    },
  };
}
