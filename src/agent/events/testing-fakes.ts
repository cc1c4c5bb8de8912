/**
 * Fakes for this module's unit tests: a manual clock with timers (the RestClient and the
 * Logger are the shared ones of orchclient/testing.ts and logging/testing.ts).
 */
import type { EventTimers } from './writer.js';

/** Lets pending promise chains run (a few macrotask turns). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements EventTimers {
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  constructor(public nowMs = Date.UTC(2026, 10, 22, 3, 4, 5, 123)) {}

  readonly now = (): number => this.nowMs;

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.nowMs + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get timerCount(): number {
    return this.pending.size;
  }

  /** Moves time forward by `ms`, firing due timers in order and letting their work run. */
  async advance(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    await settle();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.pending) if (entry[1].at <= target && (next === undefined || entry[1].at < next[1].at)) next = entry;
      if (next === undefined) break;
      this.pending.delete(next[0]);
      this.nowMs = Math.max(this.nowMs, next[1].at);
      next[1].fn();
      await settle();
    }
    this.nowMs = target;
    await settle();
  }
}
