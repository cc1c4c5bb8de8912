/**
 * Storage benchmark: both Store implementations next to raw etcd, measured in the same run on a
 * fresh single-member etcd and a fresh SQLite file.
 *
 * - create rate of ~1 KiB event-like objects with a TTL at a fixed concurrency, next to the raw
 *   etcd3 put rate of the same bytes at the same concurrency (rounds interleaved, medians);
 * - watch delivery latency (write start -> onEvent) with many watchers, next to raw etcd3 watchers;
 * - a paged list of many objects, next to a raw paged etcd range.
 *
 * Run: `npm run build && node dist/bench/store.js` (figures vary with the disk and the CPU).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Etcd3 } from 'etcd3';
import {
  openEtcdStore,
  openSqliteStore,
  type EtcdLeaseMode,
  type ManagedStore,
  type StoredObject,
} from '../src/apiserver/storage/index.js';
import { startEtcd } from '../test/helpers/etcd.js';

export interface StoreBenchOptions {
  /** Objects per create-rate measurement (default 5000). */
  readonly creates?: number;
  /** Create-rate rounds; the median is reported (default 3). */
  readonly rounds?: number;
  readonly concurrency?: number;
  readonly watchers?: number;
  /** Writes observed by the watchers (default 400). */
  readonly watchWrites?: number;
  readonly listObjects?: number;
  readonly pageSize?: number;
  readonly ttlSeconds?: number;
  readonly print?: (line: string) => void;
}

export interface StoreBenchRow {
  readonly measure: string;
  readonly subject: string;
  readonly value: number;
  readonly unit: string;
}

/** An Event of events.orch.io/v1 padded to about 1 KiB of JSON. */
export function eventObject(i: number): StoredObject {
  const event: StoredObject = {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name: `web-7d4b9c8f6d-x2x9z.${(1_700_000_000_000 + i).toString(16)}`, namespace: 'bench', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
    eventTime: '2024-05-01T10:00:00.000000Z',
    action: 'Pulling',
    reason: 'Pulling',
    note: '',
    regarding: { kind: 'Pod', namespace: 'bench', name: 'web-7d4b9c8f6d-x2x9z', uid: '6f1f4c3e-2b7a-4a8e-9d3c-1e2f3a4b5c6d', apiVersion: 'v1', resourceVersion: '12345', fieldPath: 'spec.containers{web}' },
    reportingController: 'orch.io/nodeagent',
    reportingInstance: 'node-1',
    type: 'Normal',
  };
  event.note = `Pulling image "registry.local:5000/web:1.2.${i}" `.padEnd(1024 - JSON.stringify(event).length, '.');
  return event;
}

function keyOf(i: number): string {
  return `/events/bench/e${String(i).padStart(7, '0')}`;
}

/** Runs `task(i)` for i in [0, total) with `concurrency` in flight; returns operations per second. */
async function rate(total: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) await task(i);
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

/** Latency from write start to delivery, over every (write, watcher) pair. */
async function storeWatchLatency(store: ManagedStore, watchers: number, writes: number, base: number): Promise<number[]> {
  const started = new Map<string, number>();
  const samples: number[] = [];
  const watches = await Promise.all(
    Array.from({ length: watchers }, () =>
      store.watch('/events/bench/', {
        onEvent: (event) => {
          if (event.type !== 'ADDED') return;
          const name = keyOf(Number((event.object.metadata as { name: string }).name.split(':')[1]));
          samples.push(performance.now() - (started.get(name) ?? NaN));
        },
      }),
    ),
  );
  await rate(writes, 4, async (i) => {
    const n = base + i;
    started.set(keyOf(n), performance.now());
    await store.create(keyOf(n), { metadata: { name: `w:${n}` }, payload: 'x'.repeat(900) });
  });
  const deadline = Date.now() + 30_000;
  while (samples.length < watchers * writes && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await Promise.all(watches.map((w) => w.close()));
  return samples.sort((a, b) => a - b);
}

async function rawWatchLatency(client: Etcd3, watchers: number, writes: number): Promise<number[]> {
  const started = new Map<string, number>();
  const samples: number[] = [];
  const all = await Promise.all(
    Array.from({ length: watchers }, async () => {
      const watcher = await client.watch().prefix('/raw-watch/').create();
      watcher.on('put', (kv) => samples.push(performance.now() - (started.get(kv.key.toString()) ?? NaN)));
      return watcher;
    }),
  );
  const payload = JSON.stringify({ payload: 'x'.repeat(900) });
  await rate(writes, 4, async (i) => {
    started.set(`/raw-watch/${i}`, performance.now());
    await client.put(`/raw-watch/${i}`).value(payload);
  });
  const deadline = Date.now() + 30_000;
  while (samples.length < watchers * writes && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await Promise.all(all.map((w) => w.cancel()));
  return samples.sort((a, b) => a - b);
}

async function timedPagedList(store: ManagedStore, pageSize: number): Promise<{ ms: number; items: number }> {
  const start = performance.now();
  let items = 0;
  let token: string | undefined;
  do {
    const page = await store.list('/events/bench/', token === undefined ? { limit: pageSize } : { limit: pageSize, continue: token });
    items += page.items.length;
    token = page.continue;
  } while (token !== undefined);
  return { ms: performance.now() - start, items };
}

async function rawPagedList(client: Etcd3, prefix: string, pageSize: number): Promise<{ ms: number; items: number }> {
  const start = performance.now();
  let from = Buffer.from(prefix);
  const end = Buffer.from(`${prefix.slice(0, -1)}0`);
  let revision = 0;
  let items = 0;
  for (;;) {
    const page = await client.kv.range({ key: from, range_end: end, limit: pageSize, revision });
    revision = Number(page.header.revision);
    items += page.kvs.length;
    for (const kv of page.kvs) JSON.parse(kv.value.toString('utf8'));
    const last = page.kvs.at(-1);
    if (!page.more || last === undefined) break;
    from = Buffer.concat([last.key, Buffer.from([0])]);
  }
  return { ms: performance.now() - start, items };
}

export async function runStoreBench(options: StoreBenchOptions = {}): Promise<StoreBenchRow[]> {
  const creates = options.creates ?? 5000;
  const rounds = options.rounds ?? 3;
  const concurrency = options.concurrency ?? 64;
  const watchers = options.watchers ?? 100;
  const watchWrites = options.watchWrites ?? 400;
  const listObjects = options.listObjects ?? 100_000;
  const pageSize = options.pageSize ?? 500;
  const ttlSeconds = options.ttlSeconds ?? 3600;
  const print = options.print ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const rows: StoreBenchRow[] = [];
  const report = (measure: string, subject: string, value: number, unit: string): void => {
    rows.push({ measure, subject, value, unit });
    print(`${measure.padEnd(34)} ${subject.padEnd(40)} ${value.toFixed(unit === '/s' ? 0 : 2).padStart(10)} ${unit}`);
  };

  const etcd = await startEtcd({ members: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-store-'));
  const client = new Etcd3({ hosts: etcd.endpoints });
  const openEtcd = (prefix: string, leaseMode: EtcdLeaseMode = 'shared') =>
    openEtcdStore({ endpoints: etcd.endpoints, prefix, leaseMode, compactionIntervalMs: 0 });
  try {
    print(`creates: ${creates} objects of ${JSON.stringify(eventObject(0)).length} bytes per round, concurrency ${concurrency}, TTL ${ttlSeconds} s, median of ${rounds} rounds (min-max)`);
    const bytes = (i: number): string => JSON.stringify(eventObject(i));
    await rate(Math.min(creates, 3000), concurrency, (i) => client.put(`/warm-up${keyOf(i)}`).value(bytes(i)).exec());
    const sqlite = await openSqliteStore({ dataDir: join(dir, 'creates') });
    const subjects: [string, ManagedStore | undefined, number | undefined][] = [
      ['raw etcd put (baseline)', undefined, undefined],
      ['etcd store, shared leases', await openEtcd('/shared'), ttlSeconds],
      ['etcd store, lease per object', await openEtcd('/per-object', 'per-object'), ttlSeconds],
      ['etcd store, no TTL', await openEtcd('/no-ttl'), undefined],
      ['sqlite store', sqlite, ttlSeconds],
    ];
    const rates = subjects.map((): number[] => []);
    for (let round = 0; round < rounds; round++) {
      for (const [index, [, store, ttl]] of subjects.entries()) {
        const key = (i: number): string => `/r${round}${keyOf(i)}`;
        const createOptions = ttl === undefined ? {} : { ttlSeconds: ttl };
        const task = store === undefined
          ? (i: number) => client.put(key(i)).value(bytes(i)).exec()
          : (i: number) => store.create(key(i), eventObject(i), createOptions);
        rates[index]?.push(await rate(creates, concurrency, task));
      }
    }
    const medians = rates.map((values) => median(values));
    for (const [index, [subject]] of subjects.entries()) {
      const values = rates[index] ?? [];
      report('create rate', `${subject} (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})`, medians[index] ?? NaN, '/s');
    }
    for (const [, store] of subjects) await store?.close();
    const raw = medians[0] ?? NaN;
    report('create rate vs raw put', 'etcd store, shared leases', (100 * (medians[1] ?? 0)) / raw, '%');
    report('create rate vs raw put', 'etcd store, lease per object', (100 * (medians[2] ?? 0)) / raw, '%');
    report('create rate vs raw put', 'sqlite store', (100 * (medians[4] ?? 0)) / raw, '%');

    print(`watch: ${watchers} watchers, ${watchWrites} writes at concurrency 4, latency from write start`);
    const rawLatency = await rawWatchLatency(client, watchers, watchWrites);
    report('watch latency p50', 'raw etcd watch (baseline)', percentile(rawLatency, 50), 'ms');
    report('watch latency p99', 'raw etcd watch (baseline)', percentile(rawLatency, 99), 'ms');
    for (const [subject, open] of [
      ['etcd store', () => openEtcd('/watch')],
      ['sqlite store', () => openSqliteStore({ dataDir: join(dir, 'watch') })],
    ] as const) {
      const store = await open();
      const latency = await storeWatchLatency(store, watchers, watchWrites, 0);
      report('watch latency p50', `${subject} (${latency.length} deliveries)`, percentile(latency, 50), 'ms');
      report('watch latency p99', subject, percentile(latency, 99), 'ms');
      await store.close();
    }

    print(`list: ${listObjects} objects, pages of ${pageSize}`);
    for (const [subject, open] of [
      ['etcd store', () => openEtcd('/list')],
      ['sqlite store', () => openSqliteStore({ dataDir: join(dir, 'list') })],
    ] as const) {
      const store = await open();
      const fill = await rate(listObjects, concurrency, (i) => store.create(keyOf(i), eventObject(i)));
      report('fill rate (no TTL)', subject, fill, '/s');
      const listed = await timedPagedList(store, pageSize);
      if (listed.items !== listObjects) throw new Error(`${subject} listed ${listed.items} of ${listObjects}`);
      report('paged list total', subject, listed.ms, 'ms');
      await store.close();
    }
    const rawList = await rawPagedList(client, '/list/events/bench/', pageSize);
    report('paged list total', `raw etcd range + JSON.parse (baseline)`, rawList.ms, 'ms');
  } finally {
    client.close();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runStoreBench().catch((err: unknown) => {
    process.stderr.write(`bench/store: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
