/**
 * The isomorphic-event cache that folds repeats into series, after upstream's events
 * broadcaster (client-go tools/events):
 *
 * | occurrence of an isomorphic event     | cache                          | write                         |
 * |---------------------------------------|--------------------------------|-------------------------------|
 * | first (or first after the window)     | stored, no series              | create                        |
 * | second, within the window             | series {count 2, lastObserved} | patch of series (create if gone) |
 * | third and later, within the window    | count+1, lastObservedTime      | none (sent by a heartbeat or at the end) |
 *
 * The window is FINISH_MS (6 min) after the last occurrence. heartbeat() (every 30 min,
 * REFRESH_MS) re-sends every open series, which also renews the events' time to live on the
 * server; sweep() (every 6 min) ends series idle for 6 min, sending their final count when it
 * changed since the last write, and forgets single events older than 6 min. An occurrence
 * that arrives after its entry's window ended starts a new event (and ends the old series
 * first). The cache keeps at most `maxEntries`, forgetting the least recent (ending its series).
 *
 * Owns no timers and does no I/O: it returns the writes to send, as copies.
 */
import { formatMicroTime } from '../../api/time.js';
import { copyEvent, isomorphismKey, type EventObject } from './event-object.js';

export const FINISH_MS = 6 * 60_000;
export const REFRESH_MS = 30 * 60_000;
export const DEFAULT_MAX_CACHE_ENTRIES = 4096;

interface Entry {
  readonly key: string;
  readonly event: EventObject;
  /** When it was last observed (ms). */
  lastMs: number;
  /** The count last handed out as a write (1 for the create). */
  sentCount: number;
}

export interface SeriesCache {
  /** Records one occurrence at `nowMs`; returns the writes to send (0, 1 or 2: an ended series' final count, then the new write). */
  observe(event: EventObject, nowMs: number): EventObject[];
  /** Ends idle series and forgets old single events; returns the final series writes. */
  sweep(nowMs: number): EventObject[];
  /** The series writes of every open series (the 30-minute heartbeat). */
  heartbeat(): EventObject[];
  /** Ends every open series (stop): the series writes whose count was not sent yet; empties the cache. */
  drain(): EventObject[];
  readonly size: number;
}

function countOf(e: EventObject): number {
  return e.series?.count ?? 1;
}

export function createSeriesCache(options: { readonly maxEntries?: number } = {}): SeriesCache {
  const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_MAX_CACHE_ENTRIES);
  // Insertion order is kept least recently observed first (entries are re-inserted on use).
  const entries = new Map<string, Entry>();

  function unsentFinal(entry: Entry): EventObject[] {
    if (entry.event.series === undefined || entry.event.series.count <= entry.sentCount) return [];
    entry.sentCount = entry.event.series.count;
    return [copyEvent(entry.event)];
  }

  function end(entry: Entry): EventObject[] {
    entries.delete(entry.key);
    return unsentFinal(entry);
  }

  function touch(entry: Entry): void {
    entries.delete(entry.key);
    entries.set(entry.key, entry);
  }

  return {
    observe(event, nowMs) {
      const key = isomorphismKey(event);
      const writes: EventObject[] = [];
      const found = entries.get(key);
      if (found !== undefined && nowMs - found.lastMs <= FINISH_MS) {
        found.lastMs = nowMs;
        touch(found);
        const series = found.event.series;
        if (series !== undefined) {
          series.count += 1;
          series.lastObservedTime = formatMicroTime(nowMs);
          return writes;
        }
        found.event.series = { count: 2, lastObservedTime: formatMicroTime(nowMs) };
        found.sentCount = 2;
        writes.push(copyEvent(found.event));
        return writes;
      }
      if (found !== undefined) writes.push(...end(found));
      while (entries.size >= maxEntries) {
        const oldest = entries.values().next().value;
        if (oldest === undefined) break;
        writes.push(...end(oldest));
      }
      const stored = copyEvent(event);
      delete stored.series;
      entries.set(key, { key, event: stored, lastMs: nowMs, sentCount: 1 });
      writes.push(copyEvent(stored));
      return writes;
    },

    sweep(nowMs) {
      const writes: EventObject[] = [];
      for (const entry of [...entries.values()]) {
        if (nowMs - entry.lastMs > FINISH_MS) writes.push(...end(entry));
      }
      return writes;
    },

    heartbeat() {
      const writes: EventObject[] = [];
      for (const entry of entries.values()) {
        if (entry.event.series === undefined) continue;
        entry.sentCount = countOf(entry.event);
        writes.push(copyEvent(entry.event));
      }
      return writes;
    },

    drain() {
      const writes: EventObject[] = [];
      for (const entry of [...entries.values()]) writes.push(...end(entry));
      return writes;
    },

    get size() {
      return entries.size;
    },
  };
}
