/**
 * orch-apiserver Event API benchmark, over HTTPS against real server processes (SQLite and etcd
 * storage) and, as the baseline measured in the same run, the raw etcd put and range rates:
 *
 * - event creates per second at concurrency 64 (POST /apis/events.orch.io/v1/...), next to raw
 *   etcd3 puts of the same JSON at the same concurrency measured just before (etcd's fsync rate
 *   on these disks drifts between runs, so each server gets its own adjacent baseline). Each
 *   subject first gets a short unmeasured round (JIT warm-up), and each rate is printed with the
 *   CPU milliseconds per operation of etcd, orch-apiserver and this process (user + system time
 *   from /proc/<pid>/stat): on a machine with few cores the rate is bound by their sum;
 * - watch delivery latency (POST start -> ADDED line read) p50/p99 with 100 HTTP watchers;
 * - a list of 100,000 events paged by 500 (GET ?limit=500&continue=...), next to a raw paged
 *   etcd range over as many keys.
 *
 * Run: `npm run build && node dist/bench/experiments/apiserver-events.js [--quick] [--list-objects N]`.
 * Figures vary with the disk and the CPU; nothing here is asserted.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { startApiServer, v1Event, eventsPath, type ApiServer } from '../../test/helpers/apiserver.js';
import { startEtcd } from '../../test/helpers/etcd.js';

interface Row {
  readonly measure: string;
  readonly subject: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline: string;
}

const NS = 'bench';

function event(i: number, prefix: string): Record<string, unknown> {
  return v1Event(`${prefix}-${String(i).padStart(7, '0')}`, {
    note: 'Pulling image "registry.local/web:1.2.3" for container web in pod web-7d4b9c8f6d-x2x9z'.repeat(4),
    regarding: { kind: 'Pod', namespace: NS, name: 'web-7d4b9c8f6d-x2x9z', uid: '6f1f4c3e-2b7a-4a8e-9d3c-1e2f3a4b5c6d', apiVersion: 'v1', fieldPath: 'spec.containers{web}' },
  }, NS);
}

/** Runs `total` tasks with `concurrency` in flight; returns tasks per second. */
async function rate(total: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next;
      next += 1;
      await task(i);
    }
  }));
  return total / ((performance.now() - start) / 1000);
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time (user + system, every thread) a process has used so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesized command name: state is [0], utime [11], stime [12].
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** The processes whose CPU time is measured, by the name printed. */
type Processes = Readonly<Record<string, readonly number[]>>;

/** rate() of `total` tasks, with the CPU milliseconds per task of each process in `processes`. */
async function measuredRate(total: number, concurrency: number, task: (i: number) => Promise<unknown>, processes: Processes): Promise<{ rate: number; cpu: string }> {
  const used = (): number[] => Object.values(processes).map((pids) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0));
  const before = used();
  const perSecond = await rate(total, concurrency, task);
  const after = used();
  const cpu = Object.keys(processes).map((name, i) => `${name} ${(((after[i] ?? 0) - (before[i] ?? 0)) / total).toFixed(3)}`).join(', ');
  return { rate: perSecond, cpu: `CPU ms/op: ${cpu}` };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function create(server: ApiServer, body: Record<string, unknown>): Promise<void> {
  const res = await server.client.request('POST', eventsPath(NS), { body });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
}

async function watchLatency(server: ApiServer, watchers: number, writes: number): Promise<number[]> {
  const list = await server.client.request('GET', `${eventsPath(NS)}?limit=1`);
  const rv = String((list.body.metadata as Record<string, unknown>).resourceVersion);
  const streams = await Promise.all(Array.from({ length: watchers }, () => server.client.watch(`${eventsPath(NS)}?watch=true&resourceVersion=${rv}`)));
  const samples: number[] = [];
  try {
    let i = 0;
    // Writes at concurrency 4; each watcher reads its stream in order.
    const started = new Map<string, number>();
    const readers = streams.map(async (stream) => {
      for (let n = 0; n < writes; n++) {
        const e = await stream.next(30_000);
        const name = String((e.object.metadata as Record<string, unknown>).name);
        const t0 = started.get(name);
        if (e.type === 'ADDED' && t0 !== undefined) samples.push(performance.now() - t0);
      }
    });
    await rate(writes, 4, async () => {
      const body = event(i, 'watch');
      i += 1;
      started.set(String((body.metadata as Record<string, unknown>).name), performance.now());
      await create(server, body);
    });
    await Promise.all(readers);
  } finally {
    for (const s of streams) s.close();
  }
  return samples;
}

async function pagedList(server: ApiServer, pageSize: number): Promise<{ ms: number; items: number }> {
  const start = performance.now();
  let items = 0;
  let cont = '';
  do {
    const res = await server.client.request('GET', `${eventsPath(NS)}?limit=${pageSize}${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`);
    if (res.status !== 200) throw new Error(`list answered ${res.status}: ${res.text}`);
    items += (res.body.items as unknown[]).length;
    const next = (res.body.metadata as Record<string, unknown>).continue;
    cont = typeof next === 'string' ? next : '';
  } while (cont !== '');
  return { ms: performance.now() - start, items };
}

async function rawPagedList(client: Etcd3, prefix: string, pageSize: number): Promise<{ ms: number; items: number }> {
  const start = performance.now();
  let items = 0;
  let from = prefix;
  let revision: number | undefined;
  const end = `${prefix.slice(0, -1)}0`;
  for (;;) {
    const res = await client.kv.range({ key: Buffer.from(from), range_end: Buffer.from(end), limit: pageSize, ...(revision === undefined ? {} : { revision }) });
    revision ??= Number(res.header.revision);
    items += res.kvs.length;
    const last = res.kvs.at(-1);
    if (!res.more || last === undefined) break;
    from = `${last.key.toString()}\0`;
  }
  return { ms: performance.now() - start, items };
}

export async function runApiServerEventsBench(options: { quick: boolean; listObjects: number; print: (line: string) => void }): Promise<Row[]> {
  const { print } = options;
  const concurrency = 64;
  const creates = options.quick ? 2000 : 10_000;
  // A fresh orch-apiserver needs about 3000 creates before its CPU per create settles (JIT).
  const warmup = 3000;
  const watchers = 100;
  const watchWrites = options.quick ? 50 : 200;
  const rows: Row[] = [];
  const etcd = await startEtcd();
  const client = new Etcd3({ hosts: etcd.endpoints });
  const servers: ApiServer[] = [];
  try {
    const raw = JSON.stringify(event(0, 'raw'));
    let rawKeys = 0;
    for (const storage of ['sqlite', 'etcd'] as const) {
      const server = await startApiServer({ storage, etcdEndpoints: etcd.endpoints, args: ['--event-ttl=24h'] });
      servers.push(server);
      await server.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
      const processes: Processes = { etcd: etcd.pids(), 'orch-apiserver': server.pid === undefined ? [] : [server.pid], bench: [process.pid] };
      // Unmeasured warm-up rounds (outside the listed prefix for the raw puts).
      await rate(warmup, concurrency, (i) => client.put(`/raw/warmup/${storage}/w${i}`).value(raw).exec());
      const rawPut = await measuredRate(creates, concurrency, (i) => client.put(`/raw/events/${NS}/e${rawKeys + i}`).value(raw).exec(), processes);
      rawKeys += creates;
      rows.push({ measure: `create rate, concurrency ${concurrency}`, subject: `raw etcd3 put (baseline for ${storage})`, value: rawPut.rate, unit: '/s', baseline: rawPut.cpu });
      await rate(warmup, concurrency, (i) => create(server, event(i, 'warmup')));
      const api = await measuredRate(creates, concurrency, (i) => create(server, event(i, 'create')), processes);
      rows.push({ measure: `create rate, concurrency ${concurrency}`, subject: `orch-apiserver over HTTPS, ${storage}`, value: api.rate, unit: '/s', baseline: `${((100 * api.rate) / rawPut.rate).toFixed(0)}% of raw etcd put; ${api.cpu}` });
      const latency = await watchLatency(server, watchers, watchWrites);
      rows.push({ measure: `watch latency, ${watchers} watchers`, subject: `p50, ${storage}`, value: percentile(latency, 50), unit: 'ms', baseline: `${latency.length} samples` });
      rows.push({ measure: `watch latency, ${watchers} watchers`, subject: `p99, ${storage}`, value: percentile(latency, 99), unit: 'ms', baseline: '' });
      const seedStart = performance.now();
      const have = warmup + creates + watchWrites;
      if (options.listObjects > have) await rate(options.listObjects - have, concurrency, (i) => create(server, event(i, 'seed')));
      print(`seeded ${options.listObjects} events into ${storage} in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
      const listed = await pagedList(server, 500);
      rows.push({ measure: `list ${listed.items} events by 500`, subject: `orch-apiserver over HTTPS, ${storage}`, value: listed.ms, unit: 'ms', baseline: `${((listed.items / listed.ms) * 1000).toFixed(0)} items/s` });
    }
    await rate(Math.max(0, options.listObjects - rawKeys), concurrency, (i) => client.put(`/raw/events/${NS}/f${i}`).value(raw).exec());
    const rawList = await rawPagedList(client, `/raw/events/${NS}/`, 500);
    rows.push({ measure: `list ${rawList.items} events by 500`, subject: 'raw etcd3 range (baseline)', value: rawList.ms, unit: 'ms', baseline: `${((rawList.items / rawList.ms) * 1000).toFixed(0)} items/s` });
  } finally {
    for (const s of servers) await s.stop();
    client.close();
    await etcd.stop();
  }
  print('');
  print(`${'measure'.padEnd(32)} ${'subject'.padEnd(36)} ${'value'.padStart(10)} unit  baseline / note`);
  for (const r of rows) {
    print(`${r.measure.padEnd(32)} ${r.subject.padEnd(36)} ${r.value.toFixed(r.unit === '/s' ? 0 : 1).padStart(10)} ${r.unit.padEnd(5)} ${r.baseline}`);
  }
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, 'list-objects': { type: 'string' } } });
  const listObjects = Number(values['list-objects'] ?? (values.quick ? '10000' : '100000'));
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  print(`orch-apiserver Event API benchmark${values.quick ? ' (quick)' : ''}`);
  await runApiServerEventsBench({ quick: values.quick, listObjects, print });
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench apiserver-events: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
