/**
 * Shares etcd watches between store watchers, as kube-apiserver's watch cache does: every watch
 * under the same top-level prefix (`/pods/…`, whether on `/pods/`, `/pods/ns1/` or one pod)
 * rides on one etcd watch of that prefix, and changes are filtered and fanned out in process.
 * With many watchers this saves etcd one stream per watcher and the client one gRPC message and
 * one JSON parse per watcher per change.
 *
 * A watcher can join a shared etcd watch when it starts at or after the revision up to which
 * that etcd watch has delivered everything (its position), or not long before: the shared watch
 * keeps its last changes (RECENT_CHANGES), and a watcher that starts within them gets the ones
 * after its start first. In a busy cluster the position moves on between a client's list and
 * its watch, so without them nearly every watch (each node's pod watch) would get an etcd watch
 * of its own and decode every change of the resource again. An older start gets its own etcd
 * watch. The shared etcd watch stops when its last watcher leaves.
 */
import type { Etcd3 } from 'etcd3';
import type { OrchError } from '../../api/errors.js';
import { startEtcdWatch } from './etcd-watch.js';
import { prefixRange, type KeyRange } from './keys.js';
import type { KvChange, KvWatch, KvWatchSink } from './kv.js';
import type { StoreLogger, WatchIndex } from './types.js';
import { topOf, WatchFanout, type FanoutSubscriber } from './watch-fanout.js';

export interface EtcdWatchHubOptions {
  readonly client: Etcd3;
  readonly keyPrefix: string;
  readonly log: StoreLogger;
  readonly timeoutMs: number;
}

/** Changes a shared watch keeps for watchers that start a little behind it. */
export const RECENT_CHANGES = 4096;

/** One etcd watch of a top-level prefix and the store watchers riding on it. */
class SharedWatch implements KvWatchSink {
  readonly subscribers = new WatchFanout();
  watch: KvWatch | undefined;
  /** Every change after `floor` is in `recent` (from index `head`), in revision order. */
  private recent: KvChange[] = [];
  private head = 0;
  private floor = Number.MAX_SAFE_INTEGER;
  /** Set once it fails, ends or stops: no watcher may join any more. */
  ended = false;
  private readonly onEnded: () => void;

  constructor(onEnded: () => void) {
    this.onEnded = onEnded;
  }

  /** Every change up to this revision has been passed on. */
  position(): number {
    return this.watch?.progressRevision() ?? 0;
  }

  /** The etcd watch started: every change after `revision` comes through change(). */
  started(watch: KvWatch, revision: number): void {
    this.watch = watch;
    this.floor = revision;
  }

  change(change: KvChange): void {
    this.recent.push(change);
    if (this.recent.length - this.head > RECENT_CHANGES) {
      this.floor = (this.recent[this.head] as KvChange).record.modRevision;
      this.head += 1;
      if (this.head > RECENT_CHANGES) {
        this.recent = this.recent.slice(this.head);
        this.head = 0;
      }
    }
    this.subscribers.dispatch(change);
  }

  /** Whether every change after `revision` is still kept. */
  covers(revision: number): boolean {
    return revision >= this.floor;
  }

  /** Passes the kept changes after the subscriber's start to it (before it joins). */
  replay(s: FanoutSubscriber): void {
    for (let i = this.head; i < this.recent.length; i++) {
      const change = this.recent[i] as KvChange;
      const { key, modRevision } = change.record;
      if (modRevision > s.after && key >= s.start && key < s.end) s.sink.change(change);
    }
  }

  fail(error: OrchError): void {
    this.finish((s) => {
      s.sink.fail(error);
    });
  }

  end(): void {
    this.finish((s) => {
      s.sink.end();
    });
  }

  private finish(tell: (s: FanoutSubscriber) => void): void {
    this.ended = true;
    this.onEnded();
    for (const s of this.subscribers.all()) tell(s);
    this.subscribers.clear();
  }
}

interface Entry {
  readonly shared: SharedWatch;
  /** Resolves once the etcd watch is created; rejects when it cannot be. */
  readonly ready: Promise<void>;
}

/** `/pods/default/web` and `/pods/default/` -> `/pods/`. */
function topPrefix(range: KeyRange): string {
  return topOf(range.start);
}

export class EtcdWatchHub {
  private readonly options: EtcdWatchHubOptions;
  private readonly entries = new Map<string, Entry>();

  constructor(options: EtcdWatchHubOptions) {
    this.options = options;
  }

  async watch(range: KeyRange, afterRevision: number | undefined, sink: KvWatchSink, index?: WatchIndex): Promise<{ watch: KvWatch; startRevision: number }> {
    const top = topPrefix(range);
    let entry = this.entries.get(top);
    if (entry === undefined || entry.shared.ended) entry = this.startShared(top, afterRevision);
    await entry.ready;
    const shared = entry.shared;
    const position = shared.position();
    const behind = afterRevision !== undefined && afterRevision < position;
    if (shared.ended || (behind && !shared.covers(afterRevision))) {
      // Too old for the shared watch (or it just ended): a watch of its own.
      if (!shared.ended && shared.subscribers.size === 0) await this.stopShared(top, entry);
      return startEtcdWatch({ ...this.options, range, afterRevision, sink });
    }
    const subscriber: FanoutSubscriber = { start: range.start, end: range.end, sink, after: afterRevision ?? position, index };
    // In the same synchronous step as the join: no change can come in between.
    if (behind) shared.replay(subscriber);
    shared.subscribers.add(subscriber);
    const watch: KvWatch = {
      progressRevision: () => shared.position(),
      close: async () => {
        if (!shared.subscribers.delete(subscriber)) return;
        if (shared.subscribers.size === 0) await this.stopShared(top, entry);
      },
    };
    return { watch, startRevision: subscriber.after };
  }

  /** Ends every watcher (store closing). */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      all.map(async ({ shared, ready }) => {
        try {
          await ready;
        } catch {
          // It never started: the watch() call that started it received the error.
          return;
        }
        shared.end();
        await shared.watch?.close();
      }),
    );
  }

  private startShared(top: string, afterRevision: number | undefined): Entry {
    const shared: SharedWatch = new SharedWatch(() => {
      if (this.entries.get(top)?.shared === shared) this.entries.delete(top);
    });
    const ready = startEtcdWatch({ ...this.options, range: prefixRange(top), afterRevision, sink: shared }).then(
      (started) => {
        shared.started(started.watch, started.startRevision);
      },
      (err: unknown) => {
        shared.ended = true;
        if (this.entries.get(top) === entry) this.entries.delete(top);
        throw err;
      },
    );
    const entry: Entry = { shared, ready };
    this.entries.set(top, entry);
    return entry;
  }

  private async stopShared(top: string, entry: Entry): Promise<void> {
    entry.shared.ended = true;
    if (this.entries.get(top) === entry) this.entries.delete(top);
    await entry.shared.watch?.close();
  }
}
