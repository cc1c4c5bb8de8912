/**
 * What the agent does per pod in an API-mode burst, counted, not run by `npm run bench`: the
 * API-mode bench's cluster (test/helpers/cluster.ts: containerd, orch-apiserver with its
 * scheduler, the built agent at -v=2 with JSON logs) with count-preload.ts loaded into the agent.
 * After 2 warm-up pods (started, removed) and 15 s of settling, an idle window of 20 s, then a
 * burst of host-network pods created at once (the bench's pods) until the API server shows them
 * all Running, plus 3 s. Prints per pod: the agent's HTTP requests, TLS connections, CRI calls,
 * processes, file system calls and log lines, each as counted over the burst and net of the idle
 * window's rate (what the agent does anyway, e.g. the PLEG's relists); the server's
 * apiserver_request_total over the burst; the events recorded, by reason. Needs root.
 *
 *   node dist/bench/experiments/burst-counts.js [--pods 110] [--agent-bin OTHER/bin/nodeagent]
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { v1Pod } from '../../test/helpers/apiserver.js';
import { startCluster, type Cluster } from '../../test/helpers/cluster.js';
import { waitFor } from '../../test/helpers/wait.js';
import { exitOnSignals, isMain } from '../table.js';

const NS = 'default';
const PRELOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'count-preload.js');
const IDLE_S = 20;

interface Snapshot {
  readonly cpu: { readonly user: number; readonly system: number };
  readonly counts: Readonly<Record<string, number>>;
}

type Counts = Record<string, number>;

function diff(a: Readonly<Counts>, b: Readonly<Counts>): Counts {
  const out: Counts = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = (b[k] ?? 0) - (a[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** apiserver_request_total by `verb resource[/subresource] code`. */
export function requestTotals(metrics: string): Counts {
  const out: Counts = {};
  for (const line of metrics.split('\n')) {
    const m = /^apiserver_request_total\{(.*)\} (\d+)/.exec(line);
    if (m === null) continue;
    const labels = new Map([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1] ?? '', x[2] ?? '']));
    const sub = labels.get('subresource') ?? '';
    const key = `${labels.get('verb') ?? ''} ${labels.get('resource') ?? ''}${sub === '' ? '' : `/${sub}`} ${labels.get('code') ?? ''}`;
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { pods: { type: 'string', default: '110' }, 'agent-bin': { type: 'string' } } });
  const pods = Number(values.pods);
  if (!(Number.isInteger(pods) && pods > 0 && pods <= 110)) throw new Error(`--pods must be a whole number from 1 to 110 (the node's pod capacity), not ${values.pods}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'burst-counts-'));
  const cluster: Cluster = await startCluster({
    node: 'count-node', controllers: true,
    agentArgs: ['--logging-format=json', '-v=2', '--node-status-update-frequency=10s'],
    agentNodeArgs: [`--import=${PRELOAD}`], agentEnv: { COUNT_PRELOAD_DIR: dir },
    ...(values['agent-bin'] === undefined ? {} : { agentBin: path.resolve(values['agent-bin']) }),
  });
  const api = cluster.server.client;
  const body = (name: string): Record<string, unknown> => {
    const pod = v1Pod(name, '');
    return { ...pod, spec: { ...(pod.spec as object), hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'sleep', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] } };
  };
  const listed = async (): Promise<{ metadata: { name: string }; status?: { phase?: string } }[]> =>
    ((await api.request('GET', `/api/v1/namespaces/${NS}/pods`)).body.items ?? []) as { metadata: { name: string }; status?: { phase?: string } }[];
  const allRunning = (prefix: string, n: number): Promise<boolean> => waitFor(`${n} pods ${prefix}* Running`, async () => {
    const mine = (await listed()).filter((p) => p.metadata.name.startsWith(prefix));
    return mine.length >= n && mine.every((p) => p.status?.phase === 'Running');
  }, { timeoutMs: 900_000, intervalMs: 200 });
  const snapshot = async (): Promise<Snapshot> => {
    const pid = cluster.agent.process.pid;
    if (pid === undefined) throw new Error('the agent has no pid');
    const before = new Set(await readdir(dir));
    process.kill(pid, 'SIGUSR2');
    let file: string | undefined;
    await waitFor('the agent\'s counts', async () => {
      file = (await readdir(dir)).find((n) => !before.has(n) && n.startsWith(`counts-${String(pid)}-`));
      return file !== undefined;
    }, { timeoutMs: 30_000, intervalMs: 50 });
    // The file is written by one synchronous call: a partial read is retried.
    let text = '';
    await waitFor('the counts file', async () => {
      text = await readFile(path.join(dir, file ?? ''), 'utf8');
      try {
        JSON.parse(text);
        return true;
      } catch {
        return false;
      }
    }, { timeoutMs: 10_000, intervalMs: 50 });
    return JSON.parse(text) as Snapshot;
  };
  const serverTotals = async (): Promise<Counts> => {
    return requestTotals((await api.request('GET', '/metrics')).text);
  };
  try {
    await Promise.all([0, 1].map((i) => api.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: body(`warm-${i}`) })));
    await allRunning('warm-', 2);
    await api.request('DELETE', `/api/v1/namespaces/${NS}/pods`);
    await waitFor('the warm-up pods gone', async () => (await listed()).length === 0, { timeoutMs: 300_000, intervalMs: 500 });
    await delay(15_000);
    const s0 = await snapshot();
    await delay(IDLE_S * 1000);
    const s1 = await snapshot();
    const m1 = await serverTotals();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: pods }, (_, i) => api.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: body(`b-${i}`) })));
    await allRunning('b-', pods);
    const burstS = (performance.now() - t0) / 1000;
    await delay(3000);
    const s2 = await snapshot();
    const m2 = await serverTotals();
    const windowS = (performance.now() - t0) / 1000;
    const cpuMs = (s: Snapshot): number => (s.cpu.user + s.cpu.system) / 1000;
    const idle = diff(s0.counts, s1.counts);
    const burst = diff(s1.counts, s2.counts);
    const out = (l: string): void => void process.stdout.write(`${l}\n`);
    out(`${pods} pods created at once, all Running in the API server after ${burstS.toFixed(1)} s; agent CPU ${((cpuMs(s2) - cpuMs(s1)) / pods).toFixed(1)} ms per pod over ${windowS.toFixed(1)} s (idle before: ${((cpuMs(s1) - cpuMs(s0)) / IDLE_S).toFixed(1)} ms/s)`);
    out('agent, per pod: counted over the burst | net of the idle rate');
    for (const k of Object.keys(burst).sort()) {
      const net = ((burst[k] ?? 0) - ((idle[k] ?? 0) * windowS) / IDLE_S) / pods;
      out(`  ${k.padEnd(90)} ${((burst[k] ?? 0) / pods).toFixed(2).padStart(7)} | ${net.toFixed(2).padStart(7)}`);
    }
    out('orch-apiserver apiserver_request_total over the burst, per pod (the bench\'s own POSTs and LISTs included)');
    const server = diff(m1, m2);
    for (const k of Object.keys(server).sort()) out(`  ${k.padEnd(40)} ${((server[k] ?? 0) / pods).toFixed(2).padStart(7)}`);
    const events = ((await api.request('GET', `/apis/events.orch.io/v1/namespaces/${NS}/events`)).body.items ?? []) as { reason?: string; reportingController?: string }[];
    const byReason: Counts = {};
    for (const e of events) byReason[`${e.reason ?? ''} (${e.reportingController ?? ''})`] = (byReason[`${e.reason ?? ''} (${e.reportingController ?? ''})`] ?? 0) + 1;
    out(`events of the namespace (warm-up pods included): ${Object.entries(byReason).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`burst-counts: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
