/**
 * The real clock, back-off steps and the two time formats of the API: RFC 3339 seconds
 * (metav1.Time, node conditions) and micro-seconds (metav1.MicroTime, lease renewTime).
 */
import type { Clock, NodeStatusLogger } from './types.js';

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      timer.unref();
      signal.addEventListener('abort', done, { once: true });
    }),
};

/** A logger that drops everything (the default when none is given). */
export const silentLogger: NodeStatusLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** Doubling back-off: `initialMs`, 2×, 4×, … capped at `maxMs`. */
export class Backoff {
  private current: number;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {
    this.current = initialMs;
  }

  /** The wait before the next attempt; each call doubles the following one. */
  next(): number {
    const wait = this.current;
    this.current = Math.min(this.current * 2, this.maxMs);
    return wait;
  }

  reset(): void {
    this.current = this.initialMs;
  }
}

/** metav1.Time: `2006-01-02T15:04:05Z` (seconds). */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime: `2006-01-02T15:04:05.000000Z`. */
export function formatMicroTime(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
