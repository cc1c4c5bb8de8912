/**
 * The one clock of the agent: the time (milliseconds since the epoch), timers and sleeps.
 * Every module that reads the time or waits takes a `Clock` in its options, so that its tests
 * drive time with the FakeClock (src/api/fake-clock.ts, for tests only) and assert delays
 * instead of waiting for them. The composition roots pass `realClock`.
 *
 * Timers of the real clock do not keep the process alive (a loop's next tick must not hold a
 * stopping agent), unless asked to with `keepAlive` (work a caller waits for, such as a
 * request's turn or a certificate it cannot run without).
 */

/** A scheduled callback. */
export interface Timer {
  /** Cancels the callback; harmless after it ran or was cancelled. */
  cancel(): void;
}

export interface TimerOptions {
  /** Keep the process alive while the timer is pending (default false). */
  readonly keepAlive?: boolean;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `delayMs` (0 when negative or not a number). */
  setTimer(delayMs: number, callback: () => void, options?: TimerOptions): Timer;
  /** Resolves after `delayMs`, or at once when `signal` is (or becomes) aborted. Never rejects. */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
}

/** The delay a timer waits for `delayMs`: NaN and negative delays are 0. */
export function timerDelay(delayMs: number): number {
  return delayMs > 0 ? delayMs : 0;
}

/** A sleep made of the clock's timer (both clocks use it, so that a sleep is a pending timer). */
export function sleepOn(clock: Pick<Clock, 'setTimer'>, delayMs: number, signal?: AbortSignal, options?: TimerOptions): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(delayMs, done, options);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** setTimeout's longest delay (about 24.8 days); longer timers are armed again for the rest. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function realSetTimer(delayMs: number, callback: () => void, options: TimerOptions = {}): Timer {
  let handle: NodeJS.Timeout | undefined;
  const arm = (remaining: number): void => {
    const step = Math.min(remaining, MAX_TIMEOUT_MS);
    handle = setTimeout(() => {
      if (remaining > step) arm(remaining - step);
      else {
        handle = undefined;
        callback();
      }
    }, step);
    if (options.keepAlive !== true) handle.unref();
  };
  arm(timerDelay(delayMs));
  return {
    cancel() {
      if (handle !== undefined) clearTimeout(handle);
      handle = undefined;
    },
  };
}

/** The host's clock: Date.now and setTimeout. */
export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer: realSetTimer,
  sleep: (delayMs: number, signal?: AbortSignal) => sleepOn(realClock, delayMs, signal),
});

/**
 * A sleep on `clock` (ended at once by `signal`, never rejecting) that keeps the process alive
 * meanwhile: for a wait that a caller is blocked on (a retry's pause, a start-up wait), which
 * nothing else may be holding open. A loop's pause between passes uses clock.sleep instead.
 */
export function sleepKeepingAlive(clock: Pick<Clock, 'setTimer'>, delayMs: number, signal?: AbortSignal): Promise<void> {
  return sleepOn(clock, delayMs, signal, { keepAlive: true });
}
