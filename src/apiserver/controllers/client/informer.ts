/**
 * An informer: the objects of one ResourceClient kept in memory by a list and a watch from the
 * list's revision, with handlers told of each addition, change and removal (upstream's shared
 * informer, one per resource, shared by the loops of one leader term). A watch that ends in an
 * error is followed, after `relistDelayMs` on the clock, by a new list whose differences with
 * the cache reach the handlers as if watched. The objects are shared: handlers and readers must
 * not modify them (clone before writing).
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { messageOf } from '../../../api/errors.js';
import { metaOf, resourceVersionOf, str } from '../../registry/index.js';
import type { ClientWatch, Log, ObjectEvent, ResourceClient, WireObject } from './types.js';

export interface InformerHandler {
  added?(object: WireObject): void;
  updated?(old: WireObject, object: WireObject): void;
  deleted?(object: WireObject): void;
}

export interface InformerOptions {
  readonly client: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
  /** What is informed, for log lines (`pods`). */
  readonly what: string;
  /** The pause before listing again after a failed list or watch (default 1 s). */
  readonly relistDelayMs?: number;
}

/** `namespace/name` ('' namespace for cluster-scoped objects). */
export function objectKey(object: WireObject): string {
  const meta = metaOf(object);
  return `${str(meta.namespace)}/${str(meta.name)}`;
}

export class Informer {
  private readonly options: InformerOptions;
  private readonly objects = new Map<string, WireObject>();
  private readonly handlers: InformerHandler[] = [];
  private watch: ClientWatch | undefined;
  private timer: Timer | undefined;
  private closed = false;
  private starting: Promise<void> | undefined;
  /** Bumped by every (re)list: events of an older watch are dropped. */
  private generation = 0;

  constructor(options: InformerOptions) {
    this.options = options;
  }

  /** Handlers added before start() see every object as added by the first list. */
  addHandler(handler: InformerHandler): void {
    this.handlers.push(handler);
  }

  /** Lists, fills the cache and starts watching. Throws when the first list fails. */
  async start(): Promise<void> {
    await this.sync();
  }

  /**
   * Starts the informer on first use: resolves once the cache is filled. A failed first list
   * rejects this call and the next call tries again (for readers that start it lazily).
   */
  ready(): Promise<void> {
    this.starting ??= this.start().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  get(namespace: string, name: string): WireObject | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }

  /** The cached objects (a snapshot of the values). */
  list(): WireObject[] {
    return [...this.objects.values()];
  }

  get size(): number {
    return this.objects.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    this.generation++;
    await this.watch?.close();
  }

  private async sync(): Promise<void> {
    const generation = ++this.generation;
    await this.watch?.close();
    this.watch = undefined;
    const list = await this.options.client.list();
    if (this.closed || generation !== this.generation) return;
    const seen = new Set<string>();
    for (const object of list.items) {
      const key = objectKey(object);
      seen.add(key);
      this.apply(key, object);
    }
    for (const [key, old] of [...this.objects]) {
      if (seen.has(key)) continue;
      this.objects.delete(key);
      this.notify((h) => h.deleted?.(old));
    }
    this.watch = await this.options.client.watch(list.resourceVersion, (event) => {
      if (generation === this.generation) this.onEvent(event);
    });
    // Closed (or listing again) while the watch was being opened.
    if (generation !== this.generation) await this.watch.close();
  }

  private onEvent(event: ObjectEvent): void {
    if (event.type === 'ERROR') {
      this.options.log(`${this.options.what} informer: the watch ended (listing again): ${event.error.message}`);
      this.generation++;
      this.relist();
      return;
    }
    const key = objectKey(event.object);
    if (event.type === 'DELETED') {
      const old = this.objects.get(key);
      this.objects.delete(key);
      this.notify((h) => h.deleted?.(old ?? event.object));
      return;
    }
    this.apply(key, event.object);
  }

  private apply(key: string, object: WireObject): void {
    const old = this.objects.get(key);
    this.objects.set(key, object);
    if (old !== undefined && str(metaOf(old).uid) !== str(metaOf(object).uid)) {
      // Another object of the same name (deleted and made again while no watch was open).
      this.notify((h) => h.deleted?.(old));
      this.notify((h) => h.added?.(object));
    } else if (old === undefined) {
      this.notify((h) => h.added?.(object));
    } else if (resourceVersionOf(old) !== resourceVersionOf(object)) {
      this.notify((h) => h.updated?.(old, object));
    }
  }

  private relist(): void {
    if (this.closed) return;
    this.timer?.cancel();
    this.timer = this.options.clock.setTimer(this.options.relistDelayMs ?? 1000, () => {
      this.sync().catch((err: unknown) => {
        this.options.log(`${this.options.what} informer: listing failed (will retry): ${messageOf(err)}`);
        this.relist();
      });
    });
  }

  private notify(call: (h: InformerHandler) => void): void {
    for (const handler of this.handlers) {
      try {
        call(handler);
      } catch (err) {
        // A handler's bug must not stop the informer or the other handlers.
        this.options.log(`${this.options.what} informer: a handler failed: ${messageOf(err)}`);
      }
    }
  }
}
