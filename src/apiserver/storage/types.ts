/**
 * The contract of the storage layer (see index.ts for what the module owns). Semantics follow
 * Kubernetes' storage.Interface: one global revision that every write increments (on etcd,
 * creates with a TTL committed together share one), objects that
 * carry the revision of their last write as `metadata.resourceVersion`, optimistic concurrency on
 * that resourceVersion, consistent paging and watches that resume from a resourceVersion.
 *
 * Keys and prefixes:
 * - a key names one object: `/pods/default/web`; it starts with `/`, has no empty segment and
 *   does not end with `/`;
 * - a prefix names a set of keys: `/pods/` (all namespaces) or `/pods/default/`; it ends with `/`.
 */
import type { OrchError } from '../../api/errors.js';

/** A plain JSON object; `metadata` (when present) is a JSON object too. */
export type StoredObject = Record<string, unknown>;

export interface CreateOptions {
  /** The object is deleted (with a DELETED event) about this many seconds after the write. */
  readonly ttlSeconds?: number;
}

export interface UpdateOptions {
  /** Fail with a conflict unless the stored object still has this resourceVersion. */
  readonly expectedResourceVersion?: string;
  /** A new time to live from now; absent keeps the object's current expiry (or none). */
  readonly ttlSeconds?: number;
  /**
   * The object as the caller believes it is now, with its resourceVersion (upstream's
   * cachedExistingObject: the watch cache's copy). The update may start from it instead of
   * reading the store: a stale copy costs one failed compare-and-swap, and a precondition, an
   * unchanged result or a mutation error met on it is tried again from a fresh read, so the
   * outcome is the same as without it. Mutated freely (give a copy of its own).
   */
  readonly cachedExisting?: StoredObject;
}

export interface DeleteOptions {
  /** Fail with a conflict unless the stored object still has this resourceVersion. */
  readonly expectedResourceVersion?: string;
  /** Fail with a conflict unless the stored object's `metadata.uid` is this. */
  readonly expectedUid?: string;
}

export interface GetOptions {
  /**
   * Absent or "": the current object (a consistent read). "0": any state, possibly stale (a
   * watch cache answers from memory). "N": a state not older than N. A store without a cache
   * reads the current object for all three (it is at least as new as N once N was written).
   */
  readonly resourceVersion?: string;
}

/** How `resourceVersion` of a list is read (Kubernetes' resourceVersionMatch). */
export type ResourceVersionMatch = 'NotOlderThan' | 'Exact';

export interface ListOptions {
  /** Maximum number of items; 0 or absent lists everything in one page. */
  readonly limit?: number;
  /** The token of the previous page; the page is read at the first page's revision. */
  readonly continue?: string;
  /**
   * Absent, "" or "0": the most recent state. "N" with `NotOlderThan`: the most recent state,
   * which must be at least N. "N" with `Exact`, or "N" with a limit and no match: the state at N.
   */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: ResourceVersionMatch;
  /**
   * A hint: only objects whose index value is `index.value` are wanted (others may be returned;
   * the caller filters in any case). A watch cache answers from its index instead of a scan.
   */
  readonly index?: WatchIndex | undefined;
}

export interface ListResult {
  /** In key order, each with `metadata.resourceVersion` of its last write. */
  readonly items: StoredObject[];
  /** The revision the list was read at. */
  readonly resourceVersion: string;
  /** Present when more items follow; pass it back as `continue`. */
  readonly continue?: string;
  /** With `continue`: how many items follow this page at the list's revision. */
  readonly remainingItemCount?: number;
  /**
   * The store ignored `limit` and returned every item, without continue: a watch cache serving
   * resourceVersion "0" (as upstream's does); the caller must not page through this result.
   */
  readonly limitIgnored?: boolean;
}

export type WatchEvent =
  /** `object` carries the revision of the change; DELETED carries the last state and the deletion revision. */
  | {
    readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: StoredObject;
    /**
     * MODIFIED: the object before the change (decoded on the first call, once for every watcher
     * of the change); absent when the backend no longer has it. A selector watch decides from it
     * whether the object matched before, as upstream's watch cache does with prevObject.
     */
    readonly previous?: () => StoredObject;
  }
  /** Every change up to `resourceVersion` that matches the watch has been delivered. */
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string }
  /** The watch cannot go on (for example its history was compacted: category gone); it ends after this. */
  | { readonly type: 'ERROR'; readonly error: OrchError };

/**
 * Lets the store skip a watcher for changes it does not need: the watcher wants only objects
 * for which `of` gives `value`, before or after a change. Watchers that name the same index (per
 * top-level prefix) must give the same `of`; it runs once per change for all of them.
 */
export interface WatchIndex {
  readonly name: string;
  readonly value: string;
  /** Pure and cheap; a throw counts as "any value". */
  readonly of: (object: StoredObject) => string;
}

export interface WatchOptions {
  /** Events strictly after this revision; absent, "" or "0" means from now. */
  readonly resourceVersion?: string;
  /** Ask for periodic BOOKMARK events (interval set when the store is opened). */
  readonly bookmarks?: boolean;
  /** Aborting it closes the watch. */
  readonly signal?: AbortSignal;
  /**
   * Called in revision order, never concurrently, never before watch() resolved, never after
   * close() was called. The objects are shared between the watchers of a change: treat them as
   * read-only. A throwing callback ends the watch (and is logged).
   */
  readonly onEvent: (event: WatchEvent) => void;
  /**
   * Delivers only the changes of objects whose index value is the given one before or after the
   * change (others may be left out; a watcher filters what it receives in any case).
   */
  readonly index?: WatchIndex | undefined;
}

export interface Watch {
  /** The revision the watch started after (the given one, or the current one for "from now"). */
  readonly resourceVersion: string;
  /** Stops delivery; idempotent; resolves when no event will be delivered any more. */
  close(): Promise<void>;
  /** With bookmarks on: a BOOKMARK now, after the changes delivered so far (no-op otherwise). */
  bookmark(): void;
  /** Resolves (never rejects) when the watch ended for any reason: close, abort, ERROR, store closed. */
  readonly done: Promise<void>;
}

/**
 * Computes the next state of an object from its current state (which it may modify and return).
 * It may be called several times when concurrent writers race; throwing aborts the update.
 */
export type Mutation = (current: StoredObject) => StoredObject | Promise<StoredObject>;

/** The operations the generic registry uses. Every method may throw OrchError `unavailable`. */
export interface Store {
  /** Stores a new object. Throws already-exists. Not idempotent. */
  create(key: string, object: StoredObject, options?: CreateOptions): Promise<StoredObject>;
  /** The object (the current one unless a watch cache serves `resourceVersion`). Throws not-found, timeout (future revision). */
  get(key: string, options?: GetOptions): Promise<StoredObject>;
  /** Items under a prefix, in key order. Throws gone (compacted revision or expired continue), timeout (future revision). */
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  /**
   * Read, mutate, compare-and-swap; retried on races unless `expectedResourceVersion` is set.
   * A mutation that changes nothing (and no ttlSeconds) writes nothing and returns the current
   * object. Throws not-found, conflict (precondition), whatever the mutation throws.
   */
  update(key: string, options: UpdateOptions, mutate: Mutation): Promise<StoredObject>;
  /** Deletes and returns the last state with the deletion's revision. Throws not-found, conflict. */
  delete(key: string, options?: DeleteOptions): Promise<StoredObject>;
  /**
   * Watches one key, or every key under a prefix. Resolves once the watch is established. Throws
   * gone (STORE_RV_TOO_OLD) when the history after `resourceVersion` was compacted.
   */
  watch(keyOrPrefix: string, options: WatchOptions): Promise<Watch>;
}

/** What the composition root needs besides the operations. */
export interface StoreLifecycle {
  /** The revision of the latest write (the resourceVersion a list would have now). */
  currentRevision(): Promise<string>;
  /**
   * Discards history before `revision` (default: the current revision): reads at, and watches
   * from, an older revision then fail with gone. Returns the compacted revision.
   */
  compact(revision?: string): Promise<string>;
  /** Ends every watch, waits for acknowledged writes, releases files and connections. Idempotent. */
  close(): Promise<void>;
}

export type ManagedStore = Store & StoreLifecycle;

/** Where a store writes diagnostics (a watcher callback that threw, a failed TTL sweep). */
export type StoreLogger = (message: string) => void;
