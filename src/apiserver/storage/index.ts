/**
 * storage: the persistence layer of orch-apiserver, with the semantics of Kubernetes'
 * storage.Interface.
 *
 * Owns: JSON objects stored by key (`/pods/default/web`), one global revision incremented by
 * every write and reported as `metadata.resourceVersion`, optimistic concurrency on it,
 * guaranteed updates, consistent paged lists (continue tokens read at the first page's
 * revision), watches that resume from a resourceVersion with bookmarks, history compaction and
 * time-to-live expiry. Two implementations pass one conformance suite (conformance.ts):
 * - SQLite (`openSqliteStore`): embedded default, durable, watches served from memory;
 * - etcd (`openEtcdStore`): resourceVersion = etcd revision, watches from etcd.
 *
 * Must not: know HTTP, resource types, validation, defaulting, field or label selectors,
 * namespaces beyond key prefixes, or uid/creationTimestamp (the registry sets those). It never
 * interprets objects except `metadata.resourceVersion` (overwritten on the way out, never stored)
 * and `metadata.uid` (the delete precondition).
 *
 * Errors are OrchError with codes in `StoreErrorCode`: not-found, already-exists, conflict,
 * gone (compacted history), timeout (future resourceVersion), invalid, unavailable.
 */
export type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListResult,
  ManagedStore,
  Mutation,
  ResourceVersionMatch,
  Store,
  StoredObject,
  StoreLifecycle,
  StoreLogger,
  UpdateOptions,
  Watch,
  WatchEvent,
  WatchIndex,
  WatchOptions,
} from './types.js';
export { StoreErrorCode, type StoreErrorCodeValue } from './errors.js';
export { openSqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export type { EtcdStoreOptions, EtcdLeaseMode } from './etcd-store.js';
export { openEtcdStore } from './etcd-open.js';
