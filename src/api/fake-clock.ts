/**
 * FakeClock: the Clock of unit tests (never imported by production code). Time stands still
 * until the test moves it: `advance(ms)` fires the timers that fall due on the way, in time
 * order (timers set by those callbacks, or by the promise chains they start, included), and
 * lets promise chains settle between them. `pending()` and `delays` show what was scheduled, so
 * that a test asserts a delay ("the retry comes 2 s after the failure") instead of waiting.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sleepOn, timerDelay, type Clock, type Timer, type TimerOptions } from './clock.js';

/** Lets pending promise chains run: `turns` turns of the event loop (default 10). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await nextTurn();
}

/** A timer that has not fired yet. */
export interface PendingTimer {
  /** When it fires (ms since the epoch). */
  readonly dueAt: number;
  /** The delay it was set with. */
  readonly delayMs: number;
  readonly keepAlive: boolean;
}

interface Entry extends PendingTimer {
  readonly seq: number;
  readonly callback: () => void;
}

/** 2024-01-02T03:04:05Z: a fixed start, so that formatted times in assertions are stable. */
export const FAKE_CLOCK_START = Date.UTC(2024, 0, 2, 3, 4, 5);

export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, Entry>();
  /** Every delay asked for (timers and sleeps), in the order asked. */
  readonly delays: number[] = [];

  constructor(start = FAKE_CLOCK_START) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** Sets the time without firing timers (a jump, as an NTP step; may go back). */
  set(ms: number): void {
    this.t = ms;
  }

  setTimer(delayMs: number, callback: () => void, options: TimerOptions = {}): Timer {
    const delay = timerDelay(delayMs);
    this.delays.push(delay);
    const seq = ++this.seq;
    this.timers.set(seq, { seq, dueAt: this.t + delay, delayMs: delay, keepAlive: options.keepAlive === true, callback });
    return {
      cancel: () => {
        this.timers.delete(seq);
      },
    };
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }

  /** The timers not fired yet, the next first (ties in the order they were set). */
  pending(): PendingTimer[] {
    return [...this.timers.values()]
      .sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq)
      .map(({ dueAt, delayMs, keepAlive }) => ({ dueAt, delayMs, keepAlive }));
  }

  /** Milliseconds until the next timer fires; undefined when none is pending. */
  untilNext(): number | undefined {
    const next = this.pending()[0];
    return next === undefined ? undefined : next.dueAt - this.t;
  }

  /**
   * Moves time forward by `ms`: settles, then fires each timer due by then in time order,
   * setting the time to its due time and settling after each, then sets the time to the end.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + Math.max(0, ms);
    await settle();
    for (;;) {
      let next: Entry | undefined;
      for (const entry of this.timers.values()) {
        if (entry.dueAt <= end && (next === undefined || entry.dueAt < next.dueAt || (entry.dueAt === next.dueAt && entry.seq < next.seq))) next = entry;
      }
      if (next === undefined) break;
      this.timers.delete(next.seq);
      this.t = Math.max(this.t, next.dueAt);
      next.callback();
      await settle();
    }
    this.t = end;
    await settle();
  }
}
