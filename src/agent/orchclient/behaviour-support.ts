/**
 * Helpers of the REST behaviour suite (behaviour.ts): what an API server under test must offer
 * (the harness), one test case's namespace, paths and objects, watch recording and error
 * assertions. Test code only.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { waitFor } from '../../../test/helpers/wait.js';
import type { RestCallOptions, RestClient, WatchEvent, WatchHandle } from './rest-types.js';
import { statusOf } from './status.js';

/** One API server under test, for one test case. */
export interface RestHarness {
  /** A client allowed to do everything. */
  readonly rest: RestClient;
  /** A namespace that exists and is this case's alone. */
  readonly namespace: string;
  /**
   * Makes the history up to `resourceVersion` unavailable (a compaction): resolves once a watch
   * from it would be refused as expired. Only on a harness made with `compacting`.
   */
  compact(resourceVersion: string): Promise<void>;
  /** Removes what the case left behind. */
  cleanup(): Promise<void>;
}

export interface RestHarnessOptions {
  /** The case compacts the history (the server under test may need to be one that compacts often). */
  readonly compacting?: boolean;
}

/** Makes a harness for one test case. */
export type RestFactory = (options: RestHarnessOptions) => Promise<RestHarness>;

export type Obj = Record<string, unknown>;

export const meta = (o: unknown): Obj => ((o as Obj | undefined)?.metadata ?? {}) as Obj;
export const nameOf = (o: unknown): string => String(meta(o).name);
export const rvOf = (o: unknown): string => String(meta(o).resourceVersion);
export const uidOf = (o: unknown): string => String(meta(o).uid);

/** The label every object of one case carries, with a value of that case only: lists select by it. */
export const CASE_LABEL = 'rest-behaviour/case';

/** The failure an error must be: HTTP code, Status reason, and optionally the object named in details. */
export interface ExpectedFailure {
  readonly code: number;
  readonly reason: string;
  readonly name?: string;
}

/** Asserts that `promise` rejects with the REST client's error for `expected`. */
export async function rejectsWith(promise: Promise<unknown>, expected: ExpectedFailure, what: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    const status = statusOf(err);
    assert.ok(status !== undefined, `${what}: not an API error: ${String(err)}`);
    assert.deepEqual({ code: status.code, reason: status.reason }, { code: expected.code, reason: expected.reason }, `${what}: ${status.message ?? ''}`);
    if (expected.name !== undefined) assert.equal(status.details?.name, expected.name, `${what}: the Status names the object`);
    assert.ok((status.message ?? '') !== '', `${what}: the Status has a message`);
    return true;
  }, what);
}

/** A watch recording its events as `TYPE name`, and how it ended. */
export interface RecordedWatch {
  readonly events: WatchEvent<Obj>[];
  readonly handle: WatchHandle;
  /** `TYPE name` of the events that are not bookmarks. */
  lines(): string[];
  /** Waits until at least `count` events (bookmarks aside) came. */
  waitForLines(count: number): Promise<string[]>;
}

/** One test case: its harness, namespace, label and paths. */
export class RestCase {
  readonly rest: RestClient;
  readonly namespace: string;
  /** CASE_LABEL's value for this case. */
  readonly id = randomUUID().slice(0, 8);
  private readonly watches: WatchHandle[] = [];

  constructor(readonly harness: RestHarness) {
    this.rest = harness.rest;
    this.namespace = harness.namespace;
  }

  get configmaps(): string {
    return `/api/v1/namespaces/${this.namespace}/configmaps`;
  }

  get pods(): string {
    return `/api/v1/namespaces/${this.namespace}/pods`;
  }

  /** A name unique to this case (nodes are cluster-scoped: shared by every case). */
  unique(name: string): string {
    return `${name}-${this.id}`;
  }

  /** The case's label selector, with more terms after it. */
  selector(...more: string[]): string {
    return [`${CASE_LABEL}=${this.id}`, ...more].join(',');
  }

  configMap(name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}): Obj {
    return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { [CASE_LABEL]: this.id, ...labels } }, data };
  }

  /** A valid pod, bound to `node` when given (or to none). */
  pod(name: string, node?: string, labels: Record<string, string> = {}): Obj {
    return {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { [CASE_LABEL]: this.id, ...labels } },
      spec: { ...(node === undefined ? {} : { nodeName: node }), containers: [{ name: 'main', image: 'busybox:1.35' }] },
    };
  }

  node(name: string): Obj {
    return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { [CASE_LABEL]: this.id } } };
  }

  /** The names of a list's items, sorted. */
  async names(path: string, query: RestCallOptions['query'] = {}): Promise<string[]> {
    return (await this.rest.list<Obj>(path, { query })).items.map(nameOf).sort();
  }

  /** Opens a watch that records its events; stopped by close(). */
  watch(path: string, query: NonNullable<RestCallOptions['query']>): RecordedWatch {
    const events: WatchEvent<Obj>[] = [];
    const handle = this.rest.watch<Obj>(path, (e) => events.push(e), { query });
    this.watches.push(handle);
    const lines = (): string[] => events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.type === 'ERROR' ? String(e.object.code) : nameOf(e.object)}`);
    return {
      events, handle, lines,
      waitForLines: (count) => waitFor(`${count} watch events on ${path}`, () => (lines().length >= count ? lines() : undefined), { timeoutMs: 20_000, intervalMs: 20 }),
    };
  }

  /** Stops the case's watches, then the harness cleans up. */
  async close(): Promise<void> {
    for (const w of this.watches) w.stop();
    await Promise.all(this.watches.map((w) => w.done));
    await this.harness.cleanup();
  }
}

/** Runs `body` on a fresh case of a harness made by `make`, closing it whatever happens. */
export async function withCase(make: RestFactory, body: (c: RestCase) => Promise<void>, options: RestHarnessOptions = {}): Promise<void> {
  const c = new RestCase(await make(options));
  try {
    await body(c);
  } finally {
    await c.close();
  }
}
