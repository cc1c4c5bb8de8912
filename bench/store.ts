/**
 * The store bench: the API server's two Store implementations (no HTTP) next to raw etcd,
 * measured in the same run on a fresh single-member etcd and a fresh SQLite file:
 *
 * - create rate of ~1 KiB event-like objects with a TTL, 64 in flight, next to raw etcd3 puts of
 *   the same bytes at the same concurrency (rounds interleaved, the median of 3);
 * - watch delivery latency (write start -> onEvent) with 100 watchers, next to raw etcd3 watchers;
 * - a paged list of 100 000 objects by 500, next to a raw paged etcd range;
 * - SQLite: the CPU of 1000 watches of a pod prefix resuming 500 revisions back over a history of
 *   30 000 changes, from the recent changes in memory next to the change log (a store that keeps
 *   one change in memory).
 *
 *   node dist/bench/store.js [--quick]   (--quick: 1000 creates a round, 10 000 objects listed)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { openEtcdStore, openSqliteStore, type ManagedStore, type StoredObject } from '../src/apiserver/storage/index.js';
import { startEtcd } from '../test/helpers/etcd.js';
import { formatTable, isMain, ms, percentile, type Row } from './table.js';

export interface StoreBenchOptions {
  readonly quick?: boolean;
  /** Progress lines (default: stderr). */
  readonly print?: (line: string) => void;
}

const CONCURRENCY = 64;
const ROUNDS = 3;
const WATCHERS = 100;
const WATCH_WRITES = 400;
const PAGE_SIZE = 500;
const TTL_SECONDS = 3600;

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
  return samples;
}

const RESUMES = 1000;
const RESUME_BACK = 500;

/** CPU milliseconds of RESUMES watches of /pods/ resuming RESUME_BACK revisions back, over a history of 3 × `objects` changes. */
async function sqliteResumeCpuMs(dataDir: string, recentChanges: number, objects: number): Promise<number> {
  const store = await openSqliteStore({ dataDir, recentChanges });
  try {
    const pod = (i: number, node: string): StoredObject => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: 'bench' },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.example/app:1' }] }, status: { message: 'x'.repeat(1200) },
    });
    await rate(objects, CONCURRENCY, (i) => store.create(`/pods/bench/p${i}`, pod(i, '')));
    await rate(objects, CONCURRENCY, (i) => store.create(`/leases/orch-node-lease/n${i}`, { metadata: { name: `n${i}` } }));
    await rate(objects, CONCURRENCY, (i) => store.update(`/pods/bench/p${i}`, {}, () => pod(i, `node-${i % 1000}`)));
    const resourceVersion = String(Number(await store.currentRevision()) - RESUME_BACK);
    const before = process.cpuUsage();
    const watches = [];
    for (let w = 0; w < RESUMES; w++) watches.push(await store.watch('/pods/', { resourceVersion, onEvent: () => undefined }));
    const used = process.cpuUsage(before);
    await Promise.all(watches.map((w) => w.close()));
    return (used.user + used.system) / 1000;
  } finally {
    await store.close();
  }
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
  return samples;
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

export async function runStoreBench(o: StoreBenchOptions = {}): Promise<Row[]> {
  const creates = o.quick === true ? 1000 : 5000;
  const listObjects = o.quick === true ? 10_000 : 100_000;
  const say = o.print ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const etcd = await startEtcd({ members: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-store-'));
  const client = new Etcd3({ hosts: etcd.endpoints });
  const openEtcd = (prefix: string): Promise<ManagedStore> => openEtcdStore({ endpoints: etcd.endpoints, prefix, leaseMode: 'shared', compactionIntervalMs: 0 });
  try {
    say(`store: ${ROUNDS} rounds of ${creates} creates, ${CONCURRENCY} in flight`);
    const bytes = (i: number): string => JSON.stringify(eventObject(i));
    await rate(Math.min(creates, 3000), CONCURRENCY, (i) => client.put(`/warm-up${keyOf(i)}`).value(bytes(i)).exec());
    const subjects: (ManagedStore | undefined)[] = [undefined, await openEtcd('/creates'), await openSqliteStore({ dataDir: join(dir, 'creates') })];
    const rates: number[][] = subjects.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, store] of subjects.entries()) {
        const key = (i: number): string => `/r${round}${keyOf(i)}`;
        const task = store === undefined
          ? (i: number) => client.put(key(i)).value(bytes(i)).exec()
          : (i: number) => store.create(key(i), eventObject(i), { ttlSeconds: TTL_SECONDS });
        rates[index]?.push(await rate(creates, CONCURRENCY, task));
      }
    }
    for (const store of subjects) await store?.close();
    const [raw, etcdStore, sqlite] = rates.map((values) => percentile(values, 50));
    const perSecond = (v: number | undefined): string => `${Math.round(v ?? NaN)}/s`;

    say(`store: ${WATCHERS} watchers, ${WATCH_WRITES} writes`);
    const p = (v: readonly number[]): string => `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))} ms`;
    const rawWatch = await rawWatchLatency(client, WATCHERS, WATCH_WRITES);
    const watched: string[] = [];
    const listed: string[] = [];
    for (const [subject, open] of [['etcd store', () => openEtcd('/watch')], ['SQLite', () => openSqliteStore({ dataDir: join(dir, 'watch') })]] as const) {
      const store = await open();
      watched.push(`${subject} ${p(await storeWatchLatency(store, WATCHERS, WATCH_WRITES, 0))}`);
      await store.close();
    }
    say(`store: ${listObjects} objects listed by ${PAGE_SIZE}`);
    for (const [subject, open] of [['etcd store', () => openEtcd('/list')], ['SQLite', () => openSqliteStore({ dataDir: join(dir, 'list') })]] as const) {
      const store = await open();
      await rate(listObjects, CONCURRENCY, (i) => store.create(keyOf(i), eventObject(i)));
      const list = await timedPagedList(store, PAGE_SIZE);
      if (list.items !== listObjects) throw new Error(`${subject} listed ${list.items} of ${listObjects}`);
      listed.push(`${subject} ${(list.ms / 1000).toFixed(2)} s`);
      await store.close();
    }
    const rawList = await rawPagedList(client, '/list/events/bench/', PAGE_SIZE);
    const historyObjects = o.quick === true ? 2000 : 10_000;
    say(`store: ${RESUMES} SQLite watches resuming ${RESUME_BACK} revisions back over ${3 * historyObjects} changes`);
    const fromLog = await sqliteResumeCpuMs(join(dir, 'resume-log'), 1, historyObjects);
    const fromMemory = await sqliteResumeCpuMs(join(dir, 'resume-memory'), 8192, historyObjects);
    return [
      {
        measure: `Store creates/s (no HTTP), ${CONCURRENCY} at once, median of ${ROUNDS} rounds`,
        baseline: `raw etcd put ${perSecond(raw)}`,
        ours: `etcd store ${perSecond(etcdStore)} (${Math.round((100 * (etcdStore ?? NaN)) / (raw ?? NaN))} %), SQLite ${perSecond(sqlite)}`,
        target: '50 %',
      },
      { measure: `Store watch delivery, ${WATCHERS} watchers, p50 / p99`, baseline: `raw etcd watch ${p(rawWatch)}`, ours: watched.join(', '), target: '' },
      { measure: `Store paged list, ${listObjects} objects by ${PAGE_SIZE}`, baseline: `raw etcd range ${(rawList.ms / 1000).toFixed(2)} s`, ours: listed.join(', '), target: '' },
      {
        measure: `SQLite: CPU of ${RESUMES} watches resuming ${RESUME_BACK} revisions back (history ${3 * historyObjects} changes)`,
        baseline: `from the change log ${Math.round(fromLog)} ms`, ours: `from the recent changes in memory ${Math.round(fromMemory)} ms`, target: '',
      },
    ];
  } finally {
    client.close();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  runStoreBench({ quick: values.quick }).then((rows) => {
    process.stdout.write(`${formatTable(rows).join('\n')}\n`);
  }, (err: unknown) => {
    process.stderr.write(`bench store: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
