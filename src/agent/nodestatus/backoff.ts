/**
 * The doubling back-off of this module's retries (registration, lease), and the logger used
 * when none is given.
 */
import type { NodeStatusLogger } from './types.js';

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
