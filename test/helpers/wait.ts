/**
 * Deadline-based polling for tests: never sleep a fixed time, poll a condition until it holds
 * or the deadline passes, then fail with the description and the last error seen.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  /** Total time allowed, in milliseconds (default 10 000). */
  readonly timeoutMs?: number;
  /** Pause between attempts, in milliseconds (default 50). */
  readonly intervalMs?: number;
}

/**
 * Thrown by a probe when what it waits for can no longer happen (the process that would do it
 * exited): waitFor fails at once with its message instead of polling to the deadline.
 */
export class WaitAbandoned extends Error {}

/**
 * Calls `probe` until it returns a value other than undefined/false, and returns that value.
 * Throws after the deadline, naming `what` and the last error `probe` threw; at once when
 * `probe` throws WaitAbandoned.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      if (err instanceof WaitAbandoned) throw new Error(`gave up waiting for ${what}: ${err.message}`, { cause: err });
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const detail = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await delay(intervalMs);
  }
}

/**
 * `promise`, or a failure naming `what` when it has not settled within `timeoutMs`: a teardown
 * step that hangs then fails its hook with its name instead of holding the test file to the
 * runner's time-out.
 */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(() => { reject(new Error(`${what} did not finish within ${timeoutMs} ms`)); }, timeoutMs);
  });
  try {
    return await Promise.race([promise, overdue]);
  } finally {
    clearTimeout(timer);
  }
}
