/**
 * One watcher: turns a backend's changes into WatchEvents, delivers them in order from a queue
 * (never re-entrantly, never after close), adds periodic BOOKMARKs, and ends on close, abort,
 * a terminal error or the backend's end.
 */
import { messageOf, type OrchError } from '../../api/errors.js';
import { decodePreviousShared, decodeShared } from './codec.js';
import type { KvChange, KvWatch, KvWatchSink } from './kv.js';
import type { StoreLogger, Watch, WatchEvent } from './types.js';

export interface WatchStreamOptions {
  readonly subject: string;
  readonly onEvent: (event: WatchEvent) => void;
  readonly bookmarks: boolean;
  readonly bookmarkIntervalMs: number;
  readonly signal: AbortSignal | undefined;
  readonly log: StoreLogger;
}

export class WatchStream implements KvWatchSink, Watch {
  resourceVersion = '0';
  readonly done: Promise<void>;
  private readonly options: WatchStreamOptions;
  private queue: WatchEvent[] = [];
  private head = 0;
  private scheduled = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private kvWatch: KvWatch | undefined;
  private lastRevision = 0;
  private timer: NodeJS.Timeout | undefined;
  private resolveDone: () => void = () => undefined;
  private readonly onAbort = (): void => void this.close();

  constructor(options: WatchStreamOptions) {
    this.options = options;
    this.done = new Promise<void>((resolve) => {
      this.resolveDone = resolve;
    });
    if (options.signal?.aborted === true) this.closed = true;
    else options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Called once the backend watch exists; changes may have arrived before. */
  attach(kvWatch: KvWatch, startRevision: number): void {
    this.kvWatch = kvWatch;
    this.resourceVersion = String(startRevision);
    this.lastRevision = Math.max(this.lastRevision, startRevision);
    if (this.closed) {
      // Closed (aborted, failed or ended) while the backend was starting: stop the backend now.
      void this.finish();
      return;
    }
    if (this.options.bookmarks) {
      this.timer = setInterval(() => {
        this.bookmark();
      }, this.options.bookmarkIntervalMs);
      this.timer.unref();
    }
    // Events replayed while starting are delivered once watch() has resolved, not before.
    if (this.head < this.queue.length && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.drain();
      });
    }
  }

  /** The backend watch could not start: nothing to stop, the watch is over. */
  abandon(): void {
    this.closed = true;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.resolveDone();
  }

  change(change: KvChange): void {
    if (this.closed) return;
    const object = decodeShared(change.record);
    this.lastRevision = change.record.modRevision;
    if (change.type === 'put' && !change.created) {
      const previous = change.previous;
      this.push(previous === undefined ? { type: 'MODIFIED', object } : { type: 'MODIFIED', object, previous: () => decodePreviousShared(change, previous) });
      return;
    }
    this.push({ type: change.type === 'delete' ? 'DELETED' : 'ADDED', object });
  }

  fail(error: OrchError): void {
    if (this.closed) return;
    this.push({ type: 'ERROR', error });
  }

  end(): void {
    void this.close();
  }

  close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.queue = [];
    this.head = 0;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    // Before attach() the backend watch does not exist yet: attach() finishes the close.
    return this.kvWatch === undefined ? this.done : this.finish();
  }

  private finish(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    const kvWatch = this.kvWatch;
    const stopping = kvWatch === undefined ? Promise.resolve() : kvWatch.close();
    this.closing = stopping.then(
      () => {
        this.resolveDone();
      },
      (err: unknown) => {
        this.options.log(`storage: closing the watch on ${this.options.subject} failed: ${messageOf(err)}`);
        this.resolveDone();
      },
    );
    return this.closing;
  }

  bookmark(): void {
    if (this.closed || this.kvWatch === undefined || !this.options.bookmarks) return;
    const revision = Math.max(this.lastRevision, this.kvWatch.progressRevision());
    this.push({ type: 'BOOKMARK', resourceVersion: String(revision) });
  }

  private push(event: WatchEvent): void {
    this.queue.push(event);
    if (this.scheduled || this.kvWatch === undefined) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.drain();
    });
  }

  private drain(): void {
    this.scheduled = false;
    while (!this.closed && this.head < this.queue.length) {
      const event = this.queue[this.head] as WatchEvent;
      this.head += 1;
      try {
        this.options.onEvent(event);
      } catch (err) {
        this.options.log(`storage: the watcher of ${this.options.subject} threw, ending the watch: ${messageOf(err)}`);
        void this.close();
        return;
      }
      if (event.type === 'ERROR') {
        void this.close();
        return;
      }
    }
    this.queue = [];
    this.head = 0;
  }
}
