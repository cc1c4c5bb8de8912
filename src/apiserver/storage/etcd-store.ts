/**
 * The store on an etcd cluster (etcd3 client, etcd 3.4+). resourceVersion is etcd's revision: an
 * object's mod revision, a list's read revision. Objects are stored as JSON without
 * resourceVersion under `<prefix><key>`.
 *
 * - create: a transaction that puts only if the key's version is 0; creates with a TTL (Events,
 *   the bulk of the writes) that arrive together share one transaction (etcd-create-group.ts),
 *   and so one revision;
 * - update and delete: transactions that compare the key's mod revision with the one read; on
 *   failure the same transaction returns the current state, so a retry needs no extra read;
 * - list: a range with a limit; later pages read at the first page's revision (compacted: gone);
 * - watch: an etcd watch from resourceVersion + 1 (etcd-watch.ts), shared by the watchers of a
 *   top-level prefix (etcd-watch-hub.ts);
 * - TTL: leases (etcd-leases.ts), never kept alive;
 * - compaction: every compactionIntervalMs, compacts to the revision seen one interval earlier,
 *   as kube-apiserver does, so history covers at least one interval.
 * Every failure to reach etcd (down, no quorum, deadline) is OrchError `unavailable`.
 * Unary calls and watches use two clients, each on a connection of its own (etcd-clients.ts).
 */
import { GRPCInvalidArgumentError, type ICompare, type IKeyValue, type IRequestOp } from 'etcd3';
import { isOrchError, messageOf, OrchError } from '../../api/errors.js';
import { internal, invalid, StoreErrorCode, tooLarge, tooOld, unavailable } from './errors.js';
import { CreateGroup } from './etcd-create-group.js';
import { openEtcdClients, type EtcdClients } from './etcd-clients.js';
import type { EtcdFaultOptions } from './etcd-faults.js';
import { LeasePool, type EtcdLeaseMode } from './etcd-leases.js';
import { EtcdWatchHub } from './etcd-watch-hub.js';
import type { KeyRange } from './keys.js';
import type { CasResult, KvBackend, KvLifecycle, KvRecord, KvWatch, KvWatchSink, PutRequest, RangeRequest, RangeResult } from './kv.js';
import { KvStore } from './kv-store.js';
import type { ManagedStore, StoreLogger, WatchIndex } from './types.js';

export type { EtcdLeaseMode } from './etcd-leases.js';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`. */
  readonly endpoints: readonly string[];
  /** Prefix of every etcd key (kube-apiserver's --etcd-prefix); default `/registry`. */
  readonly prefix?: string;
  /** Deadline of each etcd request (default 5 s). */
  readonly requestTimeoutMs?: number;
  /** How objects with a TTL get leases (default `shared`, see etcd-leases.ts). */
  readonly leaseMode?: EtcdLeaseMode;
  /** Interval of the periodic compaction (default 5 minutes; 0 disables it). */
  readonly compactionIntervalMs?: number;
  /** Interval of BOOKMARK events (default 1 s). */
  readonly bookmarkIntervalMs?: number;
  readonly now?: () => number;
  readonly log?: StoreLogger;
  /** The client's retries and per-member breaker (etcd-faults.ts). */
  readonly faults?: EtcdFaultOptions;
}

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

/** Maps what etcd3 throws to OrchError; `revision` is the revision the request read at, if any. */
function etcdFailure(err: unknown, what: string, revision = 0): OrchError {
  if (isOrchError(err)) return err;
  const message = messageOf(err);
  if (message.includes('required revision has been compacted')) return tooOld(revision, 0);
  if (message.includes('required revision is a future revision')) return tooLarge(revision, 0);
  if (err instanceof GRPCInvalidArgumentError) return internal(`storage: etcd rejected ${what}: ${message}`, 'etcd', err);
  return unavailable(`storage: etcd ${what} failed: ${message}`, 'etcd', err);
}

class EtcdKv implements KvBackend, KvLifecycle {
  private readonly clients: EtcdClients;
  /** The unary client (clients.unary). */
  private readonly client: EtcdClients['unary'];
  private readonly prefix: string;
  private readonly leases: LeasePool;
  private readonly hub: EtcdWatchHub;
  private readonly creates: CreateGroup;
  private readonly log: StoreLogger;
  private readonly timeoutMs: number;
  private readonly watches = new Set<{ watch: KvWatch; sink: KvWatchSink }>();
  private readonly timer: NodeJS.Timeout | undefined;
  private compactNext = 0;
  private closed = false;

  constructor(options: EtcdStoreOptions) {
    this.prefix = options.prefix ?? '/registry';
    this.timeoutMs = options.requestTimeoutMs ?? 5000;
    this.log = options.log ?? ((message) => void process.stderr.write(`${message}\n`));
    this.clients = openEtcdClients({ endpoints: options.endpoints, requestTimeoutMs: this.timeoutMs, ...(options.faults === undefined ? {} : { faults: options.faults }) });
    this.client = this.clients.unary;
    this.leases = new LeasePool({ client: this.client.leaseClient, mode: options.leaseMode ?? 'shared', now: options.now ?? Date.now });
    this.creates = new CreateGroup({
      txn: (txn) => this.call('transaction', () => this.client.kv.txn(txn)),
      single: (key, put) => this.compareAndSwap(key, 0, put),
      record: (kv) => this.record(kv),
    });
    this.hub = new EtcdWatchHub({ client: this.clients.watch, keyPrefix: this.prefix, log: this.log, timeoutMs: this.timeoutMs });
    const interval = options.compactionIntervalMs ?? 5 * 60_000;
    if (interval > 0) {
      this.timer = setInterval(() => {
        this.compactPeriodically().catch((err: unknown) => {
          this.log(`storage: periodic etcd compaction failed: ${messageOf(err)}`);
        });
      }, interval);
      this.timer.unref();
    }
  }

  async get(key: string): Promise<KvRecord | undefined> {
    const response = await this.call('get', () => this.client.kv.range({ key: utf8(this.prefix + key) }));
    const kv = response.kvs[0];
    return kv === undefined ? undefined : this.record(kv);
  }

  async put(request: PutRequest): Promise<CasResult> {
    const key = utf8(this.prefix + request.key);
    let lease: string | undefined;
    if (request.ttlSeconds !== undefined) {
      const ttl = request.ttlSeconds;
      lease = await this.call('lease grant', () => this.leases.leaseFor(ttl));
    }
    const keep = lease === undefined && request.keepTtl && request.expectedModRevision !== 0;
    const put: IRequestOp = { request_put: keep ? { key, value: utf8(request.value), ignore_lease: true } : { key, value: utf8(request.value), lease: lease ?? 0 } };
    try {
      // Creates with a TTL (Events) go together (etcd-create-group.ts).
      if (request.expectedModRevision === 0 && lease !== undefined) return await this.creates.create(key, put, key.length + request.value.length);
      return await this.compareAndSwap(key, request.expectedModRevision, put);
    } catch (err) {
      if (lease === undefined || !messageOf(err).includes('requested lease not found')) throw err;
      // A shared lease expired or was revoked under us: get a fresh one, once.
      this.leases.forget(lease);
      return this.put(request);
    }
  }

  remove(key: string, expectedModRevision: number): Promise<CasResult> {
    const etcdKey = utf8(this.prefix + key);
    return this.compareAndSwap(etcdKey, expectedModRevision, { request_delete_range: { key: etcdKey } });
  }

  async range(request: RangeRequest): Promise<RangeResult> {
    const response = await this.call(
      'range',
      () =>
        this.client.kv.range({
          key: utf8(this.prefix + request.start),
          range_end: utf8(this.prefix + request.end),
          limit: request.limit,
          revision: request.revision,
        }),
      request.revision,
    );
    const records = response.kvs.map((kv) => this.record(kv));
    const revision = request.revision === 0 ? Number(response.header.revision) : request.revision;
    const remaining = request.limit > 0 ? Number(response.count) - records.length : 0;
    return { records, revision, remaining };
  }

  async watch(range: KeyRange, afterRevision: number | undefined, sink: KvWatchSink, index?: WatchIndex): Promise<{ watch: KvWatch; startRevision: number }> {
    if (this.closed) throw unavailable('storage: the etcd store is closed', 'etcd');
    if (afterRevision !== undefined) {
      // A read at that revision fails the same way the watch would: compacted, or in the future.
      await this.call('watch', () => this.client.kv.range({ key: utf8(this.prefix), revision: afterRevision, count_only: true }), afterRevision);
    }
    const started = await this.hub.watch(range, afterRevision, sink, index);
    const inner = started.watch;
    const entry = { watch: inner, sink };
    this.watches.add(entry);
    return {
      startRevision: started.startRevision,
      watch: {
        progressRevision: () => inner.progressRevision(),
        close: () => {
          this.watches.delete(entry);
          return inner.close();
        },
      },
    };
  }

  async revision(): Promise<number> {
    const response = await this.call('revision', () => this.client.kv.range({ key: utf8(this.prefix), count_only: true }));
    return Number(response.header.revision);
  }

  async compact(revision: number): Promise<number> {
    const current = await this.revision();
    const target = Math.min(revision, current);
    try {
      await this.client.kv.compact({ revision: target, physical: true });
    } catch (err) {
      // Compacting to a revision at or before the last compaction is already done.
      if (!messageOf(err).includes('required revision has been compacted')) throw etcdFailure(err, 'compaction');
    }
    return target;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const watches = [...this.watches];
    this.watches.clear();
    await Promise.all(watches.map(async ({ watch, sink }) => {
      await watch.close();
      sink.end();
    }));
    await this.hub.close();
    this.clients.close();
  }

  private async compactPeriodically(): Promise<void> {
    const now = await this.revision();
    if (this.compactNext > 0) await this.compact(this.compactNext);
    this.compactNext = now;
  }

  private async compareAndSwap(key: Buffer, expectedModRevision: number, operation: IRequestOp): Promise<CasResult> {
    const compare: ICompare =
      expectedModRevision === 0
        ? { key, target: 'Version', result: 'Equal', version: 0 }
        : { key, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision };
    const response = await this.call('transaction', () =>
      this.client.kv.txn({ compare: [compare], success: [operation], failure: [{ request_range: { key } }] }),
    );
    if (response.succeeded) return { ok: true, revision: Number(response.header.revision) };
    const kv = response.responses[0]?.response_range.kvs[0];
    return { ok: false, current: kv === undefined ? undefined : this.record(kv) };
  }

  private record(kv: IKeyValue): KvRecord {
    return { key: kv.key.toString('utf8').slice(this.prefix.length), value: kv.value.toString('utf8'), modRevision: Number(kv.mod_revision) };
  }

  private async call<T>(what: string, body: () => Promise<T>, revision = 0): Promise<T> {
    if (this.closed) throw unavailable('storage: the etcd store is closed', 'etcd');
    try {
      return await body();
    } catch (err) {
      throw etcdFailure(err, what, revision);
    }
  }
}

/** Connects to etcd (lazily: an unreachable cluster shows as `unavailable` on the first request). */
export function openEtcdStore(options: EtcdStoreOptions): Promise<ManagedStore> {
  const prefix = options.prefix ?? '/registry';
  if (options.endpoints.length === 0 || (prefix !== '' && (!prefix.startsWith('/') || prefix.endsWith('/')))) {
    return Promise.reject(invalid(StoreErrorCode.invalidOption, `etcd store: want endpoints and a prefix like /registry, got ${JSON.stringify(options)}`, 'etcd'));
  }
  const backend = new EtcdKv(options);
  const log = options.log ?? ((message: string) => void process.stderr.write(`${message}\n`));
  return Promise.resolve(new KvStore({ backend, bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000, log }));
}
