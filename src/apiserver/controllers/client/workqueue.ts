/**
 * A work queue of object keys for a control loop (client-go's rate-limited workqueue, reduced):
 * keys are processed one at a time, in the order they were added, each at most once however
 * often it was added while waiting; a key added while it is being processed runs again after.
 * A failed key is tried again after a back-off that doubles per consecutive failure of that key
 * (from `initialBackoffMs` to `maxBackoffMs`); a success resets it. Errors are logged, never
 * thrown: one bad object must not stop the loop.
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { messageOf } from '../../../api/errors.js';
import type { Log } from './types.js';

export interface WorkQueueOptions {
  readonly clock: Clock;
  readonly log: Log;
  /** The loop's name, for log lines. */
  readonly what: string;
  /** Does the work of one key; throws to be tried again later. */
  readonly process: (key: string) => Promise<void>;
  /** Default 1 s. */
  readonly initialBackoffMs?: number;
  /** Default 5 min. */
  readonly maxBackoffMs?: number;
}

export class WorkQueue {
  private readonly options: WorkQueueOptions;
  private readonly pending = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retries = new Map<string, Timer>();
  private draining: Promise<void> | undefined;
  private closed = false;

  constructor(options: WorkQueueOptions) {
    this.options = options;
  }

  /** Keys waiting (not counting the one being processed). */
  get length(): number {
    return this.pending.size;
  }

  /** Queues `key` now (a retry waiting for it is dropped: the key runs sooner). */
  add(key: string): void {
    if (this.closed) return;
    this.retries.get(key)?.cancel();
    this.retries.delete(key);
    this.pending.add(key);
    // Started on a microtask: the caller (often an informer's handler) never runs a key's work itself.
    this.draining ??= Promise.resolve().then(() => this.drain()).finally(() => {
      this.draining = undefined;
      if (this.pending.size > 0) this.add([...this.pending][0] ?? '');
    });
  }

  /** Queues `key` after `delayMs` (unless it is added sooner). */
  addAfter(key: string, delayMs: number): void {
    if (this.closed || this.retries.has(key)) return;
    this.retries.set(key, this.options.clock.setTimer(delayMs, () => {
      this.retries.delete(key);
      this.add(key);
    }));
  }

  /** Stops taking keys; resolves once the key being processed is done. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.retries.values()) t.cancel();
    this.retries.clear();
    this.pending.clear();
    await this.draining;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const key = this.pending.values().next();
      if (key.done === true || this.closed) return;
      this.pending.delete(key.value);
      try {
        await this.options.process(key.value);
        this.failures.delete(key.value);
      } catch (err) {
        const n = (this.failures.get(key.value) ?? 0) + 1;
        this.failures.set(key.value, n);
        const delay = Math.min(this.options.maxBackoffMs ?? 300_000, (this.options.initialBackoffMs ?? 1_000) * 2 ** (n - 1));
        this.options.log(`${this.options.what}: ${key.value}: ${messageOf(err)} (trying again in ${delay} ms)`);
        this.addAfter(key.value, delay);
      }
    }
  }
}
