/**
 * What the SQLite store's commits cost the event loop of the process that writes (orch-apiserver's
 * main thread): a SQLite store on disk (the temp dir, not a memory file system, so the fsyncs of
 * synchronous=FULL are real) takes ~1 KiB event creates for --seconds (default 10): --concurrency
 * in flight (default 64), or with --rate N, N creates a second started on a 10 ms tick whatever
 * the store's pace (as independent clients would), while perf_hooks.monitorEventLoopDelay samples
 * the loop's delay. Prints writes/s, commits (groups)/s and writes per group, the share of the
 * time the event loop was busy (eventLoopUtilization: a commit on the main thread counts as busy,
 * one on another thread does not) and its busy time per write, the loop delay p50/p99/max (beyond
 * the 10 ms sampling interval: the histogram's values are whole intervals, ~10 ms on an idle
 * loop), the create latency p50/p99, the process's CPU (every thread) per write, and the load
 * average at the start and the end.
 *
 * A group is counted as the writes acknowledged in one turn of the event loop (a store
 * acknowledges a group's writes together, after its commit), so the same count works on any
 * build. --store-module runs another build's store (e.g. main's
 * /work/main/dist/src/apiserver/storage/index.js) for a before/after in one run.
 *
 *   node dist/bench/experiments/sqlite-loop.js [--seconds 10] [--concurrency 64 | --rate N] [--store-module PATH] [--rounds 1]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { ManagedStore, SqliteStoreOptions } from '../../src/apiserver/storage/index.js';
import { eventObject } from '../store.js';
import { isMain } from '../table.js';

export interface LoopFigures {
  readonly writes: number;
  readonly writesPerSecond: number;
  readonly groupsPerSecond: number;
  readonly writesPerGroup: number;
  readonly delayP50Ms: number;
  readonly delayP99Ms: number;
  readonly delayMaxMs: number;
  /** The event loop's busy share of the window, and its busy time per write. */
  readonly loopBusy: number;
  readonly loopBusyMsPerWrite: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly cpuMsPerWrite: number;
  readonly load: readonly [number, number];
}

/** monitorEventLoopDelay's sampling interval (ms). */
const RESOLUTION_MS = 10;

type OpenStore = (options: SqliteStoreOptions) => Promise<ManagedStore>;

export interface LoopOptions {
  readonly seconds: number;
  /** Closed loop: this many creates in flight. */
  readonly concurrency: number;
  /** Open loop (instead of concurrency): creates started per second, on a 10 ms tick. */
  readonly rate?: number | undefined;
}

/** The value at `p` (0..1) of sorted samples. */
function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

export async function sqliteLoop(open: OpenStore, o: LoopOptions): Promise<LoopFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-sqlite-loop-'));
  const store = await open({ dataDir: dir });
  const loadStart = loadavg()[0] ?? 0;
  try {
    let groups = 0;
    let turnCounted = false;
    let writes = 0;
    const latencies: number[] = [];
    const create = async (i: number): Promise<void> => {
      const started = performance.now();
      await store.create(`/events/bench/e${String(i).padStart(8, '0')}`, eventObject(i), { ttlSeconds: 3600 });
      latencies.push(performance.now() - started);
      writes += 1;
      if (turnCounted) return;
      turnCounted = true;
      groups += 1;
      setImmediate(() => {
        turnCounted = false;
      });
    };
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    const cpuStart = process.cpuUsage();
    const eluStart = performance.eventLoopUtilization();
    const start = performance.now();
    const until = start + o.seconds * 1000;
    let next = 0;
    histogram.enable();
    if (o.rate === undefined) {
      await Promise.all(
        Array.from({ length: o.concurrency }, async () => {
          while (performance.now() < until) await create(next++);
        }),
      );
    } else {
      const rate = o.rate;
      const started: Promise<void>[] = [];
      await new Promise<void>((done) => {
        const tick = setInterval(() => {
          const now = performance.now();
          if (now >= until) {
            clearInterval(tick);
            done();
            return;
          }
          // Every create due by now since the start, whatever the store's pace.
          const due = Math.floor(((now - start) / 1000) * rate);
          while (next < due) started.push(create(next++));
        }, 10);
      });
      await Promise.all(started);
    }
    histogram.disable();
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const elu = performance.eventLoopUtilization(eluStart);
    latencies.sort((a, b) => a - b);
    const ms = (ns: number): number => ns / 1e6;
    const late = (ns: number): number => Math.max(0, ms(ns) - RESOLUTION_MS);
    return {
      writes,
      writesPerSecond: writes / seconds,
      groupsPerSecond: groups / seconds,
      writesPerGroup: writes / Math.max(1, groups),
      delayP50Ms: late(histogram.percentile(50)),
      delayP99Ms: late(histogram.percentile(99)),
      delayMaxMs: late(histogram.max),
      loopBusy: elu.utilization,
      loopBusyMsPerWrite: elu.active / Math.max(1, writes),
      latencyP50Ms: quantile(latencies, 0.5),
      latencyP99Ms: quantile(latencies, 0.99),
      cpuMsPerWrite: (cpu.user + cpu.system) / 1000 / Math.max(1, writes),
      load: [loadStart, loadavg()[0] ?? 0],
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatLoop(label: string, f: LoopFigures): string {
  const n = (x: number, digits = 1): string => x.toFixed(digits);
  return `${label}: ${Math.round(f.writesPerSecond)} writes/s, ${n(f.groupsPerSecond)} commits/s (${n(f.writesPerGroup)} writes each); ` +
    `loop busy ${n(f.loopBusy * 100)} % (${n(f.loopBusyMsPerWrite, 3)} ms per write), delay p50 ${n(f.delayP50Ms)} / p99 ${n(f.delayP99Ms)} / max ${n(f.delayMaxMs)} ms; ` +
    `create p50 ${n(f.latencyP50Ms)} / p99 ${n(f.latencyP99Ms)} ms; ` +
    `CPU ${n(f.cpuMsPerWrite, 3)} ms per write; load ${n(f.load[0])} -> ${n(f.load[1])}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '64' },
      rate: { type: 'string' },
      'store-module': { type: 'string' },
      rounds: { type: 'string', default: '1' },
    },
  });
  const modulePath = values['store-module'];
  const url = modulePath === undefined ? new URL('../../src/apiserver/storage/index.js', import.meta.url).href : pathToFileURL(resolve(modulePath)).href;
  const { openSqliteStore } = (await import(url)) as { openSqliteStore: OpenStore };
  for (let round = 1; round <= Number(values.rounds); round++) {
    const figures = await sqliteLoop(openSqliteStore, {
      seconds: Number(values.seconds),
      concurrency: Number(values.concurrency),
      rate: values.rate === undefined ? undefined : Number(values.rate),
    });
    process.stdout.write(`${formatLoop(`${modulePath ?? 'this build'} round ${round}`, figures)}\n`);
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`sqlite-loop: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
