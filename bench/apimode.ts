/**
 * The API-mode bench: pods created through orch-apiserver (SQLite, its scheduler placing them)
 * by a client in this process, run by one nodeagent registered as a node (test/helpers/cluster.ts:
 * a private containerd, the server, the agent), next to raw CRI calls (bench/cri.ts) in the same
 * run. Host network only (the pod bench measures CNI).
 *
 *   (a) bursts of 20 and of 110 pods created at once (every POST in flight together), in rounds
 *       (3; 1 with --quick) interleaved with a raw burst of the same size at 4 in flight (the
 *       pod bench's baseline); each timed from just before the first create (raw: the first
 *       call) to the last container's `startedAt`; the figure is the median agent/raw ratio of
 *       the rounds, with the agent's CPU time per pod over the burst;
 *   (b) the last burst's pods left running (110 by default): after 20 s of settling, the agent's RSS
 *       and CPU share over a window of 60 s (15 s with --quick), next to containerd's CPU share;
 *   (c) pods one after another (10; 5 with --quick), each step's p50: create (just before the POST) →
 *       scheduled (a watch sees its nodeName) → the agent sees it (its `SyncLoop ADD` log line,
 *       -v=2) → sandbox (the runtime's createdAt) → started (the container's startedAt) → status
 *       in the API server (a watch sees phase Running); next to a raw pod between each two.
 *
 * With --agent-bin given twice or more (builds to compare, e.g. another checkout's
 * bin/nodeagent), the agent is restarted from each build in turn on the same node: each round of
 * (a) times every build's burst after the raw one, in alternating order; in (b) each build in
 * turn adopts the pods left running (a fresh agent, as after a restart) and is measured; (c)
 * measures the first build.
 *
 *   node dist/bench/apimode.js [--quick] [--rounds N] [--burst N]... [--agent-bin PATH]... [--agent-arg=--sync-frequency=1m ...] [--agent-node-arg=--cpu-prof ...]
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL } from '../src/agent/kuberuntime/index.js';
import { connectCri, type CriClient } from '../src/agent/runtime/cri/index.js';
import { v1Pod, type ApiServer } from '../test/helpers/apiserver.js';
import { startCluster, type Cluster } from '../test/helpers/cluster.js';
import { waitFor } from '../test/helpers/wait.js';
import { formatApiTraffic, parseApiTraffic, type ApiTraffic } from './api-traffic.js';
import { AGENT_BIN, containerdPid, measureUsage, sampleProcess, type Usage } from './agent.js';
import { watchPods, type PodTimes } from './cluster-probes.js';
import { criTimeMs, epochMs, runRawPods, startedAt, type RawPodOptions } from './cri.js';
import { medianRatio, RAW_CONCURRENCY, type BurstRound } from './pods.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, ms, percentile, seconds, type Row } from './table.js';

export interface ApiModeOptions {
  readonly quick?: boolean;
  /** Rounds of (a) (default 3, or 1 with quick). */
  readonly rounds?: number;
  /** Burst sizes of (a) (default 20 and 110). */
  readonly bursts?: readonly number[];
  /** Node's own flags for the agent's process (e.g. `--cpu-prof`, `--cpu-prof-dir=DIR`: the profile is written when it stops). */
  readonly agentNodeArgs?: readonly string[];
  /** More nodeagent flags, after the bench's own (a later flag wins: e.g. `--sync-frequency=1m`, the deployed default, for the test helper's 10 s). */
  readonly agentArgs?: readonly string[];
  /** Builds of the agent to compare (default: this checkout's bin/nodeagent); see the file comment. */
  readonly agentBins?: readonly string[];
  readonly print?: (line: string) => void;
}

export interface ApiBurst {
  readonly pods: number;
  readonly rounds: readonly BurstRound[];
  /** Per build (in the order of agentBins), the agent's CPU ms per pod of each round. */
  readonly cpuMsPerPod: readonly (readonly number[])[];
}

/** The pods left running: an agent's RSS and CPU share over the window, containerd's CPU share beside. */
export interface ApiIdle {
  readonly agent: Usage;
  readonly containerd: Usage;
  /** What the API server served over the window (the agent's requests and watch events): formatApiTraffic's line. */
  readonly traffic?: string;
}

/** The steps of one pod, each ms from the previous one. */
export const STEPS = ['scheduled', 'seen by the agent', 'sandbox', 'started', 'status in the API server'] as const;

export interface ApiModeResult {
  readonly bursts: readonly ApiBurst[];
  /** The builds compared (one unless agentBins named more). */
  readonly agentBins: readonly string[];
  /** The last burst's pods left running, per build. */
  readonly idle: { readonly pods: number; readonly seconds: number; readonly builds: readonly ApiIdle[] };
  readonly sequential: { readonly raw: readonly number[]; readonly createToStarted: readonly number[]; readonly steps: Readonly<Record<(typeof STEPS)[number], readonly number[]>> };
}

const NAMESPACE = 'default';
const NODE = 'bench-api-node';

interface Ctx {
  readonly cluster: Cluster;
  readonly server: ApiServer;
  readonly cri: CriClient;
  readonly image: string;
}

function podBody(ctx: Ctx, name: string): Record<string, unknown> {
  const pod = v1Pod(name, '');
  const spec = pod.spec as Record<string, unknown>;
  // `sleep` ignores SIGTERM: the agent's minimum grace period of 2 s applies at deletion.
  return { ...pod, spec: { ...spec, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'sleep', image: ctx.image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] } };
}

async function create(ctx: Ctx, name: string): Promise<void> {
  const res = await ctx.server.client.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { body: podBody(ctx, name) });
  if (res.status !== 201) throw new Error(`creating pod ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
}

/** The running containers of the pods whose names start with `prefix`. */
async function running(ctx: Ctx, prefix: string): Promise<{ id: string; pod: string }[]> {
  const list = await ctx.cri.listContainers({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE }, state: { state: 'CONTAINER_RUNNING' } });
  return list.map((c) => ({ id: c.id, pod: c.labels[POD_NAME_LABEL] ?? '' })).filter((c) => c.pod.startsWith(prefix));
}

/** Deletes every pod of the namespace and waits until the API server and the runtime have none (up to 15 min: 110 pods took more than 5 min on a machine at load 50). */
async function removeAll(ctx: Ctx): Promise<void> {
  const res = await ctx.server.client.request('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods`);
  if (res.status !== 200) throw new Error(`deleting the pods answered ${res.status}: ${JSON.stringify(res.body)}`);
  await waitFor('the pods to be gone from the API server and the runtime', async () => {
    const listed = await ctx.server.client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
    const items = (listed.body.items as unknown[] | undefined) ?? [];
    const sandboxes = await ctx.cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE } });
    return items.length === 0 && sandboxes.length === 0;
  }, { timeoutMs: 900_000, intervalMs: 200 });
}

/** The API server's request and watch event counters now. */
async function apiTraffic(ctx: Ctx): Promise<ApiTraffic> {
  const res = await ctx.server.client.request('GET', '/metrics');
  if (res.status !== 200) throw new Error(`reading the API server's /metrics answered ${String(res.status)}`);
  return parseApiTraffic(res.text);
}

/** Creates `count` pods at once: first create -> the last container's startedAt, ms. */
async function apiBurst(ctx: Ctx, prefix: string, count: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: count }, (_, i) => create(ctx, `${prefix}-${i}`)));
  for (;;) {
    const up = await running(ctx, `${prefix}-`);
    if (up.length >= count) return Math.max(...(await Promise.all(up.map((c) => startedAt(ctx.cri, c.id))))) - epochMs(t0);
    if (performance.now() - t0 > 600_000) throw new Error(`${up.length} of ${count} pods running 600 s after their creation`);
    await delay(100);
  }
}

/** Epoch ms of the agent's `SyncLoop ADD` line naming `default/<name>` (JSON log lines, -v=2). */
function seenByAgent(logs: string, name: string): number | undefined {
  const needle = `"${NAMESPACE}/${name}"`;
  for (const line of logs.split('\n')) {
    if (!line.includes('SyncLoop ADD') || !line.includes(needle)) continue;
    const ts = (JSON.parse(line) as { ts?: unknown }).ts;
    if (typeof ts === 'number') return ts * 1000;
  }
  return undefined;
}

async function onePod(ctx: Ctx, name: string, times: Map<string, PodTimes>): Promise<{ total: number; steps: number[] }> {
  const t0 = epochMs(performance.now());
  await create(ctx, name);
  let container: string | undefined;
  await waitFor(`pod ${name} Running in the API server`, async () => {
    container ??= (await running(ctx, name)).find((c) => c.pod === name)?.id;
    return container !== undefined && times.get(name)?.running !== undefined;
  }, { timeoutMs: 60_000, intervalMs: 5 });
  const [sandbox] = await ctx.cri.listPodSandbox({ labelSelector: { [POD_NAME_LABEL]: name, [POD_NAMESPACE_LABEL]: NAMESPACE } });
  const seen = seenByAgent(ctx.cluster.agent.logs(), name);
  const t = times.get(name);
  if (sandbox === undefined || seen === undefined || t?.bound === undefined || t.running === undefined || container === undefined) {
    throw new Error(`pod ${name}: a step is missing (sandbox ${String(sandbox !== undefined)}, agent's SyncLoop ADD line ${String(seen !== undefined)}, watch ${JSON.stringify(t)})`);
  }
  const started = await startedAt(ctx.cri, container);
  const marks = [t0, epochMs(t.bound), seen, criTimeMs(sandbox.createdAt), started, epochMs(t.running)];
  return { total: started - t0, steps: marks.slice(1).map((m, i) => m - (marks[i] ?? m)) };
}

export async function runApiModeBench(o: ApiModeOptions = {}): Promise<ApiModeResult> {
  const print = o.print ?? ((l: string) => void process.stderr.write(`[api] ${l}\n`));
  const bins = (o.agentBins ?? [AGENT_BIN]).map((b) => path.resolve(b));
  const cluster = await startCluster({
    node: NODE, controllers: true, // The helper's 2 s node status period is for tests; the default 10 s here, so that the idle figure is the agent's as deployed.
    agentArgs: ['--logging-format=json', '-v=2', '--node-status-update-frequency=10s', ...(o.agentArgs ?? [])],
    agentBin: bins[0] ?? AGENT_BIN,
    ...(o.agentNodeArgs === undefined ? {} : { agentNodeArgs: o.agentNodeArgs }),
  });
  const cri = connectCri({ runtimeEndpoint: cluster.containerd.endpoint });
  const ctx: Ctx = { cluster, server: cluster.server, cri, image: cluster.containerd.images.busybox };
  const raw: RawPodOptions = { endpoint: cluster.containerd.endpoint, network: 'host', image: ctx.image, cgroupRoot: `${cluster.containerd.cgroupRoot}/bench-raw`, logRoot: cluster.containerd.logDir };
  let running = bins[0] ?? AGENT_BIN;
  /**
   * The agent's pid, restarted from `bin` first unless that build runs (always afresh when
   * `fresh`). A build restarted for a burst (`warm`) first starts and removes 2 pods, as the
   * first build did at the start, then settles 20 s (the first build had at least the raw
   * burst's time since its start): an agent restarted just before its burst cost 1.4–1.8× the
   * CPU per pod of one that had run before, the 2-pod warm-up alone did not remove that.
   */
  const use = async (bin: string, fresh: boolean, warm = false): Promise<number> => {
    if (fresh || bin !== running) {
      await cluster.restartAgent(bin);
      running = bin;
      print(`nodeagent ${bin} (pid ${String(cluster.agent.process.pid)})`);
      if (warm) {
        await apiBurst(ctx, `warm${String(cluster.agent.process.pid)}`, 2);
        await removeAll(ctx);
        await delay(20_000);
      }
    }
    const pid = cluster.agent.process.pid;
    if (pid === undefined) throw new Error('the agent has no pid');
    return pid;
  };
  try {
    print(`orch-apiserver ${cluster.server.url}, nodeagent ${running} pid ${String(cluster.agent.process.pid)} as node ${NODE}`);
    // Warm-up of both sides (the page cache, the agent's and the server's code paths).
    await runRawPods(raw, 2);
    await apiBurst(ctx, 'warm', 2);
    await removeAll(ctx);

    const bursts: ApiBurst[] = [];
    const roundCount = o.rounds ?? (o.quick === true ? 1 : 3);
    const sizes = o.bursts ?? [20, 110];
    for (const count of sizes) {
      const rounds: BurstRound[] = [];
      const cpuMsPerPod: number[][] = bins.map(() => []);
      for (let r = 0; r < roundCount; r++) {
        const tag = `(a) ${count} at once, round ${r + 1}/${roundCount}`;
        const rawBurst = await withSteal(() => runRawPods(raw, count, RAW_CONCURRENCY));
        print(`${tag}: raw ${seconds(rawBurst.result.totalMs)} (steal ${rawBurst.steal.toFixed(0)} %)`);
        const agentMs: number[] = [];
        // Builds take turns going first, so that none always follows the raw burst.
        const order = bins.map((_, i) => i);
        if (r % 2 === 1) order.reverse();
        for (const [k, i] of order.entries()) {
          const bin = bins[i] ?? AGENT_BIN;
          const pid = await use(bin, false, true);
          const cpu0 = await sampleProcess(pid);
          const burst = await withSteal(() => apiBurst(ctx, `b${count}r${r}x${i}`, count));
          const cpuMs = ((await sampleProcess(pid)).cpuSeconds - cpu0.cpuSeconds) * 1000;
          agentMs[i] = burst.result;
          cpuMsPerPod[i]?.push(cpuMs / count);
          print(`${tag}: API${bins.length > 1 ? ` ${bin}` : ''} ${seconds(burst.result)} (${(burst.result / rawBurst.result.totalMs).toFixed(2)}×; agent CPU ${ms(cpuMs / count)} ms per pod; steal ${burst.steal.toFixed(0)} %)`);
          const last = r === roundCount - 1 && count === sizes[sizes.length - 1] && k === order.length - 1;
          if (!last) await removeAll(ctx);
        }
        rounds.push({ rawMs: rawBurst.result.totalMs, agentMs });
      }
      bursts.push({ pods: count, rounds, cpuMsPerPod });
    }

    const idlePods = sizes[sizes.length - 1] ?? 0;
    const settle = 20;
    const window = o.quick === true ? 15 : 60;
    const idleBuilds: ApiIdle[] = [];
    for (const bin of bins) {
      // One build: the agent that ran the bursts; more: each build adopts the pods afresh.
      const pid = await use(bin, bins.length > 1);
      print(`(b) the last burst's ${idlePods} pods left running${bins.length > 1 ? `, adopted by ${bin}` : ''}: settling ${settle} s, then measuring ${window} s`);
      await delay(settle * 1000);
      const before = await apiTraffic(ctx);
      const usage = await withSteal(async () => measureUsage([pid, await containerdPid(cluster.containerd)], window));
      const traffic = formatApiTraffic(before, await apiTraffic(ctx), window);
      const [agentIdle, containerdIdle] = usage.result;
      if (agentIdle === undefined || containerdIdle === undefined) throw new Error('no usage samples');
      print(`(b) agent ${agentIdle.rssMiB.toFixed(1)} MiB (over the window: anonymous ${(agentIdle.anonMeanMiB ?? NaN).toFixed(1)}, files ${(agentIdle.fileMeanMiB ?? NaN).toFixed(1)} MiB), ${agentIdle.cpuPercent.toFixed(2)} %; containerd ${containerdIdle.cpuPercent.toFixed(2)} % (steal ${usage.steal.toFixed(0)} %)`);
      print(`(b) API server, ${traffic}`);
      idleBuilds.push({ agent: agentIdle, containerd: containerdIdle, traffic });
    }
    const idle = { pods: idlePods, seconds: window, builds: idleBuilds };
    await removeAll(ctx);
    await use(bins[0] ?? AGENT_BIN, false);

    const count = o.quick === true ? 5 : 10;
    print(`(c) ${count} pods one after another, raw and API in turn`);
    const listed = await ctx.server.client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
    const times = new Map<string, PodTimes>();
    const rv = (listed.body.metadata as { resourceVersion?: string } | undefined)?.resourceVersion ?? '0';
    const watch = watchPods(cluster.server.url, await readFile(cluster.server.caFile, 'utf8'), cluster.server.token, NAMESPACE, rv, times);
    const sequential = { raw: [] as number[], createToStarted: [] as number[], steps: Object.fromEntries(STEPS.map((s) => [s, [] as number[]])) as Record<(typeof STEPS)[number], number[]> };
    try {
      for (let i = 0; i < count; i++) {
        sequential.raw.push((await runRawPods(raw, 1)).podMs[0] ?? NaN);
        const one = await onePod(ctx, `seq-${i}`, times);
        sequential.createToStarted.push(one.total);
        STEPS.forEach((s, k) => sequential.steps[s].push(one.steps[k] ?? NaN));
      }
    } finally {
      watch.stop();
    }
    print(`(c) raw ${ms(percentile(sequential.raw, 50))} ms, create → started ${ms(percentile(sequential.createToStarted, 50))} ms; ${STEPS.map((s) => `${s} +${ms(percentile(sequential.steps[s], 50))}`).join(', ')} (p50, ms)`);
    await removeAll(ctx);
    return { agentBins: bins, bursts, idle, sequential };
  } finally {
    cri.close();
    await cluster.stop();
  }
}

/** The table's rows: one per burst size and build, idle per build, the one-after-another path, and the steps. */
export function apiModeRows(r: ApiModeResult): Row[] {
  const several = r.agentBins.length > 1;
  const rows: Row[] = r.bursts.flatMap((b) => r.agentBins.map((bin, i) => {
    const { ratio, round } = medianRatio(b.rounds, i);
    return {
      measure: `API mode: ${b.pods} pods created at once (scheduler placing them), host network: agent / raw, ${b.rounds.length === 1 ? 'one round' : `median of ${b.rounds.length} rounds`}${several ? ` (${bin})` : ''}; agent CPU per pod`,
      baseline: `raw CRI at ${RAW_CONCURRENCY} in flight, ${seconds(round.rawMs)}`,
      ours: `${ratio.toFixed(2)}× (${seconds(round.agentMs[i] ?? NaN)}); ${ms(percentile(b.cpuMsPerPod[i] ?? [], 50))} ms`,
      target: '1.2×; 5 ms',
    };
  }));
  r.idle.builds.forEach((idle, i) => {
    rows.push({
      measure: `API mode: idle with ${r.idle.pods} pods, ${r.idle.seconds} s after the burst (20 s settling)${several ? ` (${r.agentBins[i] ?? ''}, adopting them)` : ''}: agent RSS / CPU`,
      baseline: `containerd ${idle.containerd.cpuPercent.toFixed(2)} %`,
      ours: `${idle.agent.rssMiB.toFixed(1)} MiB / ${idle.agent.cpuPercent.toFixed(2)} %`,
      target: '64 MiB / 0.5 % of a core',
    });
  });
  const s = r.sequential;
  rows.push({
    measure: `API mode: ${s.raw.length} pods one after another${several ? ` (${r.agentBins[0] ?? ''})` : ''}: p50 create → container \`startedAt\``,
    baseline: `raw CRI ${ms(percentile(s.raw, 50))} ms`,
    ours: `${ms(percentile(s.createToStarted, 50))} ms`,
    target: '+30 ms',
  });
  rows.push({
    measure: `API mode, one after another, each step's p50: ${STEPS.join(' → ')}`,
    baseline: '',
    ours: STEPS.map((step) => `+${ms(percentile(s.steps[step], 50))}`).join(' → ') + ' ms',
    target: 'status ≤ 100 ms',
  });
  return rows;
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, rounds: { type: 'string' }, burst: { type: 'string', multiple: true }, 'agent-bin': { type: 'string', multiple: true }, 'agent-arg': { type: 'string', multiple: true }, 'agent-node-arg': { type: 'string', multiple: true } },
  });
  const rounds = values.rounds === undefined ? undefined : Number(values.rounds);
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) throw new Error(`--rounds must be a positive whole number, not ${String(values.rounds)}`);
  const bursts = values.burst?.map((b) => {
    const n = Number(b);
    if (!(Number.isInteger(n) && n > 0 && n <= 110)) throw new Error(`--burst must be a whole number of pods from 1 to 110, not ${b}`);
    return n;
  });
  const result = await runApiModeBench({
    quick: values.quick, ...(rounds === undefined ? {} : { rounds }), ...(bursts === undefined ? {} : { bursts }),
    ...(values['agent-node-arg'] === undefined ? {} : { agentNodeArgs: values['agent-node-arg'] }),
    ...(values['agent-bin'] === undefined ? {} : { agentBins: values['agent-bin'] }),
    ...(values['agent-arg'] === undefined ? {} : { agentArgs: values['agent-arg'] }),
  });
  process.stdout.write(`${formatTable(apiModeRows(result)).join('\n')}\n`);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench apimode: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
