/**
 * The queues of one priority level, as upstream's fair-queuing queueset: a request of a flow
 * joins the shortest queue of its shuffle-sharded hand; a queue at its length limit turns the
 * request away; requests are dispatched while fewer than the level's concurrency limit execute,
 * taking the queues in fair order (each queue's virtual dispatch time advances by one per
 * request it sends, and a queue that was idle starts at the current virtual time, so a busy flow
 * cannot starve a quiet one). A request that waits longer than `maxWaitMs` is turned away.
 *
 * Deviation from upstream: every request costs one seat for one unit of virtual time (upstream
 * estimates seats and width per request and measures service time); no borrowing between levels.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { dealHand } from './shuffle.js';

/**
 * What a waiting request listens to for its client going away: an AbortSignal, or anything as
 * light (the router adapts the response's 'close' without building an AbortSignal per request).
 */
export interface Cancellation {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface QueueSetConfig {
  /** Requests that may execute at once (at least 1). */
  readonly concurrencyLimit: number;
  /** 0: no queuing, a request beyond the limit is rejected at once. */
  readonly queues: number;
  readonly handSize: number;
  readonly queueLengthLimit: number;
}

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

export type Admission =
  | { readonly kind: 'dispatched'; readonly waitedMs: number; readonly release: () => void }
  | { readonly kind: 'rejected'; readonly reason: RejectReason; readonly waitedMs: number };

interface Waiting {
  readonly queue: Queue;
  readonly enqueuedAt: number;
  readonly resolve: (admission: Admission) => void;
  timer: Timer | undefined;
  cleanup: () => void;
}

interface Queue {
  readonly waiting: Waiting[];
  executing: number;
  nextDispatch: number;
}

export class QueueSet {
  private config: QueueSetConfig;
  private queues: Queue[] = [];
  private executingCount = 0;
  private waitingCount = 0;
  private virtualTime = 0;

  constructor(config: QueueSetConfig, private readonly clock: Clock, private readonly maxWaitMs: number) {
    this.config = config;
    this.queues = this.makeQueues(config.queues);
  }

  get executing(): number {
    return this.executingCount;
  }

  get inQueue(): number {
    return this.waitingCount;
  }

  get limit(): number {
    return this.config.concurrencyLimit;
  }

  /** New limits: waiting requests keep their place where their queue still exists. */
  reconfigure(config: QueueSetConfig): void {
    const old = this.queues;
    this.config = config;
    if (config.queues !== old.length) {
      this.queues = this.makeQueues(config.queues);
      // Requests of queues that are gone go to the new first queues, in order.
      const orphans = old.flatMap((q) => q.waiting);
      for (const w of orphans) w.cleanup();
      this.waitingCount = 0;
      for (const w of orphans) {
        const target = this.queues.length === 0 ? undefined : this.queues[this.waitingCount % this.queues.length];
        if (target === undefined) {
          w.resolve({ kind: 'rejected', reason: 'concurrency-limit', waitedMs: this.clock.now() - w.enqueuedAt });
          continue;
        }
        this.join(target, w.enqueuedAt, w.resolve, undefined);
      }
    }
    this.dispatch();
  }

  /** Waits for a seat for a request of the flow whose hash is `hash`; leaves its queue when `signal` aborts. */
  admit(hash: bigint, signal?: Cancellation): Promise<Admission> {
    const now = this.clock.now();
    if (this.waitingCount === 0 && this.executingCount < this.config.concurrencyLimit) {
      const queue = this.queues.length === 0 ? undefined : this.pick(hash);
      return Promise.resolve(this.start(queue, now, now));
    }
    if (this.queues.length === 0) return Promise.resolve({ kind: 'rejected', reason: 'concurrency-limit', waitedMs: 0 });
    const queue = this.pick(hash);
    if (queue.waiting.length >= this.config.queueLengthLimit) return Promise.resolve({ kind: 'rejected', reason: 'queue-full', waitedMs: 0 });
    return new Promise<Admission>((resolve) => {
      this.join(queue, now, resolve, signal);
      this.dispatch();
    });
  }

  private makeQueues(n: number): Queue[] {
    return Array.from({ length: n }, () => ({ waiting: [], executing: 0, nextDispatch: this.virtualTime }));
  }

  /** The queue of the hand with the fewest requests waiting and executing. */
  private pick(hash: bigint): Queue {
    let best: Queue | undefined;
    for (const i of dealHand(hash, this.queues.length, this.config.handSize)) {
      const q = this.queues[i] as Queue;
      if (best === undefined || q.waiting.length + q.executing < best.waiting.length + best.executing) best = q;
    }
    return best as Queue;
  }

  private join(queue: Queue, enqueuedAt: number, resolve: (a: Admission) => void, signal: Cancellation | undefined): void {
    if (queue.waiting.length === 0 && queue.executing === 0) queue.nextDispatch = Math.max(queue.nextDispatch, this.virtualTime);
    const entry: Waiting = { queue, enqueuedAt, resolve, timer: undefined, cleanup: () => undefined };
    const leave = (reason: RejectReason): void => {
      const at = queue.waiting.indexOf(entry);
      if (at < 0) return;
      queue.waiting.splice(at, 1);
      this.waitingCount -= 1;
      entry.cleanup();
      resolve({ kind: 'rejected', reason, waitedMs: this.clock.now() - enqueuedAt });
    };
    const onAbort = (): void => {
      leave('cancelled');
    };
    const left = this.maxWaitMs - (this.clock.now() - enqueuedAt);
    entry.timer = this.clock.setTimer(left, () => {
      leave('time-out');
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    entry.cleanup = () => {
      entry.timer?.cancel();
      signal?.removeEventListener('abort', onAbort);
    };
    queue.waiting.push(entry);
    this.waitingCount += 1;
    if (signal?.aborted === true) leave('cancelled');
  }

  private start(queue: Queue | undefined, enqueuedAt: number, now: number): Admission {
    this.executingCount += 1;
    if (queue !== undefined) queue.executing += 1;
    let released = false;
    return {
      kind: 'dispatched',
      waitedMs: now - enqueuedAt,
      release: () => {
        if (released) return;
        released = true;
        this.executingCount -= 1;
        if (queue !== undefined) queue.executing -= 1;
        this.dispatch();
      },
    };
  }

  /** Starts waiting requests while seats are free, the queue with the earliest virtual time first. */
  private dispatch(): void {
    while (this.waitingCount > 0 && this.executingCount < this.config.concurrencyLimit) {
      let next: Queue | undefined;
      for (const q of this.queues) {
        if (q.waiting.length > 0 && (next === undefined || q.nextDispatch < next.nextDispatch)) next = q;
      }
      if (next === undefined) return;
      const entry = next.waiting.shift() as Waiting;
      this.waitingCount -= 1;
      entry.cleanup();
      this.virtualTime = next.nextDispatch;
      next.nextDispatch += 1;
      entry.resolve(this.start(next, entry.enqueuedAt, this.clock.now()));
    }
  }
}
