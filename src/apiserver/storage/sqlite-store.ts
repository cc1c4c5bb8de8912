/**
 * The embedded store: one SQLite file (better-sqlite3) in WAL mode with synchronous=FULL, so an
 * acknowledged write survives kill -9 and power loss. The file is opened in exclusive locking
 * mode: one process owns it, and its watches are served from memory.
 *
 * Writes are group-committed: the writes that arrive in the same turn of the event loop run in
 * one transaction (one fsync), each with its own revision, in arrival order; they are
 * acknowledged, and their changes fanned out to the watchers, only after the commit. Watches
 * that start in the past first replay the recent changes kept in memory (sqlite-recent.ts) or,
 * when they start before those, the change log. A timer compacts the log (history of the
 * last N revisions and the last M milliseconds is kept) and another deletes expired objects.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isOrchError, messageOf, type OrchError } from '../../api/errors.js';
import { tooLarge, tooOld, unavailable } from './errors.js';
import type { KeyRange } from './keys.js';
import type { CasResult, KvBackend, KvChange, KvLifecycle, KvRecord, KvWatch, KvWatchSink, PutRequest, RangeRequest, RangeResult } from './kv.js';
import { KvStore } from './kv-store.js';
import { RecentChanges } from './sqlite-recent.js';
import { prepare, SCHEMA, type ChangeRow, type CurrentRow, type Statements } from './sqlite-schema.js';
import type { ManagedStore, StoreLogger, WatchIndex } from './types.js';
import { WatchFanout, type FanoutSubscriber } from './watch-fanout.js';

export interface SqliteStoreOptions {
  /** Directory of the database file (created if missing). */
  readonly dataDir: string;
  /** Default `orch-apiserver.db`. */
  readonly fileName?: string;
  /** Keep the change history of at least the last this many revisions (default 10 000). */
  readonly historyRevisions?: number;
  /** ... and of every change newer than this many milliseconds (default 5 minutes). */
  readonly historyMs?: number;
  /** How many of the latest changes are kept in memory for watches that resume (default 8192). */
  readonly recentChanges?: number;
  /** How often the change log is compacted (default 10 s). */
  readonly compactionIntervalMs?: number;
  /** How often expired objects are deleted (default 1 s). */
  readonly ttlSweepIntervalMs?: number;
  /** Interval of BOOKMARK events (default 1 s). */
  readonly bookmarkIntervalMs?: number;
  /** The clock of expiries and history retention, epoch milliseconds. */
  readonly now?: () => number;
  readonly log?: StoreLogger;
}

type Operation =
  | { readonly kind: 'put'; readonly request: PutRequest }
  | { readonly kind: 'remove'; readonly key: string; readonly expectedModRevision: number };

interface Pending {
  readonly operation: Operation;
  readonly resolve: (result: CasResult) => void;
  readonly reject: (err: unknown) => void;
}

const SWEEP_BATCH = 1000;

function changeOf(row: ChangeRow): KvChange {
  if (row.value === null) {
    return { type: 'delete', record: { key: row.key, value: row.prev_value ?? '{}', modRevision: row.rev } };
  }
  const record = { key: row.key, value: row.value, modRevision: row.rev };
  if (row.prev_value === null) return { type: 'put', record, created: true };
  return { type: 'put', record, created: false, previous: row.prev_value };
}

function sqliteFailure(err: unknown, what: string): OrchError {
  if (isOrchError(err)) return err;
  return unavailable(`storage: SQLite ${what} failed: ${messageOf(err)}`, 'sqlite', err);
}

class SqliteKv implements KvBackend, KvLifecycle {
  private readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly now: () => number;
  private readonly log: StoreLogger;
  private readonly historyRevisions: number;
  private readonly historyMs: number;
  private revisionNow: number;
  private compacted: number;
  private pending: Pending[] = [];
  private flushScheduled = false;
  private closed = false;
  private readonly watchers = new WatchFanout();
  private readonly recent: RecentChanges;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(db: Database.Database, options: SqliteStoreOptions) {
    this.db = db;
    this.sql = prepare(db);
    this.now = options.now ?? Date.now;
    this.log = options.log ?? ((message) => void process.stderr.write(`${message}\n`));
    this.historyRevisions = options.historyRevisions ?? 10_000;
    this.historyMs = options.historyMs ?? 5 * 60_000;
    this.recent = new RecentChanges(options.recentChanges ?? 8192);
    this.revisionNow = this.sql.readMeta.get('revision')?.value ?? 0;
    this.compacted = this.sql.readMeta.get('compacted')?.value ?? 0;
    const every = (ms: number, task: () => void): void => {
      const timer = setInterval(task, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(options.ttlSweepIntervalMs ?? 1000, () => {
      this.sweepExpired();
    });
    every(options.compactionIntervalMs ?? 10_000, () => {
      this.compactByRetention();
    });
  }

  get(key: string): Promise<KvRecord | undefined> {
    return this.read('get', () => {
      const row = this.sql.getObject.get(key);
      return row === undefined ? undefined : { key, value: row.value, modRevision: row.mod_rev };
    });
  }

  put(request: PutRequest): Promise<CasResult> {
    return this.enqueue({ kind: 'put', request });
  }

  remove(key: string, expectedModRevision: number): Promise<CasResult> {
    return this.enqueue({ kind: 'remove', key, expectedModRevision });
  }

  range(request: RangeRequest): Promise<RangeResult> {
    return this.read('range', () => {
      const current = this.revisionNow;
      const revision = request.revision === 0 ? current : request.revision;
      if (revision > current) throw tooLarge(revision, current);
      if (revision < this.compacted) throw tooOld(revision, this.compacted);
      const limit = request.limit === 0 ? -1 : request.limit;
      const params = { start: request.start, end: request.end, limit, rev: revision };
      const latest = revision === current;
      const rows = latest ? this.sql.rangeLatest.all(params) : this.sql.rangeAt.all(params);
      const records = rows.map((row) => ({ key: row.key, value: row.value, modRevision: row.mod_rev }));
      const last = records.at(-1);
      let remaining = 0;
      if (request.limit > 0 && last !== undefined && records.length === request.limit) {
        const rest = { start: `${last.key}\0`, end: request.end, rev: revision };
        remaining = (latest ? this.sql.countLatest.get(rest) : this.sql.countAt.get(rest))?.n ?? 0;
      }
      return { records, revision, remaining };
    });
  }

  watch(range: KeyRange, afterRevision: number | undefined, sink: KvWatchSink, index?: WatchIndex): Promise<{ watch: KvWatch; startRevision: number }> {
    return this.read('watch', () => {
      const start = afterRevision ?? this.revisionNow;
      if (start > this.revisionNow) throw tooLarge(start, this.revisionNow);
      if (start < this.compacted) throw tooOld(start, this.compacted);
      // Replay and subscribe in the same synchronous step: no commit can fall in between.
      if (start < this.revisionNow && !this.recent.replay(start, range, sink, index)) {
        for (const row of this.sql.changesAfter.iterate({ start: range.start, end: range.end, rev: start })) {
          sink.change(changeOf(row));
        }
      }
      const watcher: FanoutSubscriber = { start: range.start, end: range.end, sink, after: 0, index };
      this.watchers.add(watcher);
      const watch: KvWatch = {
        progressRevision: () => this.revisionNow,
        close: () => {
          this.watchers.delete(watcher);
          return Promise.resolve();
        },
      };
      return { watch, startRevision: start };
    });
  }

  revision(): Promise<number> {
    return this.read('revision', () => this.revisionNow);
  }

  compact(revision: number): Promise<number> {
    return this.read('compaction', () => this.compactTo(revision));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    for (const timer of this.timers) clearInterval(timer);
    this.flush();
    this.closed = true;
    for (const watcher of this.watchers.all()) watcher.sink.end();
    this.watchers.clear();
    this.db.close();
    return Promise.resolve();
  }

  private read<T>(what: string, body: () => T): Promise<T> {
    if (this.closed) return Promise.reject(unavailable('storage: the SQLite store is closed', 'sqlite'));
    try {
      return Promise.resolve(body());
    } catch (err) {
      return Promise.reject(sqliteFailure(err, what));
    }
  }

  private enqueue(operation: Operation): Promise<CasResult> {
    if (this.closed) return Promise.reject(unavailable('storage: the SQLite store is closed', 'sqlite'));
    return new Promise<CasResult>((resolve, reject) => {
      this.pending.push({ operation, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => {
        this.flush();
      });
    });
  }

  /** Commits every pending write in one transaction, then acknowledges and fans out. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const now = this.now();
    const changes: KvChange[] = [];
    let results: CasResult[];
    let revision = this.revisionNow;
    try {
      results = this.db.transaction(() => {
        const out = batch.map(({ operation }) => {
          const current = this.sql.getObject.get(operation.kind === 'put' ? operation.request.key : operation.key);
          const expected = operation.kind === 'put' ? operation.request.expectedModRevision : operation.expectedModRevision;
          if ((current?.mod_rev ?? 0) !== expected) {
            return { ok: false as const, current: current && { key: current.key, value: current.value, modRevision: current.mod_rev } };
          }
          revision += 1;
          changes.push(this.apply(operation, current, revision, now));
          return { ok: true as const, revision };
        });
        if (revision !== this.revisionNow) this.sql.writeMeta.run(revision, 'revision');
        return out;
      })();
    } catch (err) {
      const failure = sqliteFailure(err, 'write');
      for (const p of batch) p.reject(failure);
      return;
    }
    this.revisionNow = revision;
    for (const change of changes) {
      this.recent.add(change);
      this.watchers.dispatch(change);
    }
    batch.forEach((p, i) => {
      p.resolve(results[i] as CasResult);
    });
  }

  private apply(operation: Operation, current: CurrentRow | undefined, revision: number, now: number): KvChange {
    if (operation.kind === 'remove') {
      const last = current as CurrentRow;
      this.sql.deleteObject.run(operation.key);
      this.sql.appendChange.run(revision, operation.key, null, last.value, last.mod_rev, now);
      return { type: 'delete', record: { key: operation.key, value: last.value, modRevision: revision } };
    }
    const { key, value, ttlSeconds, keepTtl } = operation.request;
    const expiresAt = ttlSeconds !== undefined ? now + ttlSeconds * 1000 : keepTtl ? (current?.expires_at ?? null) : null;
    this.sql.upsertObject.run(key, value, revision, expiresAt);
    this.sql.appendChange.run(revision, key, value, current?.value ?? null, current?.mod_rev ?? null, now);
    if (current === undefined) return { type: 'put', record: { key, value, modRevision: revision }, created: true };
    return { type: 'put', record: { key, value, modRevision: revision }, created: false, previous: current.value };
  }

  /** Deletes expired objects through the ordinary write path, so that watchers see DELETED. */
  private sweepExpired(): void {
    if (this.closed) return;
    let rows;
    try {
      rows = this.sql.expired.all(this.now(), SWEEP_BATCH);
    } catch (err) {
      this.log(`storage: reading expired objects failed: ${messageOf(err)}`);
      return;
    }
    for (const row of rows) {
      // A write since the read changed mod_rev: the compare fails and the object stays.
      this.remove(row.key, row.mod_rev).catch((err: unknown) => {
        this.log(`storage: deleting expired ${row.key} failed: ${messageOf(err)}`);
      });
    }
  }

  private compactTo(revision: number): number {
    const target = Math.min(revision, this.revisionNow);
    if (target <= this.compacted) return this.compacted;
    this.db.transaction(() => {
      this.sql.compactChanges.run(target);
      this.sql.writeMeta.run(target, 'compacted');
    })();
    this.compacted = target;
    return target;
  }

  /** Discards the history that is both older than historyMs and beyond the last historyRevisions. */
  private compactByRetention(): void {
    if (this.closed) return;
    try {
      const byCount = this.revisionNow - this.historyRevisions;
      const firstKept = this.sql.firstChangeSince.get(this.compacted, this.now() - this.historyMs);
      const byAge = firstKept === undefined ? this.revisionNow : firstKept.rev - 1;
      const target = Math.min(byCount, byAge);
      if (target > this.compacted) this.compactTo(target);
    } catch (err) {
      this.log(`storage: compacting the change log failed: ${messageOf(err)}`);
    }
  }
}

/** Opens (creating if needed) the store's file. Throws unavailable when it cannot be opened or is locked by another process. */
export function openSqliteStore(options: SqliteStoreOptions): Promise<ManagedStore> {
  const path = join(options.dataDir, options.fileName ?? 'orch-apiserver.db');
  let db: Database.Database | undefined;
  try {
    mkdirSync(options.dataDir, { recursive: true });
    // Another process holding the file makes the open fail after this wait (ms).
    db = new Database(path, { timeout: 1000 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    const backend = new SqliteKv(db, options);
    const log = options.log ?? ((message: string) => void process.stderr.write(`${message}\n`));
    return Promise.resolve(new KvStore({ backend, bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000, log }));
  } catch (err) {
    db?.close();
    return Promise.reject(unavailable(`storage: cannot open the SQLite store ${path}: ${messageOf(err)}`, path, err));
  }
}
