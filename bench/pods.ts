/**
 * The pod bench: nodeagent's pod start-up, idle cost and pod removal next to raw CRI calls
 * measured in the same run, on one private containerd (test/helpers/containerd.ts), for the host
 * network and for CNI. For each network:
 *
 *   (a) 20 pods one after another, a raw pod (bench/cri.ts) and an agent pod in turn: p50 and p99
 *       from the manifest's write (raw: the first call) to the container's `startedAt`;
 *   (b) 110 pods at once, in rounds (3; 1 with --quick), each a raw burst at 4 in flight then the
 *       agent's burst (every manifest written at once), each timed from just before its first
 *       call or write to its last container's `startedAt`; the figure is the median agent/raw
 *       ratio of the rounds;
 *   (c) the last round's 110 pods left running, adopted by a fresh agent: after 20 s its RSS and
 *       CPU share over a window of 60 s (15 s with --quick), next to containerd's CPU share;
 *   (d) every manifest deleted: the time until the runtime's objects, the pods' directories and
 *       their cgroups are gone.
 *
 * The machine's steal time is printed for every measured window. Why the method is as it is:
 * bench/README.md. With --agent-bin given twice (two builds, e.g. two checkouts' bin/nodeagent),
 * each round of (b) times both builds' bursts after the raw one, in alternating order, each on
 * a freshly started agent; (a), (c) and (d) measure the first.
 *
 *   node dist/bench/pods.js [--quick] [--network host|cni] [--agent-bin PATH]... [--rounds N] [--agent-node-arg=--cpu-prof ...]
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL } from '../src/agent/kuberuntime/index.js';
import { connectCri, type CriClient } from '../src/agent/runtime/cri/index.js';
import { startContainerd, type ContainerdInstance } from '../test/helpers/containerd.js';
import { waitFor } from '../test/helpers/wait.js';
import { AGENT_BIN, containerdPid, measureUsage, podManifest, sampleProcess, shebangCommand, startAgent, tailOf, writeManifests, type AgentProcess, type Usage } from './agent.js';
import { epochMs, runRawPods, startedAt, type Network, type RawPodOptions } from './cri.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, ms, percentile, seconds, type Row } from './table.js';

export interface PodBenchOptions {
  readonly quick?: boolean;
  readonly networks?: readonly Network[];
  /** Builds of the agent to compare in (b) (default: this checkout's bin/nodeagent). */
  readonly agentBins?: readonly string[];
  /** Rounds of (b) (default 3, or 1 with quick). */
  readonly rounds?: number;
  /** Node's flags added to those of the #! line for every agent (e.g. `--cpu-prof`, `--cpu-prof-dir=DIR`). */
  readonly agentNodeArgs?: readonly string[];
  /** Progress lines (default: stderr). */
  readonly print?: (line: string) => void;
}

export interface BurstRound {
  readonly rawMs: number;
  /** Per build, in the order of agentBins. */
  readonly agentMs: readonly number[];
}

export interface NetworkResult {
  readonly network: Network;
  readonly sequential: { readonly raw: readonly number[]; readonly agent: readonly number[] };
  readonly rounds: readonly BurstRound[];
  /** The first build's CPU time over each round's burst divided by the pods, ms. */
  readonly cpuMsPerPod: readonly number[];
  readonly idle: { readonly seconds: number; readonly agent: Usage; readonly containerd: Usage };
  readonly removalMs: number;
}

const SEQUENTIAL = 20;
const BURST = 110;
/** Pods in flight in the raw bursts (the baseline of every burst row). */
export const RAW_CONCURRENCY = 4;
const NODE_NAME = 'bench-node';
const NAMESPACE = 'bench';

/** The median agent/raw ratio of the rounds for one build (of an even count, the higher middle one), with its round. */
export function medianRatio(rounds: readonly BurstRound[], build = 0): { readonly ratio: number; readonly round: BurstRound } {
  const ratios = rounds.map((round) => ({ ratio: (round.agentMs[build] ?? NaN) / round.rawMs, round })).sort((a, b) => a.ratio - b.ratio);
  const median = ratios[Math.floor(ratios.length / 2)];
  if (median === undefined) throw new Error('medianRatio: no rounds');
  return median;
}

interface Ctx {
  readonly cri: CriClient;
  readonly manifestDir: string;
  readonly rootDir: string;
  readonly cgroupRoot: string;
  readonly image: string;
  readonly hostNetwork: boolean;
  readonly logFile: string;
}

const manifest = (ctx: Ctx, name: string): { file: string; text: string } =>
  ({ file: `${name}.yaml`, text: podManifest({ name, namespace: NAMESPACE, image: ctx.image, hostNetwork: ctx.hostNetwork }) });

/** Writes one manifest and polls CRI every 10 ms until its container runs: write -> startedAt, ms. */
async function startOne(ctx: Ctx, name: string): Promise<number> {
  const podName = `${name}-${NODE_NAME}`;
  const t0 = performance.now();
  await writeManifests(ctx.manifestDir, [manifest(ctx, name)]);
  for (;;) {
    const [container] = await ctx.cri.listContainers({ labelSelector: { [POD_NAME_LABEL]: podName }, state: { state: 'CONTAINER_RUNNING' } });
    if (container !== undefined) return (await startedAt(ctx.cri, container.id)) - epochMs(t0);
    if (performance.now() - t0 > 60_000) throw new Error(`pod ${podName} not running 60 s after its manifest was written; see ${ctx.logFile}`);
    await delay(10);
  }
}

/** Writes `count` manifests at once and polls every 250 ms until all their containers run: writes -> the last startedAt, ms. */
async function startBurst(ctx: Ctx, prefix: string, count: number): Promise<number> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const t0 = performance.now();
  await writeManifests(ctx.manifestDir, names.map((n) => manifest(ctx, n)));
  for (;;) {
    const running = (await ctx.cri.listContainers({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE }, state: { state: 'CONTAINER_RUNNING' } }))
      .filter((c) => (c.labels[POD_NAME_LABEL] ?? '').startsWith(`${prefix}-`));
    if (running.length >= count) return Math.max(...(await Promise.all(running.map((c) => startedAt(ctx.cri, c.id))))) - epochMs(t0);
    if (performance.now() - t0 > 600_000) throw new Error(`${running.length} of ${count} pods running after 600 s; see ${ctx.logFile}`);
    await delay(250);
  }
}

/** The agent's pods still on the node: sandboxes, pod directories, pod cgroups ('' when none). */
async function leftovers(ctx: Ctx): Promise<string> {
  const sandboxes = await ctx.cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE } });
  const podDirs = await readdir(path.join(ctx.rootDir, 'pods')).catch(() => []); // not made yet: no pods
  let cgroups = 0;
  for (const hierarchy of await readdir('/sys/fs/cgroup')) {
    const top = path.join('/sys/fs/cgroup', hierarchy, ctx.cgroupRoot, 'orchpods');
    for (const dir of [top, path.join(top, 'burstable'), path.join(top, 'besteffort')]) {
      cgroups += (await readdir(dir).catch(() => [])).filter((e) => e.startsWith('pod')).length; // hierarchy without them: none
    }
  }
  return [[sandboxes.length, 'sandboxes'], [podDirs.length, 'pod directories'], [cgroups, 'pod cgroups']]
    .filter(([n]) => n !== 0).map(([n, what]) => `${String(n)} ${String(what)}`).join(', ');
}

/** Deletes every manifest and waits until the agent has removed its pods entirely: ms. */
async function removeAll(ctx: Ctx): Promise<number> {
  const t0 = performance.now();
  const files = await readdir(ctx.manifestDir);
  await Promise.all(files.map((f) => rm(path.join(ctx.manifestDir, f), { force: true })));
  let left = '';
  try {
    await waitFor('nodeagent to remove its pods', async () => (left = await leftovers(ctx)) === '', { timeoutMs: 180_000, intervalMs: 100 });
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; left: ${left}; see ${ctx.logFile}`, { cause: err });
  }
  return performance.now() - t0;
}

async function measureNetwork(ctrd: ContainerdInstance, dir: string, network: Network, o: PodBenchOptions): Promise<NetworkResult> {
  const print = o.print ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const say = (line: string): void => {
    print(`[${network}] ${line}`);
  };
  const bins = o.agentBins ?? [AGENT_BIN];
  const raw: RawPodOptions = { endpoint: ctrd.endpoint, network, image: ctrd.images.busybox, cgroupRoot: `${ctrd.cgroupRoot}/bench-raw`, logRoot: ctrd.logDir };
  const agentDir = path.join(dir, network);
  const nodeFlags = o.agentNodeArgs === undefined ? undefined : [...(await shebangCommand()).nodeFlags, ...o.agentNodeArgs];
  const base = { endpoint: ctrd.endpoint, cgroupRoot: ctrd.cgroupRoot, dir: agentDir, nodeName: NODE_NAME, ...(nodeFlags === undefined ? {} : { nodeFlags }) };
  let agent: AgentProcess = await startAgent({ ...base, bin: bins[0] ?? AGENT_BIN });
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint });
  const ctx: Ctx = { cri, manifestDir: agent.manifestDir, rootDir: agent.rootDir, cgroupRoot: ctrd.cgroupRoot, image: ctrd.images.busybox, hostNetwork: network === 'host', logFile: agent.logFile };
  /** The agent of the given build, started afresh unless it is the one running (the node has no pods of the agent then). */
  const use = async (bin: string, fresh: boolean): Promise<AgentProcess> => {
    if (fresh || agent.bin !== path.resolve(bin)) {
      await agent.stop();
      agent = await startAgent({ ...base, bin });
    }
    return agent;
  };
  try {
    say(`nodeagent ${agent.bin} (pid ${agent.pid}), log ${agent.logFile}`);
    // Warm-up of both sides (the first CNI setup, the page cache, the agent's code paths).
    await runRawPods(raw, 2);
    for (let i = 0; i < 2; i++) await startOne(ctx, `warm-${i}`);
    await removeAll(ctx);

    say(`(a) ${SEQUENTIAL} pods one after another, raw and agent in turn`);
    const sequential = { raw: [] as number[], agent: [] as number[] };
    const seqSteal = await withSteal(async () => {
      for (let i = 0; i < SEQUENTIAL; i++) {
        sequential.raw.push((await runRawPods(raw, 1)).podMs[0] ?? NaN);
        sequential.agent.push(await startOne(ctx, `seq-${i}`));
      }
    });
    const p = (v: readonly number[]): string => `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))} ms`;
    say(`(a) raw ${p(sequential.raw)}, agent ${p(sequential.agent)} (p50 / p99); steal ${seqSteal.steal.toFixed(0)} %`);
    await removeAll(ctx);

    const roundCount = o.rounds ?? (o.quick === true ? 1 : 3);
    const rounds: BurstRound[] = [];
    const cpuMsPerPod: number[] = [];
    for (let r = 0; r < roundCount; r++) {
      const tag = `(b) round ${r + 1}/${roundCount}`;
      const rawBurst = await withSteal(() => runRawPods(raw, BURST, RAW_CONCURRENCY));
      say(`${tag}: raw, ${RAW_CONCURRENCY} in flight: ${seconds(rawBurst.result.totalMs)} (steal ${rawBurst.steal.toFixed(0)} %)`);
      const agentMs: number[] = [];
      // Two builds take turns going first, so that neither always follows the raw burst.
      const order = bins.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const [k, i] of order.entries()) {
        const bin = bins[i] ?? AGENT_BIN;
        const running = await use(bin, bins.length > 1);
        const cpu0 = await sampleProcess(running.pid);
        const burst = await withSteal(() => startBurst(ctx, `burst${r}-${i}`, BURST));
        const cpu = (await sampleProcess(running.pid)).cpuSeconds - cpu0.cpuSeconds;
        agentMs[i] = burst.result;
        if (i === 0) cpuMsPerPod.push((cpu * 1000) / BURST);
        say(`${tag}: agent${bins.length > 1 ? ` ${bin}` : ''}: ${seconds(burst.result)} (${(burst.result / rawBurst.result.totalMs).toFixed(2)}×; agent CPU ${cpu.toFixed(1)} s; steal ${burst.steal.toFixed(0)} %)`);
        if (r < roundCount - 1 || k < order.length - 1) await removeAll(ctx);
      }
      rounds.push({ rawMs: rawBurst.result.totalMs, agentMs });
    }

    const settle = 20;
    const window = o.quick === true ? 15 : 60;
    agent = await use(bins[0] ?? AGENT_BIN, true);
    say(`(c) ${BURST} pods adopted by a fresh agent (pid ${agent.pid}): settling ${settle} s, then measuring ${window} s`);
    await delay(settle * 1000);
    const idle = await withSteal(async () => measureUsage([agent.pid, await containerdPid(ctrd)], window));
    const [agentIdle, containerdIdle] = idle.result;
    if (agentIdle === undefined || containerdIdle === undefined) throw new Error('no usage samples');
    say(`(c) agent ${agentIdle.rssMiB.toFixed(1)} MiB, ${agentIdle.cpuPercent.toFixed(2)} %; containerd ${containerdIdle.cpuPercent.toFixed(2)} % (steal ${idle.steal.toFixed(0)} %)`);

    const removal = await withSteal(() => removeAll(ctx));
    say(`(d) ${BURST} pods removed in ${seconds(removal.result)} (steal ${removal.steal.toFixed(0)} %)`);
    return { network, sequential, rounds, cpuMsPerPod, idle: { seconds: window, agent: agentIdle, containerd: containerdIdle }, removalMs: removal.result };
  } catch (err) {
    say(`failed; the end of ${agent.logFile}:\n${await tailOf(agent.logFile)}`);
    throw err;
  } finally {
    await agent.stop();
    cri.close();
    await rm(agent.manifestDir, { recursive: true, force: true });
  }
}

/** Starts a containerd, measures each network in turn, stops containerd (also on failure). The agents' logs stay in a temporary directory. */
export async function runPodBench(o: PodBenchOptions = {}): Promise<NetworkResult[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-pods-'));
  const ctrd = await startContainerd();
  (o.print ?? ((l: string) => void process.stderr.write(`${l}\n`)))(`containerd ${ctrd.endpoint}; agent logs under ${dir}`);
  try {
    const results: NetworkResult[] = [];
    for (const network of o.networks ?? ['host', 'cni']) results.push(await measureNetwork(ctrd, dir, network, o));
    return results;
  } finally {
    await ctrd.stop();
  }
}

const NETWORK_NAMES: Readonly<Record<Network, string>> = { host: 'host network', cni: 'CNI' };
const SHORT_NAMES: Readonly<Record<Network, string>> = { host: 'host', cni: 'CNI' };

/** The rows of the figures table (bench/README.md): one per network for (a) and (b) (per build for (b)), one for (c) and for (d). */
export function podRows(results: readonly NetworkResult[], agentBins: readonly string[] = [AGENT_BIN]): Row[] {
  const both = (f: (r: NetworkResult) => string): string => results.map((r) => `${SHORT_NAMES[r.network]} ${f(r)}`).join(', ');
  const p = (v: readonly number[]): string => `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))} ms`;
  const rows: Row[] = results.map((r) => ({
    measure: `pod start, ${SEQUENTIAL} one after another, ${NETWORK_NAMES[r.network]}: p50 / p99 (write → container \`startedAt\`)`,
    baseline: `raw CRI ${p(r.sequential.raw)}`,
    ours: p(r.sequential.agent),
    target: '+30 / +150 ms',
  }));
  for (const r of results) {
    agentBins.forEach((bin, i) => {
      const { ratio, round } = medianRatio(r.rounds, i);
      rows.push({
        measure: `${BURST} pods at once, ${NETWORK_NAMES[r.network]}: agent / raw, ${r.rounds.length === 1 ? 'one round' : `median of ${r.rounds.length} rounds`}${agentBins.length > 1 ? ` (${bin})` : ''}${i === 0 ? '; agent CPU per pod (p50 of the rounds)' : ''}`,
        baseline: `raw CRI at ${RAW_CONCURRENCY} in flight, ${seconds(round.rawMs)}`,
        ours: `${ratio.toFixed(2)}× (${seconds(round.agentMs[i] ?? NaN)})${i === 0 ? `; ${ms(percentile(r.cpuMsPerPod, 50))} ms` : ''}`,
        target: i === 0 ? '1.15×; 5 ms' : '1.15×',
      });
    });
  }
  const window = results[0]?.idle.seconds ?? 0;
  rows.push({
    measure: `idle with ${BURST} pods, ${window} s: agent RSS / CPU`,
    baseline: `containerd: ${both((r) => `${r.idle.containerd.cpuPercent.toFixed(2)} %`)}`,
    ours: both((r) => `${r.idle.agent.rssMiB.toFixed(1)} MiB / ${r.idle.agent.cpuPercent.toFixed(2)} %`),
    target: '80 MiB / 1 % of a core',
  });
  rows.push({ measure: `removing ${BURST} pods (manifests deleted → sandboxes, pod directories, cgroups gone)`, baseline: '', ours: both((r) => seconds(r.removalMs)), target: '' });
  return rows;
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      network: { type: 'string', multiple: true },
      'agent-bin': { type: 'string', multiple: true },
      rounds: { type: 'string' },
      'agent-node-arg': { type: 'string', multiple: true },
    },
  });
  const networks = (values.network ?? ['host', 'cni']).map((n) => {
    if (n !== 'host' && n !== 'cni') throw new Error(`--network is host or cni, not ${n}`);
    return n;
  });
  const rounds = values.rounds === undefined ? undefined : Number(values.rounds);
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) throw new Error(`--rounds must be a positive whole number, not ${String(values.rounds)}`);
  const agentBins = (values['agent-bin'] ?? [AGENT_BIN]).map((b) => path.resolve(b));
  const results = await runPodBench({
    quick: values.quick, networks, agentBins, ...(rounds === undefined ? {} : { rounds }),
    ...(values['agent-node-arg'] === undefined ? {} : { agentNodeArgs: values['agent-node-arg'] }),
  });
  process.stdout.write(`${formatTable(podRows(results, agentBins)).join('\n')}\n`);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench pods: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
