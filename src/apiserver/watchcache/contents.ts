/**
 * The objects of one cached resource at one revision: each object kept as its encoded JSON in a
 * Buffer (off V8's heap; decoded again on every read, so readers get objects of their own), the
 * keys in sorted order (lists answer in key order without sorting), and indexes made on demand
 * (pods by spec.nodeName: a node's list reads its pods, not every pod).
 */
import type { StoredObject, WatchIndex } from '../storage/index.js';

/** Indexes kept per cached resource at most; a list naming another one scans. */
const MAX_INDEXES = 8;

interface Index {
  readonly of: (object: StoredObject) => string;
  /** Keys by value; '' also holds the objects whose `of` threw (they match every value). */
  readonly byValue: Map<string, Set<string>>;
  readonly valueOf: Map<string, string>;
  /** Keys whose `of` threw: returned for every value. */
  readonly any: Set<string>;
}

/**
 * The encoded object in a Buffer of its own: Buffer.from() puts small ones in shared 8 KiB
 * slabs, and a slab stays alive while any object in it does (replaced objects would pin them).
 */
function encode(object: StoredObject): Buffer {
  const text = JSON.stringify(object);
  const json = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  json.write(text, 'utf8');
  return json;
}

function decode(json: Buffer): StoredObject {
  return JSON.parse(json.toString('utf8')) as StoredObject;
}

/** The first position in `keys` (sorted) not before `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class CacheContents {
  private readonly objects = new Map<string, Buffer>();
  private readonly keys: string[] = [];
  private readonly indexes = new Map<string, Index>();

  get size(): number {
    return this.objects.size;
  }

  /** Bytes of encoded JSON held. */
  bytes(): number {
    let total = 0;
    for (const json of this.objects.values()) total += json.length;
    return total;
  }

  /** Drops everything and holds `items` (a list's result, in any order). */
  replace(items: readonly { key: string; object: StoredObject }[]): void {
    this.objects.clear();
    this.keys.length = 0;
    this.indexes.clear();
    for (const { key, object } of items) this.objects.set(key, encode(object));
    this.keys.push(...this.objects.keys());
    this.keys.sort();
  }

  /** Adds or replaces the object at `key` (decoded already: the watch event's). */
  put(key: string, object: StoredObject): void {
    const json = encode(object);
    if (!this.objects.has(key)) this.keys.splice(lowerBound(this.keys, key), 0, key);
    this.objects.set(key, json);
    for (const index of this.indexes.values()) this.indexPut(index, key, object);
  }

  remove(key: string): void {
    if (!this.objects.delete(key)) return;
    const at = lowerBound(this.keys, key);
    if (this.keys[at] === key) this.keys.splice(at, 1);
    for (const index of this.indexes.values()) this.indexRemove(index, key);
  }

  /** A copy of the object at `key`, or undefined. */
  get(key: string): StoredObject | undefined {
    const json = this.objects.get(key);
    return json === undefined ? undefined : decode(json);
  }

  /**
   * Copies of the objects under `prefix` in key order; with `index`, only those whose index
   * value is `index.value` (or whose value could not be computed).
   */
  list(prefix: string, index?: WatchIndex): StoredObject[] {
    const indexed = index === undefined ? undefined : this.indexFor(index);
    if (indexed !== undefined && index !== undefined) {
      const keys = [...(indexed.byValue.get(index.value) ?? []), ...indexed.any].filter((k) => k.startsWith(prefix)).sort();
      return keys.map((k) => decode(this.objects.get(k) as Buffer));
    }
    const items: StoredObject[] = [];
    for (let i = lowerBound(this.keys, prefix); i < this.keys.length; i++) {
      const key = this.keys[i] as string;
      if (!key.startsWith(prefix)) break;
      items.push(decode(this.objects.get(key) as Buffer));
    }
    return items;
  }

  /** The index named by `hint`, made now from every object when it is new (undefined past MAX_INDEXES). */
  private indexFor(hint: WatchIndex): Index | undefined {
    const found = this.indexes.get(hint.name);
    if (found !== undefined) return found;
    if (this.indexes.size >= MAX_INDEXES) return undefined;
    const index: Index = { of: hint.of, byValue: new Map(), valueOf: new Map(), any: new Set() };
    for (const [key, json] of this.objects) this.indexPut(index, key, decode(json));
    this.indexes.set(hint.name, index);
    return index;
  }

  private indexPut(index: Index, key: string, object: StoredObject): void {
    let value: string | undefined;
    try {
      value = index.of(object);
    } catch {
      value = undefined;
    }
    const before = index.valueOf.get(key);
    if (value !== undefined && before === value) return;
    this.indexRemove(index, key);
    if (value === undefined) {
      index.any.add(key);
      return;
    }
    index.valueOf.set(key, value);
    let keys = index.byValue.get(value);
    if (keys === undefined) {
      keys = new Set();
      index.byValue.set(value, keys);
    }
    keys.add(key);
  }

  private indexRemove(index: Index, key: string): void {
    index.any.delete(key);
    const before = index.valueOf.get(key);
    if (before === undefined) return;
    index.valueOf.delete(key);
    const keys = index.byValue.get(before);
    keys?.delete(key);
    if (keys?.size === 0) index.byValue.delete(before);
  }
}
