/**
 * A reflector, as client-go's: it lists a collection (in pages), then watches it from the list's
 * resourceVersion and keeps a map of the objects (each turned into what the views need by
 * `transform`). A watch that ends or drops resumes from the last resourceVersion seen (events
 * and bookmarks), after a back-off when it failed; a 410 Gone (an HTTP answer or an ERROR
 * event) lists again. A 401 or 403 stops it with the API's message (a 401 also ends the
 * session, through the Api).
 *
 * States: idle -(start)-> listing -> live <-> retrying; any -(stop)-> idle;
 * listing/live -(401/403)-> failed. start() from idle or failed resumes from the last
 * resourceVersion when there is one.
 */
import { ApiError, type Api } from './api.js';
import { keyOf, type KubeObject, type ListOf, type WatchEvent } from './kube.js';
import { LineSplitter } from './lines.js';

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export type ReflectorState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'listing' }
  | { readonly kind: 'live' }
  | { readonly kind: 'retrying'; readonly error: string; readonly inMs: number }
  | { readonly kind: 'failed'; readonly error: string; readonly status: number };

export interface ReflectorOptions<T> {
  readonly api: Api;
  /** The collection, e.g. `/api/v1/pods`. */
  readonly path: string;
  readonly transform: (object: KubeObject) => T;
  readonly timers: Timers;
  /** Objects a list page asks for (default 500). */
  readonly pageSize?: number;
  /** Seconds a watch asks to last before it is renewed (default: random between 5 and 10 minutes, as client-go). */
  readonly watchSeconds?: () => number;
  /**
   * Back-off after the n-th failure in a row, in ms (default 1 s doubling to 30 s). A watch that
   * opens ends the row.
   */
  readonly backoffMs?: (attempt: number) => number;
}

export type Listener = () => void;
/** Every object event as it arrives (before `transform`): for views that need the whole object. */
export type ObjectListener = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject) => void;

class Gone extends Error {}

/** The pause before retry `attempt` (1, 2, ...) of a read that failed: 1 s doubling to `capMs`. */
export function backoffMs(attempt: number, capMs = 30_000): number {
  return Math.min(capMs, 1000 * 2 ** Math.max(0, attempt - 1));
}

const defaultBackoff = (attempt: number): number => backoffMs(attempt);

function joinQuery(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return `${path}${path.includes('?') ? '&' : '?'}${q}`;
}

export class Reflector<T> {
  /** The objects by `namespace/name`. Replaced, never mutated in place, on a new list. */
  items = new Map<string, T>();
  state: ReflectorState = { kind: 'idle' };
  /** The last resourceVersion seen ('' before the first list). */
  resourceVersion = '';
  /** Whether a list has completed since the start (the map is complete). */
  synced = false;

  private readonly options: ReflectorOptions<T>;
  private readonly listeners = new Set<Listener>();
  private readonly objectListeners = new Set<ObjectListener>();
  private abort: AbortController | undefined;
  private generation = 0;
  private sleeper: { handle: unknown; wake: () => void } | undefined;

  constructor(options: ReflectorOptions<T>) {
    this.options = options;
  }

  /** Called after each batch of changes and each change of state. Returns the unsubscriber. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribeObjects(listener: ObjectListener): () => void {
    this.objectListeners.add(listener);
    return () => this.objectListeners.delete(listener);
  }

  /** Starts listing and watching; a no-op while running. Never rejects (failures go to `state`). */
  start(): void {
    if (this.abort !== undefined) return;
    const generation = ++this.generation;
    const abort = new AbortController();
    this.abort = abort;
    void this.run(generation, abort.signal);
  }

  /** Stops the watch (the map and resourceVersion stay, for a later start()). Idempotent. */
  stop(): void {
    this.generation++;
    this.abort?.abort();
    this.abort = undefined;
    if (this.sleeper !== undefined) {
      this.options.timers.clearTimeout(this.sleeper.handle);
      this.sleeper.wake();
      this.sleeper = undefined;
    }
    this.setState({ kind: 'idle' });
  }

  get running(): boolean {
    return this.abort !== undefined;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private setState(state: ReflectorState): void {
    this.state = state;
    this.notify();
  }

  private async run(generation: number, signal: AbortSignal): Promise<void> {
    const current = (): boolean => generation === this.generation && !signal.aborted;
    let attempt = 0;
    let needList = this.resourceVersion === '';
    while (current()) {
      try {
        if (needList) {
          this.setState({ kind: 'listing' });
          await this.list(signal);
          needList = false;
        }
        // A watch that opened ends the row of failures, whatever ends it later (a dropped
        // connection, a browser's ERR_NETWORK_CHANGED): its resume waits the first back-off.
        await this.watch(signal, current, () => { attempt = 0; });
      } catch (err) {
        if (!current()) return;
        if (err instanceof Gone || (err instanceof ApiError && err.status === 410)) {
          needList = true;
          continue;
        }
        if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
          this.abort = undefined;
          this.setState({ kind: 'failed', error: err.message, status: err.status });
          return;
        }
        attempt++;
        const inMs = (this.options.backoffMs ?? defaultBackoff)(attempt);
        this.setState({ kind: 'retrying', error: err instanceof Error ? err.message : String(err), inMs });
        await this.sleep(inMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        this.sleeper = undefined;
        resolve();
      };
      this.sleeper = { handle: this.options.timers.setTimeout(wake, ms), wake };
    });
  }

  private async list(signal: AbortSignal): Promise<void> {
    const items = new Map<string, T>();
    let next = '';
    let resourceVersion = '';
    do {
      const query: Record<string, string> = { limit: String(this.options.pageSize ?? 500) };
      if (next !== '') query.continue = next;
      const page = await this.options.api.get<ListOf<KubeObject>>(joinQuery(this.options.path, query), signal);
      for (const object of page.items ?? []) {
        items.set(keyOf(object), this.options.transform(object));
        for (const l of this.objectListeners) l('ADDED', object);
      }
      next = page.metadata?.continue ?? '';
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (next !== '');
    if (signal.aborted) return;
    this.items = items;
    this.resourceVersion = resourceVersion;
    this.synced = true;
  }

  private async watch(signal: AbortSignal, current: () => boolean, opened: () => void): Promise<void> {
    const seconds = this.options.watchSeconds?.() ?? 300 + Math.floor(Math.random() * 300);
    const path = joinQuery(this.options.path, {
      watch: '1', allowWatchBookmarks: 'true', resourceVersion: this.resourceVersion, timeoutSeconds: String(seconds),
    });
    const reader = await this.options.api.stream(path, signal);
    if (!current()) return;
    opened();
    this.setState({ kind: 'live' });
    const lines = new LineSplitter();
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done || !current()) return;
        let changed = false;
        for (const line of lines.push(chunk.value)) {
          if (line.trim() === '') continue;
          changed = this.apply(JSON.parse(line) as WatchEvent) || changed;
        }
        if (changed) this.notify();
      }
    } finally {
      reader.releaseLock();
    }
  }

  /** Applies one watch event; whether the map changed. Throws Gone or ApiError on an ERROR event. */
  private apply(event: WatchEvent): boolean {
    const object = event.object;
    if (event.type === 'ERROR') {
      if (object.code === 410) throw new Gone(object.message ?? 'the resource version is too old');
      throw new ApiError(object.code ?? 500, object.reason ?? '', object.message ?? 'the watch failed');
    }
    const rv = object.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') this.resourceVersion = rv;
    if (event.type === 'BOOKMARK') return false;
    const key = keyOf(object);
    if (event.type === 'DELETED') this.items.delete(key);
    else this.items.set(key, this.options.transform(object));
    for (const l of this.objectListeners) l(event.type, object);
    return true;
  }
}
