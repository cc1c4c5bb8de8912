/**
 * The FakeRestClient's history (fake-rest.ts): the revision counter, every write kept for lists
 * at a revision and for watches, compaction, and the open watches fed from it as orch-apiserver
 * feeds them: from a resourceVersion (the changes since replayed), without one (the current
 * objects first), through a selection (entering is ADDED, leaving is DELETED), and 410 Expired
 * from before a compaction. Test code only.
 */
import type { WatchEvent, WatchHandle } from './rest-types.js';
import { selects, type Obj, type Selection } from './fake-rest-rules.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One write, as the history keeps it. */
export interface Change {
  readonly rv: number;
  readonly key: string;
  readonly type: ChangeType;
  readonly object: Obj;
}

/** The end of a fake watch and its consumer (FakeWatch in fake-rest.ts). */
export interface WatchSink {
  readonly path: string;
  emit(event: WatchEvent<unknown>): void;
  finish(result: Awaited<WatchHandle['done']>): void;
}

/** A watch fed from the history: its selection, the keys it has shown as present, events held until its first ones are out. */
interface HistoryWatch {
  readonly sink: WatchSink;
  readonly selection: Selection;
  readonly shown: Set<string>;
  held: WatchEvent<unknown>[] | undefined;
}

export class FakeHistory {
  private rv = 100;
  private compactedRv = 0;
  private readonly changes: Change[] = [];
  private readonly open = new Map<WatchSink, HistoryWatch>();

  /** The revision of the last write. */
  get current(): number {
    return this.rv;
  }

  /** The first revision still in the history (watches and lists from before it are answered 410). */
  get compacted(): number {
    return this.compactedRv;
  }

  /** The revision of the next write. */
  next(): number {
    return ++this.rv;
  }

  compact(): void {
    this.compactedRv = this.rv;
  }

  /** Keeps `change` and sends it to the open watches (unless `silent`). */
  record(change: Change, silent: boolean): void {
    this.changes.push(change);
    if (!silent) for (const w of [...this.open.values()]) this.deliver(w, change);
  }

  /** The objects as they were at revision `rv`, given those of now. */
  stateAt(rv: number, now: ReadonlyMap<string, Obj>): Map<string, Obj> {
    if (rv >= this.rv) return new Map(now);
    const state = new Map<string, Obj>();
    for (const change of this.changes) {
      if (change.rv > rv) break;
      if (change.type === 'DELETED') state.delete(change.key);
      else state.set(change.key, change.object);
    }
    return state;
  }

  /** The open watches' sinks. */
  sinks(): WatchSink[] {
    return [...this.open.keys()];
  }

  close(sink: WatchSink): void {
    this.open.delete(sink);
  }

  /** Opens a watch from `from` ('' or '0': the objects of `now` first; else the changes after it, or 410 when compacted). */
  watch(sink: WatchSink, selection: Selection, from: string, now: ReadonlyMap<string, Obj>): void {
    const w: HistoryWatch = { sink, selection, shown: new Set(), held: undefined };
    this.open.set(sink, w);
    const events: WatchEvent<unknown>[] = [];
    if (from === '' || from === '0') {
      for (const [key, o] of now) {
        if (!selects(sink.path, selection, key, o)) continue;
        w.shown.add(key);
        events.push({ type: 'ADDED', object: structuredClone(o) });
      }
    } else if (Number(from) < this.compactedRv) {
      events.push({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 410, reason: 'Expired', message: `too old resource version: ${from} (${this.compactedRv})` } });
    } else {
      for (const [key, o] of this.stateAt(Number(from), now)) if (selects(sink.path, selection, key, o)) w.shown.add(key);
      w.held = events;
      for (const change of this.changes) if (change.rv > Number(from)) this.deliver(w, change);
    }
    if (events.length === 0) {
      w.held = undefined;
      return;
    }
    // The first events come a turn later, as over a connection; changes meanwhile wait behind them.
    w.held = events;
    queueMicrotask(() => {
      const held = w.held ?? [];
      w.held = undefined;
      for (const event of held) {
        sink.emit(event);
        if (event.type === 'ERROR') sink.finish({ reason: 'closed' });
      }
    });
  }

  /** Sends `change` to `w` as its selection sees it: entering is ADDED, leaving is DELETED. */
  private deliver(w: HistoryWatch, change: Change): void {
    const now = change.type !== 'DELETED' && selects(w.sink.path, w.selection, change.key, change.object);
    const was = w.shown.has(change.key);
    let type: ChangeType | undefined;
    if (now) type = was && change.type !== 'ADDED' ? 'MODIFIED' : 'ADDED';
    else if (was) type = 'DELETED';
    if (type === undefined) return;
    if (now) w.shown.add(change.key);
    else w.shown.delete(change.key);
    const event = { type, object: structuredClone(change.object) };
    if (w.held !== undefined) w.held.push(event);
    else w.sink.emit(event);
  }
}
