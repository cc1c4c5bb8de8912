/**
 * Group commit of creates on etcd: creates that arrive while others are on their way go to etcd
 * together, as one transaction (every key's version must be 0; then every put), so that many
 * small writes (events, mostly) cost etcd one raft entry and one fsync instead of one each.
 *
 * Each caller still gets its own answer: when the grouped transaction's compare fails, its
 * failure branch reads every key, the callers whose key exists are answered with its state and
 * the rest go again as a group; when etcd rejects the transaction for a reason of one item (a
 * lease that expired), every item is sent again alone. The items of one transaction share its
 * revision, as etcd's do: a watch that resumes from that revision after seeing only some of them
 * misses the others, which is why the store groups only creates of objects with a TTL (Events,
 * best effort by nature). A key that appears twice waits for the next group (etcd refuses a
 * duplicate key in a transaction).
 */
import type { ICompare, IKeyValue, IRequestOp, ITxnRequest, ITxnResponse } from 'etcd3';
import { isOrchError } from '../../api/errors.js';
import type { CasResult, KvRecord } from './kv.js';

export interface CreateGroupOptions {
  /** Runs one transaction (errors already mapped to OrchError). */
  readonly txn: (request: ITxnRequest) => Promise<ITxnResponse>;
  /** One create alone: compare version 0, put, or the key's current state. */
  readonly single: (key: Buffer, put: IRequestOp) => Promise<CasResult>;
  /** The store's record of an etcd key-value. */
  readonly record: (kv: IKeyValue) => KvRecord;
  /** Most operations in one transaction (etcd's --max-txn-ops, default 128). */
  readonly maxOps?: number;
  /** Most value bytes in one transaction (below etcd's --max-request-bytes, 1.5 MiB). */
  readonly maxBytes?: number;
  /** Transactions of grouped creates on their way at once. */
  readonly maxInFlight?: number;
}

interface Item {
  readonly key: Buffer;
  readonly put: IRequestOp;
  readonly bytes: number;
  readonly resolve: (result: CasResult) => void;
  readonly reject: (err: unknown) => void;
}

/** A rejection that says nothing about the other items: each is tried alone. */
function itemSpecific(err: unknown): boolean {
  if (!isOrchError(err)) return true;
  return err.category !== 'unavailable' || /lease not found|duplicate key|too many operations|request is too large/i.test(err.message);
}

export class CreateGroup {
  private readonly options: CreateGroupOptions;
  private readonly maxOps: number;
  private readonly maxBytes: number;
  private readonly maxInFlight: number;
  private pending: Item[] = [];
  private inFlight = 0;
  private scheduled = false;
  private holding = false;
  /** Transactions sent with more than one create (for tests and the bench). */
  grouped = 0;

  constructor(options: CreateGroupOptions) {
    this.options = options;
    this.maxOps = options.maxOps ?? 128;
    this.maxBytes = options.maxBytes ?? 1024 * 1024;
    this.maxInFlight = options.maxInFlight ?? 2;
  }

  create(key: Buffer, put: IRequestOp, bytes: number): Promise<CasResult> {
    return new Promise<CasResult>((resolve, reject) => {
      this.pending.push({ key, put, bytes, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.holding || this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    this.scheduled = true;
    // The creates of this turn of the event loop join the group.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** The next group; `held`: a later create of one of its keys waits, and must not overtake it. */
  private take(): { batch: Item[]; held: boolean } {
    const batch: Item[] = [];
    const rest: Item[] = [];
    const keys = new Set<string>();
    let bytes = 0;
    let held = false;
    for (const item of this.pending) {
      const id = item.key.toString('latin1');
      const fits = batch.length < this.maxOps && (batch.length === 0 || bytes + item.bytes <= this.maxBytes);
      if (!fits || keys.has(id)) {
        held ||= keys.has(id);
        rest.push(item);
        continue;
      }
      keys.add(id);
      bytes += item.bytes;
      batch.push(item);
    }
    this.pending = rest;
    return { batch, held };
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.pending.length > 0 && !this.holding) {
      const { batch, held } = this.take();
      this.inFlight += 1;
      // A second create of a key goes only after the first was answered, so the first wins.
      if (held) this.holding = true;
      void this.commit(batch).finally(() => {
        this.inFlight -= 1;
        if (held) this.holding = false;
        this.schedule();
      });
    }
  }

  private async commit(batch: Item[]): Promise<void> {
    if (batch.length === 1) {
      const only = batch[0] as Item;
      await this.alone(only);
      return;
    }
    this.grouped += 1;
    const compare: ICompare[] = batch.map(({ key }) => ({ key, target: 'Version', result: 'Equal', version: 0 }));
    let response: ITxnResponse;
    try {
      response = await this.options.txn({ compare, success: batch.map((i) => i.put), failure: batch.map(({ key }) => ({ request_range: { key } })) });
    } catch (err) {
      if (!itemSpecific(err)) {
        for (const item of batch) item.reject(err);
        return;
      }
      await Promise.all(batch.map((item) => this.alone(item)));
      return;
    }
    if (!response.succeeded) {
      // Some keys exist: answer their callers, and try the others again together.
      const rest: Item[] = [];
      batch.forEach((item, i) => {
        const kv = response.responses[i]?.response_range.kvs[0];
        if (kv === undefined) rest.push(item);
        else item.resolve({ ok: false, current: this.options.record(kv) });
      });
      if (rest.length > 0) await this.commit(rest);
      return;
    }
    const revision = Number(response.header.revision);
    for (const item of batch) item.resolve({ ok: true, revision });
  }

  private async alone(item: Item): Promise<void> {
    try {
      item.resolve(await this.options.single(item.key, item.put));
    } catch (err) {
      item.reject(err);
    }
  }
}
