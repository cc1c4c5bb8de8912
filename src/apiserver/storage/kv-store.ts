/**
 * The Store semantics, written once over a revisioned key-value backend (kv.ts): preconditions,
 * guaranteed updates (read, mutate, compare-and-swap, retry), resourceVersion stamping, list
 * revisions and continue tokens, watch delivery with bookmarks.
 */
import { isGone } from '../../api/errors.js';
import { decodeRecord, decodeValue, encodeObject, uidOf } from './codec.js';
import {
  alreadyExists,
  conflict,
  continueExpired,
  invalid,
  notFound,
  StoreErrorCode,
  tooLarge,
  uidMismatch,
} from './errors.js';
import {
  checkKey,
  checkPrefix,
  decodeContinue,
  encodeContinue,
  parseResourceVersion,
  prefixRange,
  watchRange,
} from './keys.js';
import type { KvBackend, KvLifecycle, KvRecord } from './kv.js';
import type {
  CreateOptions,
  DeleteOptions,
  ListOptions,
  ListResult,
  ManagedStore,
  Mutation,
  StoredObject,
  StoreLogger,
  UpdateOptions,
  Watch,
  WatchOptions,
} from './types.js';
import { WatchStream } from './watch-stream.js';

export interface KvStoreOptions {
  readonly backend: KvBackend & KvLifecycle;
  /** Interval of BOOKMARK events for watches that ask for them. */
  readonly bookmarkIntervalMs: number;
  readonly log: StoreLogger;
}

function checkTtl(ttlSeconds: number | undefined, key: string): void {
  if (ttlSeconds === undefined) return;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw invalid(StoreErrorCode.invalidOption, `ttlSeconds for ${key} must be a positive integer, got ${ttlSeconds}`, key);
  }
}

export class KvStore implements ManagedStore {
  private readonly backend: KvBackend & KvLifecycle;
  private readonly options: KvStoreOptions;

  constructor(options: KvStoreOptions) {
    this.backend = options.backend;
    this.options = options;
  }

  async create(key: string, object: StoredObject, options: CreateOptions = {}): Promise<StoredObject> {
    checkKey(key);
    checkTtl(options.ttlSeconds, key);
    const value = encodeObject(key, object);
    const result = await this.backend.put({
      key,
      value,
      expectedModRevision: 0,
      ttlSeconds: options.ttlSeconds,
      keepTtl: false,
    });
    if (!result.ok) throw alreadyExists(key);
    return decodeValue(key, value, result.revision);
  }

  async get(key: string): Promise<StoredObject> {
    checkKey(key);
    const record = await this.backend.get(key);
    if (record === undefined) throw notFound(key);
    return decodeRecord(record);
  }

  async update(key: string, options: UpdateOptions, mutate: Mutation): Promise<StoredObject> {
    checkKey(key);
    checkTtl(options.ttlSeconds, key);
    const expected = options.expectedResourceVersion;
    parseResourceVersion(expected, 'expectedResourceVersion');
    const fromCache = await this.updateFromCache(key, options, mutate);
    if (fromCache !== undefined && fromCache.done !== undefined) return fromCache.done;
    let current = fromCache !== undefined ? fromCache.current : await this.backend.get(key);
    for (;;) {
      if (current === undefined) throw notFound(key);
      const currentRv = String(current.modRevision);
      if (expected !== undefined && expected !== currentRv) throw conflict(key, expected, currentRv);
      const next = await mutate(decodeRecord(current));
      const value = encodeObject(key, next);
      if (value === current.value && options.ttlSeconds === undefined) return decodeRecord(current);
      const result = await this.backend.put({
        key,
        value,
        expectedModRevision: current.modRevision,
        ttlSeconds: options.ttlSeconds,
        keepTtl: true,
      });
      if (result.ok) return decodeValue(key, value, result.revision);
      // Lost a race: try again from the state that won (a precondition then fails above).
      current = result.current;
    }
  }

  /**
   * The first try of an update from options.cachedExisting, as upstream's GuaranteedUpdate with
   * a cached existing object: mutate it and compare-and-swap at its revision, with no read.
   * Undefined: nothing was written and the caller reads afresh (no copy, or it failed the
   * precondition, changed nothing or made mutate throw: all of which a stale copy can cause);
   * `done`: written; `current`: the swap lost, and this is the state that won.
   */
  private async updateFromCache(key: string, options: UpdateOptions, mutate: Mutation): Promise<{ done?: StoredObject; current: KvRecord | undefined } | undefined> {
    const cached = options.cachedExisting;
    const metadata = cached?.metadata as { resourceVersion?: unknown } | undefined;
    const revision = Number(metadata?.resourceVersion);
    if (cached === undefined || !Number.isSafeInteger(revision) || revision <= 0) return undefined;
    if (options.expectedResourceVersion !== undefined && options.expectedResourceVersion !== String(revision)) return undefined;
    let before: string;
    let value: string;
    try {
      before = encodeObject(key, cached);
      value = encodeObject(key, await mutate(cached));
    } catch {
      return undefined;
    }
    if (value === before) return undefined;
    const result = await this.backend.put({ key, value, expectedModRevision: revision, ttlSeconds: options.ttlSeconds, keepTtl: true });
    return result.ok ? { done: decodeValue(key, value, result.revision), current: undefined } : { current: result.current };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<StoredObject> {
    checkKey(key);
    const expected = options.expectedResourceVersion;
    parseResourceVersion(expected, 'expectedResourceVersion');
    let current = await this.backend.get(key);
    for (;;) {
      if (current === undefined) throw notFound(key);
      this.checkDeletePreconditions(key, current, options);
      const result = await this.backend.remove(key, current.modRevision);
      if (result.ok) return decodeValue(key, current.value, result.revision);
      current = result.current;
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    checkPrefix(prefix);
    const limit = options.limit ?? 0;
    if (!Number.isInteger(limit) || limit < 0) {
      throw invalid(StoreErrorCode.invalidOption, `limit must be a non-negative integer, got ${limit}`, 'limit');
    }
    const range = prefixRange(prefix);
    let start = range.start;
    let revision = 0;
    let minimum = 0;
    const token = options.continue;
    if (token !== undefined && token !== '') {
      ({ revision, start } = decodeContinue(prefix, token));
    } else {
      const rv = parseResourceVersion(options.resourceVersion) ?? 0;
      const exact = options.resourceVersionMatch === 'Exact' || (options.resourceVersionMatch === undefined && limit > 0);
      if (options.resourceVersionMatch === 'Exact' && rv === 0) {
        throw invalid(StoreErrorCode.invalidOption, 'resourceVersionMatch Exact needs a resourceVersion other than 0', 'resourceVersion');
      }
      if (exact) revision = rv;
      else minimum = rv;
    }
    let result;
    try {
      result = await this.backend.range({ start, end: range.end, limit, revision });
    } catch (err) {
      if (token !== undefined && token !== '' && isGone(err)) throw continueExpired(revision);
      throw err;
    }
    if (result.revision < minimum) throw tooLarge(minimum, result.revision);
    const items = result.records.map(decodeRecord);
    const last = result.records.at(-1);
    if (limit === 0 || result.remaining === 0 || last === undefined) {
      return { items, resourceVersion: String(result.revision) };
    }
    return {
      items,
      resourceVersion: String(result.revision),
      continue: encodeContinue(prefix, last.key, result.revision),
      remainingItemCount: result.remaining,
    };
  }

  async watch(keyOrPrefix: string, options: WatchOptions): Promise<Watch> {
    const range = watchRange(keyOrPrefix);
    const after = parseResourceVersion(options.resourceVersion);
    const stream = new WatchStream({
      subject: keyOrPrefix,
      onEvent: options.onEvent,
      bookmarks: options.bookmarks === true,
      bookmarkIntervalMs: this.options.bookmarkIntervalMs,
      signal: options.signal,
      log: this.options.log,
    });
    try {
      const started = await this.backend.watch(range, after === 0 ? undefined : after, stream, options.index);
      stream.attach(started.watch, started.startRevision);
    } catch (err) {
      stream.abandon();
      throw err;
    }
    return stream;
  }

  async currentRevision(): Promise<string> {
    return String(await this.backend.revision());
  }

  async compact(revision?: string): Promise<string> {
    const target = parseResourceVersion(revision) ?? (await this.backend.revision());
    return String(await this.backend.compact(target));
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  private checkDeletePreconditions(key: string, current: KvRecord, options: DeleteOptions): void {
    const currentRv = String(current.modRevision);
    if (options.expectedResourceVersion !== undefined && options.expectedResourceVersion !== currentRv) {
      throw conflict(key, options.expectedResourceVersion, currentRv);
    }
    if (options.expectedUid !== undefined) {
      const uid = uidOf(decodeRecord(current));
      if (uid !== options.expectedUid) throw uidMismatch(key, options.expectedUid, uid);
    }
  }
}
