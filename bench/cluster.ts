/**
 * The cluster bench: one orch-apiserver (SQLite, or etcd of 1 or 3 members) with its control loops,
 * N simulated nodes (`nodeagent simulate`, in processes of their own so that the server's CPU
 * is its own), then P pods without nodeName created (the scheduler binds them) and deleted.
 *
 * Prints: the store's raw write rates in this run (creates of ~1 KiB events through our Store,
 * and raw etcd puts), registration time of the N nodes, lease PUT p50/p99/max of probe leases
 * renewed every second on their own connections (steady window, then during the pod burst),
 * pods bound and Running per second, watch delivery (create acknowledged -> event on a pod
 * watch), the server's CPU per request and per watch event sent and RSS, etcd's CPU, errors
 * (5xx, failed probes and creates, simulator error lines), etcd's watch streams opened after the
 * server started (restarts) and the server's etcd deadline errors, and the simulator's cost per
 * node; the overload counters: the server's peak RSS, 429s by priority level, watchers ended for
 * not keeping up, and the time from the burst's last create to every pod Running and from the
 * last delete to every pod gone. The simulated nodes and the probes are system:nodes users, so
 * API Priority and Fairness serves them in node-high and system, as real nodes; each simulated
 * node is a user of its own (`system:node:bench-node-<i>`, a flow of its own, as real nodes),
 * or with --one-user all of them one user (`system:node:bench-simulators`, one flow).
 *
 *   node dist/bench/cluster.js [--nodes 100] [--pods 1000] [--store sqlite|etcd] [--etcd-members 1|3]
 *     [--steady 30] [--ramp SECONDS] [--sim-procs K] [--one-user] [--cpu-prof DIR]
 *     [--sim-cpu-prof DIR] [--server-node-arg=FLAG]... [--server-arg=FLAG]... (an orch-apiserver flag, e.g. --watch-cache=false)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { startApiServer } from '../test/helpers/apiserver.js';
import { etcdWatchCounters, startEtcd, type EtcdCluster } from '../test/helpers/etcd.js';
import { waitFor } from '../test/helpers/wait.js';
import {
  flowCounters, peakRss, procUsage, runAtConcurrency, serverCounters, startLeaseProbes, storeWriteRates, watchPods, watchStream, type PodTimes, type ServerCounters,
} from './cluster-probes.js';
import { exitOnSignals, isMain, percentile } from './table.js';

const NODEAGENT = fileURLToPath(new URL('../src/cmd/nodeagent.js', import.meta.url));
const print = (line: string): void => void process.stderr.write(`${line}\n`);
const f1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '-');

interface Simulator {
  readonly child: ChildProcess;
  stdout: string;
}

function startSimulators(count: number, procs: number, orchconfig: string, rampS: number, logFile: string, oneUser: boolean, cpuProf?: string): Simulator[] {
  const log = createWriteStream(logFile);
  const per = Math.ceil(count / procs);
  const sims: Simulator[] = [];
  for (let p = 0; p < procs; p++) {
    const n = Math.min(per, count - p * per);
    if (n <= 0) break;
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const prof = cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`];
    const child = spawn(process.execPath, [...prof, NODEAGENT, 'simulate', '--nodes', String(n), '--first-index', String(p * per), '--orchconfig', orchconfig,
      '--node-name-prefix', NODE_PREFIX, '--node-labels', 'bench=cluster', '--start-delay', '1s', '--ramp', `${rampS}s`, '--token-per-node', String(!oneUser), '--', '-v=0', '--cluster-dns=10.96.0.10'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    const sim: Simulator = { child, stdout: '' };
    // A bench stopped by a signal exits through process.exit: the simulators go with it.
    process.once('exit', () => { if (child.exitCode === null) child.kill('SIGKILL'); });
    child.stdout.setEncoding('utf8').on('data', (c: string) => { sim.stdout += c; });
    child.stderr.pipe(log, { end: false });
    sims.push(sim);
  }
  return sims;
}

const PROBES = 10;
const SIMULATOR_TOKEN = { token: 'bench-simulators', user: 'system:node:bench-simulators', groups: ['system:nodes', 'system:authenticated'] };
const NODE_PREFIX = 'bench-node-';
/** Each simulated node's own user (`nodeagent simulate --token-per-node`), as real nodes are: a flow of its own in APF. */
function nodeTokens(nodes: number): { token: string; user: string; groups: string[] }[] {
  return Array.from({ length: nodes }, (_, i) => ({ token: `${SIMULATOR_TOKEN.token}.${NODE_PREFIX}${i}`, user: `system:node:${NODE_PREFIX}${i}`, groups: SIMULATOR_TOKEN.groups }));
}
const PROBE_TOKENS = Array.from({ length: PROBES }, (_, i) => ({ token: `bench-probe-${i}`, user: `system:node:bench-probe-${i}`, groups: ['system:nodes', 'system:authenticated'] }));

/** The admin orchconfig's cluster with a bearer token as the user: the simulators' identity. */
function tokenOrchconfig(adminOrchconfig: string, token: string, path: string): string {
  const admin = parseYaml(readFileSync(adminOrchconfig, 'utf8')) as { clusters: unknown[] };
  writeFileSync(path, stringifyYaml({
    apiVersion: 'v1', kind: 'Config', clusters: admin.clusters, users: [{ name: 'node', user: { token } }],
    contexts: [{ name: 'node@orch', context: { cluster: 'orch', user: 'node' } }], 'current-context': 'node@orch',
  }), { mode: 0o600 });
  return path;
}

function latencyText(samples: readonly number[]): string {
  return `p50 ${f1(percentile(samples, 50))} / p99 ${f1(percentile(samples, 99))} / max ${f1(Math.max(...samples))} ms (${samples.length})`;
}

/** Where the server's RSS is: V8's heap (in use / its size) and the memory outside it. */
function heapText(c: ServerCounters): string {
  return `V8 heap ${f1(c.heapUsedBytes / 2 ** 20)} of ${f1(c.heapTotalBytes / 2 ** 20)} MiB, external ${f1(c.externalBytes / 2 ** 20)} MiB`;
}

export async function runClusterBench(o: { nodes: number; pods: number; store: 'sqlite' | 'etcd'; etcdMembers: 1 | 3; steadyS: number; rampS: number; simProcs: number; oneUser?: boolean; cpuProf?: string; simCpuProf?: string; serverNodeArgs?: readonly string[]; serverArgs?: readonly string[] }): Promise<string[]> {
  const out: string[] = [];
  const row = (k: string, v: string): void => { out.push(`| ${k} | ${v} |`); print(`${k}: ${v}`); };
  let etcd: EtcdCluster | undefined;
  if (o.store === 'etcd') etcd = await startEtcd({ members: o.etcdMembers });
  const rates = await storeWriteRates(o.store, etcd?.endpoints ?? [], 3000);
  const server = await startApiServer({
    storage: o.store, controllers: true, tokens: [...(o.oneUser === true ? [SIMULATOR_TOKEN] : nodeTokens(o.nodes)), ...PROBE_TOKENS], ...(etcd === undefined ? {} : { etcdEndpoints: etcd.endpoints }),
    nodeArgs: [...(o.cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`]), ...(o.serverNodeArgs ?? [])],
    args: o.serverArgs ?? [],
  });
  const api = server.client;
  const ca = readFileSync(server.caFile, 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-'));
  const serverPid = server.pid ?? 0;
  const rss = peakRss(serverPid, 250);
  const f0 = await flowCounters(api);
  const etcdPids = etcd?.pids() ?? [];
  // The members' CPU and RSS together.
  const etcdUsage = (): { cpuS: number; rssBytes: number } | undefined => etcdPids.length === 0 ? undefined
    : etcdPids.map(procUsage).reduce((a, b) => ({ cpuS: a.cpuS + b.cpuS, rssBytes: a.rssBytes + b.rssBytes }));
  const etcdC0 = etcd === undefined ? undefined : await etcdWatchCounters(etcd.endpoints);
  print(`cluster bench: ${o.nodes} nodes, ${o.pods} pods, ${o.store}${etcd === undefined ? '' : ` (${o.etcdMembers} member${o.etcdMembers === 1 ? '' : 's'})`}; logs in ${dir}`);
  const sims: Simulator[] = [];
  try {
    // Registration: from the simulators' start to every node Ready, seen on a node watch.
    const ready = new Set<string>();
    const nodeWatch = watchStream(server.url, ca, server.token, '/api/v1/nodes?watch=true&labelSelector=bench%3Dcluster', (_type, node) => {
      if (node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true) ready.add(node.metadata?.name ?? '');
    });
    const t0 = performance.now();
    const c0 = await serverCounters(api);
    sims.push(...startSimulators(o.nodes, o.simProcs, tokenOrchconfig(server.adminKubeconfig, SIMULATOR_TOKEN.token, join(dir, 'nodes.orchconfig')), o.rampS, join(dir, 'simulate.log'), o.oneUser === true, o.simCpuProf));
    await waitFor(`${o.nodes} Ready nodes`, () => ready.size >= o.nodes, { timeoutMs: 600_000 + o.rampS * 1000, intervalMs: 500 });
    const registered = performance.now() - t0;
    nodeWatch.stop();
    const c1 = await serverCounters(api);

    // Steady window: probe leases, the server's CPU per request.
    const probes = await startLeaseProbes(server.url, ca, PROBE_TOKENS.map((p) => p.token), PROBES, 1000);
    const s0 = { server: procUsage(serverPid), etcd: etcdUsage(), counters: await serverCounters(api), at: performance.now() };
    await new Promise((resolve) => setTimeout(resolve, o.steadyS * 1000));
    const s1 = { server: procUsage(serverPid), etcd: etcdUsage(), counters: await serverCounters(api), at: performance.now() };

    // Burst: P pods without nodeName.
    await api.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } } });
    const list = await api.request('GET', '/api/v1/namespaces/bench/pods?limit=1');
    const times = new Map<string, PodTimes>();
    const podWatch = watchPods(server.url, ca, server.token, 'bench', (list.body.metadata as { resourceVersion: string }).resourceVersion, times);
    probes.phase.name = 'burst';
    const b0 = { server: procUsage(serverPid), counters: await serverCounters(api), at: performance.now() };
    const created = await runAtConcurrency(o.pods, 32, async (i) => {
      const name = `p${i}`;
      const t: PodTimes = times.get(name) ?? {};
      times.set(name, t);
      t.sent = performance.now();
      const res = await api.request('POST', '/api/v1/namespaces/bench/pods', { body: {
        apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'bench' },
        spec: { containers: [{ name: 'c', image: 'registry.example/app:1', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
      } });
      t.acked = performance.now();
      return res.status === 201;
    });
    const burstEnd = performance.now();
    await waitFor('every pod Running', () => [...times.values()].filter((t) => t.running !== undefined).length >= o.pods - created.failed,
      { timeoutMs: 120_000 + o.pods * 50, intervalMs: 500 }).catch((err: unknown) => { print(String(err)); });
    const b1 = { server: procUsage(serverPid), counters: await serverCounters(api), at: performance.now() };
    probes.phase.name = 'delete';
    const deleted = await runAtConcurrency(o.pods, 32, async (i) => (await api.request('DELETE', `/api/v1/namespaces/bench/pods/p${i}`)).status === 200);
    const deleteEnd = performance.now();
    await waitFor('every pod gone', () => [...times.values()].filter((t) => t.gone !== undefined).length >= o.pods - deleted.failed,
      { timeoutMs: 120_000 + o.pods * 50, intervalMs: 500 }).catch((err: unknown) => { print(String(err)); });
    const d1 = performance.now();
    probes.stop();
    podWatch.stop();
    const c2 = await serverCounters(api);
    const f2 = await flowCounters(api);
    rss.stop();
    const etcdC1 = etcd === undefined ? undefined : await etcdWatchCounters(etcd.endpoints);

    // The simulators' own cost.
    for (const s of sims) s.child.kill('SIGTERM');
    await Promise.all(sims.map((s) => new Promise((resolve) => { if (s.child.exitCode !== null) resolve(null); else s.child.once('exit', resolve); })));
    const costs = sims.map((s) => JSON.parse(s.stdout.split('\n').find((l) => l.includes('"event":"cost"')) ?? '{}') as { mcpuPerNode?: number; rssPerNodeBytes?: number; heapUsedPerNodeBytes?: number; cpuSeconds?: number; nodes?: number });
    const simErrors = readFileSync(join(dir, 'simulate.log'), 'utf8').split('\n').filter((l) => l.startsWith('E')).length;

    const all = [...times.values()];
    const span = (pick: (t: PodTimes) => number | undefined): number => {
      const v = all.map(pick).filter((x): x is number => x !== undefined);
      return v.length / ((Math.max(...v) - b0.at) / 1000);
    };
    const last = (pick: (t: PodTimes) => number | undefined): number => Math.max(...all.map(pick).filter((x): x is number => x !== undefined));
    const delivery = all.flatMap((t) => (t.delivered !== undefined && t.acked !== undefined ? [Math.max(0, t.delivered - t.acked)] : []));
    const createMs = all.flatMap((t) => (t.acked !== undefined && t.sent !== undefined ? [t.acked - t.sent] : []));
    const steady = probes.samples.filter((x) => x.phase === 'steady');
    const burst = probes.samples.filter((x) => x.phase === 'burst');
    const steadyS = (s1.at - s0.at) / 1000;
    const burstCpu = b1.server.cpuS - b0.server.cpuS;
    const burstEvents = b1.counters.watchEvents - b0.counters.watchEvents;
    row('store write rate (same run)', o.store === 'etcd'
      ? `raw etcd put ${f1(rates.rawPuts ?? NaN)}/s; Store event create ${f1(rates.storeCreates)}/s (${f1((rates.storeCreates / (rates.rawPuts ?? NaN)) * 100)} % of raw)`
      : `SQLite Store event create ${f1(rates.storeCreates)}/s`);
    row('registration', `${o.nodes} nodes Ready in ${f1(registered / 1000)} s (ramp ${o.rampS} s); ${c1.errors5xx - c0.errors5xx} × 5xx`);
    row('lease PUT, steady', latencyText(steady.map((x) => x.ms)));
    row('lease PUT, during the burst', latencyText(burst.map((x) => x.ms)));
    row('apiserver, steady', `${f1(((s1.server.cpuS - s0.server.cpuS) / steadyS) * 100)} % of a core, ${f1(((s1.server.cpuS - s0.server.cpuS) * 1e6) / Math.max(1, s1.counters.requests - s0.counters.requests))} µs CPU per request, ${f1((s1.counters.requests - s0.counters.requests) / steadyS)} req/s, RSS ${f1(s1.server.rssBytes / 2 ** 20)} MiB (${heapText(s1.counters)})`);
    if (s0.etcd !== undefined && s1.etcd !== undefined) row('etcd, steady', `${f1(((s1.etcd.cpuS - s0.etcd.cpuS) / steadyS) * 100)} % of a core, RSS ${f1(s1.etcd.rssBytes / 2 ** 20)} MiB`);
    row('pods', `${o.pods} created (${f1(created.perSecond)}/s, create p99 ${f1(percentile(createMs, 99))} ms, ${created.failed} failed); bound ${f1(span((t) => t.bound))}/s; Running ${f1(span((t) => t.running))}/s; deleted and gone in ${f1((d1 - b1.at) / 1000)} s`);
    row('after the burst', `every pod Running ${f1((last((t) => t.running) - burstEnd) / 1000)} s after the last create was acknowledged; every pod gone ${f1((last((t) => t.gone) - deleteEnd) / 1000)} s after the last delete was`);
    row('watch delivery (create acked -> pod watch)', `p50 ${f1(percentile(delivery, 50))} / p99 ${f1(percentile(delivery, 99))} ms`);
    // Net of the steady window's rate (the nodes' own heartbeats go on during the burst).
    const netCpu = burstCpu - ((s1.server.cpuS - s0.server.cpuS) / steadyS) * ((b1.at - b0.at) / 1000);
    row('apiserver, burst', `${f1((burstCpu / ((b1.at - b0.at) / 1000)) * 100)} % of a core, ${f1((burstCpu * 1e6) / Math.max(1, burstEvents))} µs CPU per watch event sent (${burstEvents} events; net of the steady rate ${f1((netCpu * 1e6) / Math.max(1, burstEvents))} µs), ${f1((burstCpu * 1e6) / o.pods)} µs per pod, RSS ${f1(b1.server.rssBytes / 2 ** 20)} MiB (${heapText(b1.counters)})`);
    row('errors', `${c2.errors5xx - c0.errors5xx} × 5xx; lease probes failed ${probes.samples.filter((x) => !x.ok).length} (${[...new Set(probes.samples.filter((x) => !x.ok).map((x) => x.status))].map((c) => `HTTP ${c}`).join(', ')}); simulator error lines ${simErrors}`);
    const levels = [...f2.rejectedByLevel].map(([level, n]) => [level, n - (f0.rejectedByLevel.get(level) ?? 0)] as const).filter(([, n]) => n > 0);
    row('overload', `server peak RSS ${f1(rss.peak() / 2 ** 20)} MiB; ${f2.tooMany - f0.tooMany} × 429 (rejected by priority level: ${levels.length === 0 ? 'none' : levels.map(([l, n]) => `${l} ${n}`).join(', ')}); watchers ended for not keeping up ${f2.terminatedWatchers - f0.terminatedWatchers}`);
    if (etcdC0 !== undefined && etcdC1 !== undefined) {
      const deadlines = server.logs().split('\n').filter((l) => l.includes('DEADLINE_EXCEEDED')).length;
      row('etcd watch streams', `${etcdC1.watchStreams - etcdC0.watchStreams} opened after the server started (each a restart), ${etcdC1.watchers} watchers at the end; server log lines with DEADLINE_EXCEEDED ${deadlines}`);
    }
    row('simulated node cost', costs.map((c) => `${f1(c.mcpuPerNode ?? NaN)} mCPU (${f1(((c.cpuSeconds ?? NaN) * 1000) / (c.nodes ?? NaN))} ms CPU over the whole run), ${f1((c.rssPerNodeBytes ?? NaN) / 2 ** 20)} MiB RSS (V8 heap ${f1((c.heapUsedPerNodeBytes ?? NaN) / 2 ** 20)} MiB) per node`).join('; '));
    return out;
  } finally {
    rss.stop();
    for (const s of sims) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    // Kept beside the simulators' log: the 5xx lines say which store call failed.
    writeFileSync(join(dir, 'apiserver.log'), server.logs());
    await server.stop();
    await etcd?.stop();
  }
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: {
    nodes: { type: 'string', default: '100' }, pods: { type: 'string', default: '1000' }, store: { type: 'string', default: 'sqlite' }, 'etcd-members': { type: 'string', default: '1' },
    steady: { type: 'string', default: '30' }, ramp: { type: 'string' }, 'sim-procs': { type: 'string' }, 'cpu-prof': { type: 'string' }, 'sim-cpu-prof': { type: 'string' },
    'server-node-arg': { type: 'string', multiple: true, default: [] },
    'server-arg': { type: 'string', multiple: true, default: [] },
    'one-user': { type: 'boolean', default: false },
  } });
  const nodes = Number(values.nodes);
  const store = values.store === 'etcd' ? 'etcd' : 'sqlite';
  if (values['etcd-members'] !== '1' && values['etcd-members'] !== '3') throw new Error(`--etcd-members: 1 or 3, got ${values['etcd-members']}`);
  const etcdMembers = values['etcd-members'] === '3' ? 3 : 1;
  const lines = await runClusterBench({
    nodes, pods: Number(values.pods), store, etcdMembers, steadyS: Number(values.steady),
    rampS: values.ramp === undefined ? Math.ceil(nodes / 50) : Number(values.ramp),
    simProcs: values['sim-procs'] === undefined ? Math.max(1, Math.ceil(nodes / 1500)) : Number(values['sim-procs']),
    ...(values['cpu-prof'] === undefined ? {} : { cpuProf: values['cpu-prof'] }),
    ...(values['sim-cpu-prof'] === undefined ? {} : { simCpuProf: values['sim-cpu-prof'] }),
    serverNodeArgs: values['server-node-arg'],
    serverArgs: values['server-arg'],
    oneUser: values['one-user'],
  });
  process.stdout.write(`${[`| cluster bench: ${nodes} nodes, ${values.pods} pods, ${store}${store === 'etcd' ? ` (${etcdMembers} member${etcdMembers === 1 ? '' : 's'})` : ''} | |`, '|---|---|', ...lines].join('\n')}\n`);
}

if (isMain(import.meta.url)) {
  main().then(() => process.exit(0), (err: unknown) => {
    process.stderr.write(`cluster bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  });
}
