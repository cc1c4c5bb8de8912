/**
 * `npm run bench`: the busybox and pause images built first (untimed: minutes the first time on
 * a machine), then the pod bench (bench/pods.ts), the API-server bench (bench/apiserver.ts,
 * SQLite), the API-mode bench (bench/apimode.ts: bursts through the API and the scheduler), the
 * store bench (bench/store.ts), the scheduler bench (bench/scheduler.ts), the GC bench
 * (bench/gc.ts), the eviction bench (bench/eviction.ts), the devices bench (bench/devices.ts) and
 * the storage bench (bench/storage.ts), then the rows of the figures table (bench/README.md) with the commit and
 * the date they were measured at. Progress goes to stderr, the table to stdout. A bench, not a
 * test: targets are shown, never enforced; a bench that cannot run sets a non-zero exit code and
 * the next one still runs.
 *
 *   npm run bench [-- --quick]   (--quick: one burst round, shorter idle window, fewer pods and objects)
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { apiModeRows, runApiModeBench } from './apimode.js';
import { apiServerRows, runApiServerBench } from './apiserver.js';
import { podRows, runPodBench } from './pods.js';
import { runSchedulerBench } from './scheduler.js';
import { devicesRows, runDevicesBench } from './devices.js';
import { evictionRows, runEvictionBench } from './eviction.js';
import { gcRows, runGcBench } from './gc.js';
import { runStoreBench } from './store.js';
import { runStorageBench, storageRows } from './storage.js';
import { exitOnSignals, formatTable, type Row } from './table.js';
import { localImages } from '../test/helpers/containerd.js';

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} with uncommitted changes` : head;
  } catch (err) {
    return `an unknown commit (${err instanceof Error ? err.message : String(err)})`;
  }
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const quick = values.quick;
  // The images are built (the first time on a machine: minutes) before anything is timed.
  process.stderr.write('bench: the busybox and pause images (built once per machine)\n');
  await localImages().catch((err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
  const rows: Row[] = [];
  const benches: [string, () => Promise<Row[]>][] = [
    ['pods', async () => podRows(await runPodBench({ quick }))],
    ['apiserver', async () => apiServerRows(await runApiServerBench({ quick }))],
    ['apimode', async () => apiModeRows(await runApiModeBench({ quick }))],
    ['store', () => runStoreBench({ quick })],
    ['scheduler', () => runSchedulerBench({ quick })],
    ['gc', async () => gcRows(await runGcBench({ quick }))],
    ['eviction', async () => evictionRows(await runEvictionBench({ quick }))],
    ['devices', async () => devicesRows(await runDevicesBench({ quick }))],
    ['storage', async () => storageRows(await runStorageBench({ quick }))],
  ];
  for (const [name, run] of benches) {
    try {
      rows.push(...(await run()));
    } catch (err) {
      process.stderr.write(`bench ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    }
  }
  const date = new Date().toISOString().slice(0, 10);
  process.stdout.write(`\nMeasured at ${commit()} on ${date}${quick ? ' (--quick)' : ''}:\n\n${formatTable(rows).join('\n')}\n`);
}

void main();
