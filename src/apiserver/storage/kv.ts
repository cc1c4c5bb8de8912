/**
 * The small revisioned key-value contract that both backends (SQLite, etcd) implement, and on
 * which kv-store.ts builds the Store semantics once: preconditions, guaranteed updates, JSON
 * encoding, resourceVersion stamping, paging tokens and watch delivery. Internal to the module.
 *
 * Revisions are positive integers; 0 means "no revision" (a key that does not exist, or "latest").
 */
import type { OrchError } from '../../api/errors.js';
import type { KeyRange } from './keys.js';
import type { WatchIndex } from './types.js';

export interface KvRecord {
  readonly key: string;
  /** The object as JSON, without metadata.resourceVersion. */
  readonly value: string;
  /** The revision of the write that produced this value (for a deletion: the deletion's). */
  readonly modRevision: number;
}

export type CasResult =
  | { readonly ok: true; readonly revision: number }
  /** The compare failed; `current` is the key's state at that moment (undefined: absent). */
  | { readonly ok: false; readonly current: KvRecord | undefined };

export interface PutRequest {
  readonly key: string;
  readonly value: string;
  /** The write happens only if the key's modRevision is this; 0: only if the key is absent. */
  readonly expectedModRevision: number;
  /** Expire the key this many seconds from now; undefined: see keepTtl. */
  readonly ttlSeconds: number | undefined;
  /** Without ttlSeconds: true keeps the key's current expiry, false removes it. */
  readonly keepTtl: boolean;
}

export interface RangeRequest extends KeyRange {
  /** 0: no limit. */
  readonly limit: number;
  /** 0: the latest revision. */
  readonly revision: number;
}

export interface RangeResult {
  readonly records: KvRecord[];
  /** The revision the range was read at. */
  readonly revision: number;
  /** How many keys of the range follow the returned ones (0 without a limit). */
  readonly remaining: number;
}

export type KvChange =
  /** `previous`: the value before the change (absent for a creation, or when the backend no longer has it). */
  | { readonly type: 'put'; readonly record: KvRecord; readonly created: boolean; readonly previous?: string | undefined }
  /** `record` holds the last value and the deletion's revision. */
  | { readonly type: 'delete'; readonly record: KvRecord };

/** Receives the changes of one backend watch, in revision order. */
export interface KvWatchSink {
  change(change: KvChange): void;
  /** The watch cannot continue; no call follows. */
  fail(error: OrchError): void;
  /** The backend shut down (store closed); no call follows. */
  end(): void;
}

export interface KvWatch {
  /** A revision up to which every matching change has been passed to the sink. */
  progressRevision(): number;
  /** Stops the watch; idempotent. */
  close(): Promise<void>;
}

export interface KvBackend {
  get(key: string): Promise<KvRecord | undefined>;
  /** Compare-and-put on the key's modRevision. */
  put(request: PutRequest): Promise<CasResult>;
  /** Compare-and-delete on the key's modRevision. */
  remove(key: string, expectedModRevision: number): Promise<CasResult>;
  /** Throws gone (STORE_RV_TOO_OLD) for a compacted revision, timeout for a future one. */
  range(request: RangeRequest): Promise<RangeResult>;
  /**
   * Passes changes in `range` strictly after `afterRevision` (undefined: from now) to `sink`.
   * Throws gone when that history was compacted. Returns the revision it started after. With an
   * index, changes whose object has another value before and after may be left out.
   */
  watch(range: KeyRange, afterRevision: number | undefined, sink: KvWatchSink, index?: WatchIndex): Promise<{ watch: KvWatch; startRevision: number }>;
}

export interface KvLifecycle {
  revision(): Promise<number>;
  /** Discards history before `revision`; returns the compacted revision. */
  compact(revision: number): Promise<number>;
  close(): Promise<void>;
}
