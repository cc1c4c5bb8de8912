/**
 * The SQLite store's most recent changes, in memory, in revision order: a watch that resumes
 * from a revision they cover is replayed from here instead of the change log. Reading the log
 * means scanning the key range's whole retained history (its index is by key, then revision)
 * and decoding every change once per resuming watcher; here a replay visits only the changes
 * after the revision, skips those a watcher's index rules out, and each change is decoded once
 * for every watcher that replays it.
 *
 * The ring keeps records of its own (not the ones fanned out to live watchers), so that an
 * object decoded for a live watcher is not kept alive by the ring.
 */
import { decodeShared, decodeValue } from './codec.js';
import type { KeyRange } from './keys.js';
import type { KvChange, KvWatchSink } from './kv.js';
import type { WatchIndex } from './types.js';

interface IndexValues {
  /** The index value after the change, before it; undefined: unknown (the change concerns every value). */
  readonly now: string | undefined;
  readonly before: string | undefined;
}

export class RecentChanges {
  private readonly ring: (KvChange | undefined)[];
  private next = 0;
  private size = 0;
  /** Per change, per index name: its values, computed once for every watcher of that index. */
  private readonly indexValues = new WeakMap<KvChange, Map<string, IndexValues>>();

  constructor(capacity: number) {
    this.ring = new Array<KvChange | undefined>(Math.max(1, capacity)).fill(undefined);
  }

  /** Appends a committed change (revisions increase by one from one call to the next). */
  add(change: KvChange): void {
    const copy: KvChange = change.type === 'delete'
      ? { type: 'delete', record: { ...change.record } }
      : { type: 'put', record: { ...change.record }, created: change.created, previous: change.previous };
    this.ring[this.next] = copy;
    this.next = (this.next + 1) % this.ring.length;
    this.size = Math.min(this.size + 1, this.ring.length);
  }

  /**
   * Passes every change after `revision` in `range` (and, with an index, those of objects whose
   * value is the index's before or after the change) to the sink, in order. Returns false, and
   * passes nothing, when the ring does not hold every change after `revision`.
   */
  replay(revision: number, range: KeyRange, sink: KvWatchSink, index: WatchIndex | undefined): boolean {
    const oldest = this.at(0);
    if (oldest === undefined || oldest.record.modRevision > revision + 1) return false;
    for (let i = revision + 1 - oldest.record.modRevision; i < this.size; i++) {
      const change = this.at(i) as KvChange;
      const key = change.record.key;
      if (key < range.start || key >= range.end) continue;
      if (index !== undefined && !this.concerns(index, change)) continue;
      sink.change(change);
    }
    return true;
  }

  private at(i: number): KvChange | undefined {
    if (i >= this.size) return undefined;
    return this.ring[(this.next - this.size + i + this.ring.length) % this.ring.length];
  }

  private concerns(index: WatchIndex, change: KvChange): boolean {
    let byName = this.indexValues.get(change);
    if (byName === undefined) {
      byName = new Map();
      this.indexValues.set(change, byName);
    }
    let values = byName.get(index.name);
    if (values === undefined) {
      const now = valueOf(index, () => decodeShared(change.record));
      const before = change.type === 'put' && !change.created
        ? (change.previous === undefined ? undefined : valueOf(index, () => decodeValue(change.record.key, change.previous as string, change.record.modRevision)))
        : now;
      values = { now, before };
      byName.set(index.name, values);
    }
    if (values.now === undefined || values.before === undefined) return true;
    return values.now === index.value || values.before === index.value;
  }
}

/** The index value of an object; undefined when the index function throws (any value). */
function valueOf(index: WatchIndex, object: () => ReturnType<typeof decodeShared>): string | undefined {
  try {
    return index.of(object());
  } catch {
    return undefined;
  }
}
