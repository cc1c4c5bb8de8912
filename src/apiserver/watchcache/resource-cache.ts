/**
 * The watch cache of one resource (one top-level key prefix, `/pods/`), as upstream's cacher:
 * lists everything from the store, then watches from the list's revision (with bookmarks) and
 * applies every change, so that it holds the resource's state at `revision`. Reads wait until
 * the cache has reached the revision they ask for (at most `waitMs`, then the 504 upstream
 * answers: "Too large resource version").
 *
 * When the watch ends (its history compacted, the store unreachable) the cache is not ready
 * until it has listed again; the caller sends reads to the store meanwhile. Failures back off
 * exponentially (`backoffMs` to `maxBackoffMs`); a run of failures is logged once, and its end.
 */
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf, OrchError } from '../../api/errors.js';
import type { ListResult, Store, StoredObject, Watch, WatchEvent, WatchIndex } from '../storage/index.js';
import { StoreErrorCode } from '../storage/index.js';
import { CacheContents } from './contents.js';
import { notFound, tooLargeResourceVersion } from './errors.js';

export interface ResourceCacheOptions {
  readonly store: Store;
  /** The top-level prefix cached, `/pods/`. */
  readonly prefix: string;
  readonly clock: Clock;
  readonly log: (message: string) => void;
  /** How long a read waits for the cache to reach its resourceVersion (upstream: 3 s). */
  readonly waitMs: number;
  /** The first pause after a failed list or watch; doubled after each failure up to maxBackoffMs. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  /** Called for every change applied (metrics). */
  readonly onEvent?: () => void;
}

interface Waiter {
  readonly revision: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
  readonly timer: Timer;
}

/** How often a waiting read asks the store's watch for a bookmark (the current revision). */
const NUDGE_MS = 50;

function metaOf(object: StoredObject): Record<string, unknown> {
  const meta = object.metadata;
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
}

function revisionOf(object: StoredObject): number {
  const rv = metaOf(object).resourceVersion;
  return typeof rv === 'string' ? Number(rv) : 0;
}

export class ResourceCache {
  private readonly options: ResourceCacheOptions;
  private readonly contents = new CacheContents();
  private revision = 0;
  private ready = false;
  private watch: Watch | undefined;
  private waiters: Waiter[] = [];
  private nudge: Timer | undefined;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  /** The ERROR that ended the current watch. */
  private watchError: OrchError | undefined;
  /** The first message of the current run of failures (logged once). */
  private failing: string | undefined;

  constructor(options: ResourceCacheOptions) {
    this.options = options;
  }

  /** Whether reads may be served: the first list is done and the watch runs. */
  isReady(): boolean {
    return this.ready;
  }

  /** The revision the cache holds the state of. */
  currentRevision(): number {
    return this.revision;
  }

  /** How many objects are held, and their encoded bytes. */
  stats(): { objects: number; bytes: number } {
    return { objects: this.contents.size, bytes: this.contents.bytes() };
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops the watch; waiting reads fail with the store's unavailable. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.ready = false;
    await this.watch?.close();
    await this.loop;
    for (const waiter of this.waiters) {
      waiter.timer.cancel();
      waiter.reject(new OrchError(StoreErrorCode.unavailable, 'unavailable', `the watch cache of ${this.options.prefix} stopped`, { subject: this.options.prefix }));
    }
    this.waiters = [];
    this.nudge?.cancel();
  }

  /** A copy of the object at `key` once the cache reached `revision`. Throws not-found, timeout. */
  async get(key: string, revision: number): Promise<StoredObject> {
    await this.fresh(revision);
    const object = this.contents.get(key);
    if (object === undefined) throw notFound(key);
    return object;
  }

  /** A copy of the object at `key` as the cache holds it now, at once (undefined: none). */
  peek(key: string): StoredObject | undefined {
    return this.contents.get(key);
  }

  /** Every object under `prefix` (or those the index names) once the cache reached `revision`. */
  async list(prefix: string, revision: number, index: WatchIndex | undefined): Promise<ListResult> {
    await this.fresh(revision);
    return { items: this.contents.list(prefix, index), resourceVersion: String(this.revision) };
  }

  /** Resolves once the cache holds a state not older than `revision` (at once for 0). */
  private fresh(revision: number): Promise<void> {
    if (this.revision >= revision) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = this.options.clock.setTimer(this.options.waitMs, () => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(tooLargeResourceVersion(revision, this.revision));
      });
      this.waiters.push({ revision, resolve, reject, timer });
      this.askProgress();
    });
  }

  /** Asks the watch for a bookmark now and while reads wait (the revision may belong to another resource). */
  private askProgress(): void {
    this.watch?.bookmark();
    if (this.nudge !== undefined || this.waiters.length === 0) return;
    this.nudge = this.options.clock.setTimer(NUDGE_MS, () => {
      this.nudge = undefined;
      this.askProgress();
    });
  }

  private advance(revision: number): void {
    if (revision > this.revision) this.revision = revision;
    if (this.waiters.length === 0) return;
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.revision <= this.revision) {
        waiter.timer.cancel();
        waiter.resolve();
      } else {
        waiting.push(waiter);
      }
    }
    this.waiters = waiting;
  }

  private keyOf(object: StoredObject): string | undefined {
    const meta = metaOf(object);
    const name = meta.name;
    if (typeof name !== 'string' || name === '') return undefined;
    const namespace = meta.namespace;
    return typeof namespace === 'string' && namespace !== '' ? `${this.options.prefix}${namespace}/${name}` : `${this.options.prefix}${name}`;
  }

  private apply(event: WatchEvent): void {
    switch (event.type) {
      case 'BOOKMARK':
        this.advance(Number(event.resourceVersion));
        return;
      case 'ERROR':
        // The watch ends after this: listAndWatch() fails with it (logged once per run of failures).
        this.watchError = event.error;
        this.ready = false;
        return;
      default: {
        const key = this.keyOf(event.object);
        if (key !== undefined) {
          if (event.type === 'DELETED') this.contents.remove(key);
          else this.contents.put(key, event.object);
        }
        this.options.onEvent?.();
        this.advance(revisionOf(event.object));
      }
    }
  }

  private async listAndWatch(): Promise<void> {
    const { store, prefix } = this.options;
    const listed = await store.list(prefix);
    const items: { key: string; object: StoredObject }[] = [];
    for (const object of listed.items) {
      const key = this.keyOf(object);
      if (key !== undefined) items.push({ key, object });
    }
    this.contents.replace(items);
    // A consistent list: not older than anything applied before.
    this.revision = Number(listed.resourceVersion);
    this.watchError = undefined;
    const watch = await store.watch(prefix, {
      resourceVersion: listed.resourceVersion, bookmarks: true, signal: this.stopper.signal,
      onEvent: (event) => { this.apply(event); },
    });
    this.watch = watch;
    if (this.stopper.signal.aborted) {
      await watch.close();
      return;
    }
    this.ready = true;
    this.advance(this.revision);
    if (this.failing !== undefined) this.options.log(`watch cache ${prefix}: ready again at revision ${listed.resourceVersion} (${items.length} objects)`);
    this.failing = undefined;
    if (this.waiters.length > 0) this.askProgress();
    await watch.done;
    this.ready = false;
    this.watch = undefined;
    const ended = this.endedWith();
    if (ended !== undefined) throw new Error(`the watch ended: ${ended.message}`, { cause: ended });
  }

  /** Read through a call: the compiler would narrow the field across the awaits. */
  private endedWith(): OrchError | undefined {
    return this.watchError;
  }

  private stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  private async run(): Promise<void> {
    const { backoffMs, maxBackoffMs } = this.options;
    let failures = 0;
    while (!this.stopped()) {
      try {
        await this.listAndWatch();
        failures = 0;
      } catch (err) {
        this.ready = false;
        failures++;
        if (this.failing === undefined && !this.stopped()) {
          this.failing = messageOf(err);
          this.options.log(`watch cache ${this.options.prefix}: cannot list and watch, reads go to the store until it can (retrying with back-off): ${this.failing}`);
        }
      }
      // Even after a watch that ended normally: one that ends as soon as it starts must not spin.
      const pause = failures === 0 ? backoffMs : Math.min(backoffMs * 2 ** (failures - 1), maxBackoffMs);
      await this.options.clock.sleep(pause, this.stopper.signal);
    }
  }
}
