/**
 * `npm run bench`: the agent-pods benchmark (bench/agent-pods.ts; `--quick` is passed on),
 * the agent with the API server (bench/agent-apiserver.ts, SQLite; `--quick` is passed on),
 * then the storage benchmark (bench/store.ts), each printing its table. A benchmark, not a
 * test: targets are shown, never enforced; only a benchmark that cannot run sets a non-zero
 * exit code (the next one still runs).
 *
 *   npm run bench [-- --quick]
 */
import { parseArgs } from 'node:util';
import { formatAgentApiServerTable, runAgentApiServerBench } from './agent-apiserver.js';
import { exitOnSignals, formatAgentPodsTable, runAgentPodsBench } from './agent-pods.js';
import { runStoreBench } from './store.js';

function failed(name: string, err: unknown): void {
  process.stderr.write(`bench ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const print = (line: string): void => void process.stdout.write(`${line}\n`);

  print('## nodeagent pod start-up and idle cost (bench/agent-pods.ts)\n');
  try {
    const results = await runAgentPodsBench({ quick: values.quick });
    for (const r of results) print(`${formatAgentPodsTable(r).join('\n')}\n`);
  } catch (err) {
    failed('agent-pods', err);
  }

  print('## nodeagent with the API server: kubectl create → Running (bench/agent-apiserver.ts)\n');
  try {
    const result = await runAgentApiServerBench({ quick: values.quick });
    print(`${formatAgentApiServerTable(result).join('\n')}\n`);
  } catch (err) {
    failed('agent-apiserver', err);
  }

  print('## storage (bench/store.ts)\n');
  try {
    await runStoreBench({ print });
  } catch (err) {
    failed('store', err);
  }
}

void main();
