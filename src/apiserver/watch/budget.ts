/**
 * The memory a watch may hold on the server. kube-apiserver gives each watcher a channel of 100
 * events and ends the watcher whose channel stays full (the client lists again or resumes from
 * its last resourceVersion). Here the response's write buffer is the queue: an event written
 * while the socket has not drained counts as queued. A watcher is ended when
 * - more than `queueEvents` events stay queued for longer than `stallMs`, or
 * - its queued bytes pass `maxWatcherBytes`, or
 * - the queued bytes of all watchers together pass `maxTotalBytes` while it has a backlog.
 * Ending destroys the connection, so its buffer is freed at once even if the client never reads.
 */
import type { Clock, Timer } from '../../api/clock.js';

export interface WatchBudgetOptions {
  /** Events a watcher may have queued (upstream's per-watcher channel: 100). */
  readonly queueEvents: number;
  /** How long a watcher's queue may stay over `queueEvents` before the watcher is ended. */
  readonly stallMs: number;
  /** Bytes one watcher may have queued. */
  readonly maxWatcherBytes: number;
  /** Bytes all watchers together may have queued. */
  readonly maxTotalBytes: number;
  readonly clock: Clock;
  /** Called once per watcher ended for being too slow (the terminated-watchers metric). */
  readonly onTerminated?: (resource: string) => void;
}

export const DEFAULT_WATCH_BUDGET = {
  queueEvents: 100,
  stallMs: 5_000,
  maxWatcherBytes: 16 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
} as const;

/** The part of a response a watch writes to (http.ServerResponse has all of it). */
export interface WatchSink {
  write(chunk: string | Buffer): boolean;
  readonly writableNeedDrain: boolean;
  once(event: 'drain', listener: () => void): unknown;
  removeListener(event: 'drain', listener: () => void): unknown;
  destroy(): unknown;
}

/** The buffering of all the server's watchers. */
export class WatchBudget {
  private total = 0;
  private terminatedCount = 0;

  constructor(readonly options: WatchBudgetOptions) {}

  /** Bytes queued by every watcher now. */
  get queuedBytes(): number {
    return this.total;
  }

  get terminated(): number {
    return this.terminatedCount;
  }

  /** A new watcher's outlet; `onEnd` is called (once) with the reason when the budget ends it. */
  outlet(sink: WatchSink, resource: string, onEnd: (reason: string) => void): WatchOutlet {
    return new WatchOutlet(this, sink, resource, onEnd);
  }

  /** @internal */
  adjust(delta: number): void {
    this.total += delta;
  }

  /** @internal */
  countTerminated(resource: string): void {
    this.terminatedCount += 1;
    this.options.onTerminated?.(resource);
  }
}

/** One watcher's writes, counted against its budget. */
export class WatchOutlet {
  private queuedEvents = 0;
  private queuedBytes = 0;
  private stall: Timer | undefined;
  private ended = false;
  private readonly drained = (): void => {
    this.release();
  };

  constructor(
    private readonly budget: WatchBudget,
    private readonly sink: WatchSink,
    private readonly resource: string,
    private readonly onEnd: (reason: string) => void,
  ) {}

  /** Writes one event; false when the watcher is (now) ended and nothing more should be written. */
  write(chunk: string | Buffer): boolean {
    if (this.ended) return false;
    const blocked = this.sink.writableNeedDrain;
    const flowing = this.sink.write(chunk);
    if (!blocked && flowing) return true;
    // Queued behind a socket that has not drained: count it until the next drain.
    const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (this.queuedEvents === 0) this.sink.once('drain', this.drained);
    this.queuedEvents += 1;
    this.queuedBytes += bytes;
    this.budget.adjust(bytes);
    const o = this.budget.options;
    if (this.queuedBytes > o.maxWatcherBytes) {
      this.terminate(`more than ${o.maxWatcherBytes} bytes are waiting for the client`);
    } else if (this.budget.queuedBytes > o.maxTotalBytes) {
      this.terminate(`the server's watch buffers are full (${o.maxTotalBytes} bytes)`);
    } else if (this.queuedEvents > o.queueEvents && this.stall === undefined) {
      this.stall = o.clock.setTimer(o.stallMs, () => {
        this.stall = undefined;
        this.terminate(`more than ${o.queueEvents} events waited for the client for ${o.stallMs} ms`);
      });
    }
    return !this.ended;
  }

  /** The watch ended for another reason: give its bytes back. Idempotent. */
  close(): void {
    this.ended = true;
    this.release();
  }

  private release(): void {
    this.stall?.cancel();
    this.stall = undefined;
    this.sink.removeListener('drain', this.drained);
    this.budget.adjust(-this.queuedBytes);
    this.queuedBytes = 0;
    this.queuedEvents = 0;
  }

  private terminate(reason: string): void {
    if (this.ended) return;
    this.close();
    this.budget.countTerminated(this.resource);
    this.onEnd(reason);
    this.sink.destroy();
  }
}
