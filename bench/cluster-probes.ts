/**
 * What the cluster bench (cluster.ts) measures with: /proc readings of a process, the API
 * server's request and watch-event counters, lease renewals as a node makes them, a pod watch
 * that times each pod's way (created, delivered, bound, Running, gone), and raw store write rates.
 */
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Etcd3 } from 'etcd3';
import { openEtcdStore, openSqliteStore, type ManagedStore } from '../src/apiserver/storage/index.js';
import { ApiClient } from '../test/helpers/apiserver.js';
import { eventObject } from './store.js';

const TICKS = 100;

/** CPU seconds (user + system) and RSS bytes of a process. */
export function procUsage(pid: number): { cpuS: number; rssBytes: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuS = (Number(fields[11]) + Number(fields[12])) / TICKS;
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuS, rssBytes: Number(rss?.[1] ?? 0) * 1024 };
  } catch {
    return { cpuS: NaN, rssBytes: NaN };
  }
}

export interface ServerCounters {
  readonly requests: number;
  readonly errors5xx: number;
  readonly watchEvents: number;
  /** V8's heap in use and its size, and the memory outside it (prom-client's process metrics), bytes. */
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
}

/** Sums of apiserver_request_total (all, 5xx) and apiserver_watch_events_total; the server's heap. */
export async function serverCounters(api: ApiClient): Promise<ServerCounters> {
  const res = await api.request('GET', '/metrics', { headers: { Accept: 'text/plain' } });
  let requests = 0;
  let errors5xx = 0;
  let watchEvents = 0;
  const gauge = (name: string): number => Number(new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(res.text)?.[1] ?? NaN);
  for (const line of res.text.split('\n')) {
    const m = /^(apiserver_request_total|apiserver_watch_events_total)\{([^}]*)\} ([0-9.e+]+)$/.exec(line);
    if (m === null) continue;
    const value = Number(m[3]);
    if (m[1] === 'apiserver_watch_events_total') {
      watchEvents += value;
      continue;
    }
    requests += value;
    if (/code="5\d\d"/.test(m[2] ?? '')) errors5xx += value;
  }
  return {
    requests, errors5xx, watchEvents,
    heapUsedBytes: gauge('nodejs_heap_size_used_bytes'), heapTotalBytes: gauge('nodejs_heap_size_total_bytes'), externalBytes: gauge('nodejs_external_memory_bytes'),
  };
}

export interface FlowCounters {
  /** apiserver_flowcontrol_rejected_requests_total summed by priority level. */
  readonly rejectedByLevel: ReadonlyMap<string, number>;
  /** apiserver_request_total of code 429. */
  readonly tooMany: number;
  /** apiserver_terminated_watchers_total, all resources. */
  readonly terminatedWatchers: number;
}

/** The server's overload counters now (the bench reports their growth over the run). */
export async function flowCounters(api: ApiClient): Promise<FlowCounters> {
  const res = await api.request('GET', '/metrics', { headers: { Accept: 'text/plain' } });
  const rejectedByLevel = new Map<string, number>();
  let tooMany = 0;
  let terminatedWatchers = 0;
  for (const line of res.text.split('\n')) {
    const m = /^(apiserver_flowcontrol_rejected_requests_total|apiserver_request_total|apiserver_terminated_watchers_total)\{([^}]*)\} ([0-9.e+]+)$/.exec(line);
    if (m === null) continue;
    const value = Number(m[3]);
    const labels = m[2] ?? '';
    if (m[1] === 'apiserver_terminated_watchers_total') terminatedWatchers += value;
    else if (m[1] === 'apiserver_request_total') tooMany += /code="429"/.test(labels) ? value : 0;
    else {
      const level = /priority_level="([^"]*)"/.exec(labels)?.[1] ?? '';
      rejectedByLevel.set(level, (rejectedByLevel.get(level) ?? 0) + value);
    }
  }
  return { rejectedByLevel, tooMany, terminatedWatchers };
}

/** The highest RSS of a process, sampled every `everyMs` until stop(). */
export function peakRss(pid: number, everyMs: number): { peak(): number; stop(): void } {
  let peak = procUsage(pid).rssBytes;
  const timer = setInterval(() => {
    const rss = procUsage(pid).rssBytes;
    if (rss > peak) peak = rss;
  }, everyMs);
  return { peak: () => peak, stop: () => { clearInterval(timer); } };
}

export interface LeaseSample {
  readonly ms: number;
  readonly phase: string;
  readonly ok: boolean;
  /** The HTTP status, or 0 when no answer came. */
  readonly status: number;
}

/** `count` leases renewed by PUT every `everyMs`, each client on its own connection (and with the token `tokens[i]`), as nodes do. */
export async function startLeaseProbes(url: string, ca: string, tokens: readonly string[], count: number, everyMs: number): Promise<{ samples: LeaseSample[]; phase: { name: string }; stop(): void }> {
  const samples: LeaseSample[] = [];
  const phase = { name: 'steady' };
  const path = '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases';
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  for (let i = 0; i < count; i++) {
    const client = new ApiClient(url, ca, tokens[i % tokens.length] ?? '');
    const name = `bench-probe-${i}`;
    const body = (rv?: string): Record<string, unknown> => ({
      apiVersion: 'coordination.orch.io/v1', kind: 'Lease',
      metadata: { name, namespace: 'orch-node-lease', ...(rv === undefined ? {} : { resourceVersion: rv }) },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') },
    });
    const created = await client.request('POST', path, { body: body() });
    let rv = ((created.body.metadata ?? {}) as { resourceVersion?: string }).resourceVersion;
    let busy = false;
    const renew = async (): Promise<void> => {
      // As a node's lease controller: the next renewal waits for the last one.
      if (stopped || busy) return;
      busy = true;
      const start = performance.now();
      const res = await client.request('PUT', `${path}/${name}`, { body: body(rv) }).catch(() => undefined);
      samples.push({ ms: performance.now() - start, phase: phase.name, ok: res?.status === 200, status: res?.status ?? 0 });
      if (res?.status === 200) rv = ((res.body.metadata ?? {}) as { resourceVersion?: string }).resourceVersion;
      else if (res?.status === 409) rv = ((await client.request('GET', `${path}/${name}`)).body.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      busy = false;
    };
    const timer = setInterval(() => { void renew(); }, everyMs);
    timers.push(timer);
  }
  return { samples, phase, stop: () => { stopped = true; for (const t of timers) clearInterval(t); } };
}

export interface PodTimes {
  sent?: number;
  acked?: number;
  delivered?: number;
  bound?: number;
  running?: number;
  gone?: number;
}

type WatchedObject = { metadata?: { name?: string }; spec?: { nodeName?: string }; status?: { phase?: string; conditions?: { type: string; status: string }[] } };

/** A watch of `path` (with ?watch=true...), each event passed with its arrival time. */
export function watchStream(url: string, ca: string, token: string, path: string, onEvent: (type: string, object: WatchedObject, now: number) => void): { stop(): void } {
  const req = httpsRequest(`${url}${path}`, { ca, agent: false, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } }, (res) => {
    let rest = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = performance.now();
      rest += chunk;
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const text = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        const event = JSON.parse(text) as { type: string; object: WatchedObject };
        if (event.type !== 'BOOKMARK') onEvent(event.type, event.object, now);
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return { stop: () => { req.destroy(); } };
}

/** Watches the pods of a namespace from `resourceVersion` and notes when each was seen, bound, Running and deleted. */
export function watchPods(url: string, ca: string, token: string, namespace: string, resourceVersion: string, times: Map<string, PodTimes>): { stop(): void } {
  return watchStream(url, ca, token, `/api/v1/namespaces/${namespace}/pods?watch=true&resourceVersion=${resourceVersion}&allowWatchBookmarks=true`, (type, object, now) => {
    const name = object.metadata?.name;
    if (name === undefined) return;
    let t = times.get(name);
    if (t === undefined) {
      t = {};
      times.set(name, t);
    }
    t.delivered ??= now;
    if ((object.spec?.nodeName ?? '') !== '') t.bound ??= now;
    if (object.status?.phase === 'Running') t.running ??= now;
    if (type === 'DELETED') t.gone ??= now;
  });
}

/** Runs `task(i)` for i in [0, total) with `concurrency` in flight; returns operations per second and failures. */
export async function runAtConcurrency(total: number, concurrency: number, task: (i: number) => Promise<boolean>): Promise<{ perSecond: number; failed: number }> {
  let next = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next++;
      if (!(await task(i).catch(() => false))) failed += 1;
    }
  }));
  return { perSecond: total / ((performance.now() - start) / 1000), failed };
}

/** Raw write rates of the store the server uses, in this run: creates of ~1 KiB events (TTL) through our Store and, on etcd, raw puts. */
export async function storeWriteRates(store: 'sqlite' | 'etcd', endpoints: readonly string[], total: number): Promise<{ storeCreates: number; rawPuts?: number }> {
  if (store === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-sqlite-'));
    const s: ManagedStore = await openSqliteStore({ dataDir: dir });
    try {
      const r = await runAtConcurrency(total, 64, async (i) => { await s.create(`/events/raw/e${i}`, eventObject(i), { ttlSeconds: 3600 }); return true; });
      return { storeCreates: r.perSecond };
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const raw = new Etcd3({ hosts: [...endpoints] });
  const s = await openEtcdStore({ endpoints, prefix: '/bench-raw-store', compactionIntervalMs: 0 });
  try {
    const value = JSON.stringify(eventObject(0));
    const rawPuts = (await runAtConcurrency(total, 64, async (i) => { await raw.put(`/bench-raw-put/e${i}`).value(value); return true; })).perSecond;
    const storeCreates = (await runAtConcurrency(total, 64, async (i) => { await s.create(`/events/raw/e${i}`, eventObject(i), { ttlSeconds: 3600 }); return true; })).perSecond;
    return { storeCreates, rawPuts };
  } finally {
    await s.close();
    raw.close();
  }
}
