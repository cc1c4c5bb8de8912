/**
 * The in-process fan-out of a backend's changes to its store watchers (SQLite's watchers, and
 * the watchers riding on one shared etcd watch).
 *
 * A watcher may name an index (WatchIndex: a function of the object and the value it wants).
 * Watchers of one index are kept by value, so a change reaches only those whose value the
 * object had before or has after it: the index function runs once or twice per change, not once
 * per watcher. Watchers without an index get every change in their key range.
 */
import { decodeShared, decodeValue } from './codec.js';
import type { KeyRange } from './keys.js';
import type { KvChange, KvWatchSink } from './kv.js';
import type { StoredObject, WatchIndex } from './types.js';

export interface FanoutSubscriber extends KeyRange {
  readonly sink: KvWatchSink;
  /** Changes at or before this revision are not for this subscriber (0: every change). */
  readonly after: number;
  readonly index?: WatchIndex | undefined;
}

interface IndexEntry {
  readonly of: (object: StoredObject) => string;
  readonly byValue: Map<string, Set<FanoutSubscriber>>;
  size: number;
}

/** `/pods/default/web` -> `/pods/`: indexes are kept per top-level prefix (one resource). */
export function topOf(key: string): string {
  const second = key.indexOf('/', 1);
  return second < 0 ? `${key}/` : key.slice(0, second + 1);
}

/** The index value of an object; a function that throws gives no value (every watcher of the index gets the change). */
function valueOf(of: (object: StoredObject) => string, object: StoredObject): string | undefined {
  try {
    return of(object);
  } catch {
    return undefined;
  }
}

export class WatchFanout {
  private readonly plain = new Set<FanoutSubscriber>();
  /** top-level prefix -> index name -> entry. */
  private readonly indexes = new Map<string, Map<string, IndexEntry>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(subscriber: FanoutSubscriber): void {
    this.count += 1;
    const index = subscriber.index;
    if (index === undefined) {
      this.plain.add(subscriber);
      return;
    }
    const top = topOf(subscriber.start);
    let byName = this.indexes.get(top);
    if (byName === undefined) {
      byName = new Map();
      this.indexes.set(top, byName);
    }
    let entry = byName.get(index.name);
    if (entry === undefined) {
      entry = { of: index.of, byValue: new Map(), size: 0 };
      byName.set(index.name, entry);
    }
    let set = entry.byValue.get(index.value);
    if (set === undefined) {
      set = new Set();
      entry.byValue.set(index.value, set);
    }
    set.add(subscriber);
    entry.size += 1;
  }

  /** Returns whether it was there. */
  delete(subscriber: FanoutSubscriber): boolean {
    const index = subscriber.index;
    if (index === undefined) {
      if (!this.plain.delete(subscriber)) return false;
      this.count -= 1;
      return true;
    }
    const top = topOf(subscriber.start);
    const byName = this.indexes.get(top);
    const entry = byName?.get(index.name);
    const set = entry?.byValue.get(index.value);
    if (byName === undefined || entry === undefined || set === undefined || !set.delete(subscriber)) return false;
    this.count -= 1;
    entry.size -= 1;
    if (set.size === 0) entry.byValue.delete(index.value);
    if (entry.size === 0) byName.delete(index.name);
    if (byName.size === 0) this.indexes.delete(top);
    return true;
  }

  /** Every subscriber, for ending them all. */
  all(): FanoutSubscriber[] {
    const out = [...this.plain];
    for (const byName of this.indexes.values()) {
      for (const entry of byName.values()) {
        for (const set of entry.byValue.values()) out.push(...set);
      }
    }
    return out;
  }

  clear(): void {
    this.plain.clear();
    this.indexes.clear();
    this.count = 0;
  }

  /** Passes a change to every subscriber that may need it. */
  dispatch(change: KvChange): void {
    const { key, modRevision } = change.record;
    const wants = (s: FanoutSubscriber): boolean => modRevision > s.after && key >= s.start && key < s.end;
    for (const s of this.plain) {
      if (wants(s)) s.sink.change(change);
    }
    if (this.indexes.size === 0) return;
    const byName = this.indexes.get(topOf(key));
    if (byName === undefined) return;
    for (const entry of byName.values()) {
      for (const s of this.indexed(entry, change)) {
        if (wants(s)) s.sink.change(change);
      }
    }
  }

  /** The subscribers of one index that a change concerns: the object's value before and after it. */
  private indexed(entry: IndexEntry, change: KvChange): Iterable<FanoutSubscriber> {
    const now = valueOf(entry.of, decodeShared(change.record));
    let before: string | undefined;
    if (change.type === 'put' && !change.created) {
      // An update whose previous state is unknown (etcd no longer has it) goes to every watcher of the index.
      if (change.previous === undefined) return this.everyone(entry);
      before = valueOf(entry.of, decodeValue(change.record.key, change.previous, change.record.modRevision));
      if (before === undefined) return this.everyone(entry);
    }
    if (now === undefined) return this.everyone(entry);
    const first = entry.byValue.get(now);
    const second = before === undefined || before === now ? undefined : entry.byValue.get(before);
    if (second === undefined) return first ?? [];
    if (first === undefined) return second;
    return [...first, ...second];
  }

  private everyone(entry: IndexEntry): FanoutSubscriber[] {
    const out: FanoutSubscriber[] = [];
    for (const set of entry.byValue.values()) out.push(...set);
    return out;
  }
}
