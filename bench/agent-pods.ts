/**
 * Pod start-up and idle cost of nodeagent next to the runtime's floor, measured in one run on
 * one private containerd (test/helpers/containerd.ts), for the host network and for CNI:
 *
 *   (a) raw floor: RunPodSandbox + CreateContainer + StartContainer straight over CRI
 *       (bench/cri-floor.ts) with the agent's kind of config — cgroup parent under the
 *       instance's cgroup root, a log directory laid out as the agent does — 20 pods one after
 *       another, each from its first call to its container's `startedAt` (ContainerStatus):
 *       p50, p99;
 *   (b) nodeagent: manifest written -> the container's `startedAt` as CRI reports it, 20 pods
 *       one after another (see bench/agent-phases.ts for how it is observed): p50, p99. (a)
 *       and (b) take turns, one pod each, so that both see the same load from the rest of the
 *       machine;
 *   (c) 110 pods at once: all manifests written -> all containers RUNNING, next to the raw
 *       calls measured right before (the agent idle, the raw pods without its labels): total
 *       seconds and the ratio. A pilot times the raw calls at 2, 4 and 8 in flight, twice each
 *       in turn (once with --quick), and chooses the concurrency with the lowest mean; then five
 *       rounds (one with --quick), each a fresh raw burst at that concurrency and the agent's;
 *       the round with the median ratio is the figure, every round is printed;
 *   (d) with those 110 pods running and nothing else happening for 60 s (15 s with --quick):
 *       the agent's VmRSS and its CPU time / wall time, next to containerd's in the same window;
 *       measured on a new agent at -v=2 that adopted the pods (the one of (a)-(c) runs at -v=4
 *       for its step times, which logs a line at each pod's periodic resync).
 *
 * Each network gets its own agent (started as a child process, -v=4, log in the bench's temp
 * directory, which is kept); all pods are removed between phases; the agent and containerd
 * are stopped at the end, also on failure. Differences left between (a) and (b) configs: the
 * raw pods of (a) carry no agent labels (the agent running beside them would clean them up as
 * orphans); the agent also mounts a termination-message file (and /etc/hosts on CNI), passes DNS settings
 * and resources, and makes the pod cgroup itself before RunPodSandbox. (Raw pods given the
 * agent's sandbox and container config, labels, DNS, termination-message mount, resources and
 * masked paths included, burst no slower on the host network: 8.45 against 8.43 s over four
 * interleaved rounds.)
 *
 * Not a test: prints a table per network with the targets next to the numbers, fails on nothing.
 *   node dist/bench/agent-pods.js [--quick]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectCri } from '../src/agent/runtime/cri/index.js';
import { startContainerd, type ContainerdInstance } from '../test/helpers/containerd.js';
import { breakdown, formatBreakdown, readCompleteLog, type StepBreakdown } from './agent-log.js';
import { containerdPid, cpuPercentBetween, measureUsage, sampleProcess, startAgentProcess, tailOf, type AgentProcess, type UsageWindow } from './agent-process.js';
import { joinSequential, removeAll, startBurst, startSequential, type PhaseContext, type SequentialResult } from './agent-phases.js';
import { floorOfSingles, measureCriFloor, percentile, type CriFloorResult, type Percentiles } from './cri-floor.js';
import { formatAgentPodsTable } from './agent-pods-table.js';
import { readCpuTimes, stealPercent } from './steal.js';

export { formatAgentPodsTable } from './agent-pods-table.js';

export type Network = 'host' | 'cni';

export interface AgentPodsOptions {
  /** Shorter idle window (15 s instead of 60 s). */
  readonly quick?: boolean;
  readonly networks?: readonly Network[];
  /** Pods started one after another in (a) and (b) (default 20). */
  readonly sequentialPods?: number;
  /** Pods started at once in (c) and kept for (d) (default 110, the agent's default max pods). */
  readonly burstPods?: number;
  /** Raw concurrencies tried for (c) (default 2, 4, 8). */
  readonly concurrencies?: readonly number[];
  /** Pilot bursts per concurrency, taken in turn (default 2, or 1 with quick). */
  readonly pilotDraws?: number;
  /** Rounds of (c), each a raw burst and the agent's (default 5, or 1 with quick). */
  readonly burstRounds?: number;
  /** Idle window of (d), seconds (default 60, or 15 with quick). */
  readonly idleSeconds?: number;
  /** Seconds between the new agent of (d) starting and its window (default 20). */
  readonly settleSeconds?: number;
  /** -v of the agent (default 4). */
  readonly verbosity?: number;
  /** Where progress lines go (default: stderr; the tables are returned, not printed). */
  readonly print?: (line: string) => void;
}

export interface AgentPodsResult {
  readonly network: Network;
  /** (a) */
  readonly raw: CriFloorResult;
  /** (b) */
  readonly agent: Percentiles & { readonly pods: number; readonly pollsPerPod: number; readonly steps: StepBreakdown };
  /** (c): the pilot's raw bursts, in the order taken; their means by concurrency choose the rounds' concurrency. */
  readonly rawBurst: readonly CriFloorResult[];
  /** (c): the raw burst of the median round (see burstRounds). */
  readonly rawBurstMedian: CriFloorResult;
  readonly agentBurst: {
    readonly pods: number;
    /** The agent's burst of the median round. */
    readonly totalMs: number;
    /** The steps and CPU of the last round (whose pods (d) keeps). */
    readonly steps: StepBreakdown;
    /** CPU time of the agent and of containerd over the burst / its wall time, % of one core. */
    readonly agentPercent: number;
    readonly containerdPercent: number;
  };
  /** (c) round by round, in order. */
  readonly burstRounds: readonly BurstRound[];
  /** The machine's steal time (% of its CPUs' time) over the median round's raw bursts, its agent burst and the idle window. */
  readonly steal: { readonly rawBursts: number; readonly agentBurst: number; readonly idle: number };
  /** (d) */
  readonly agentIdle: UsageWindow;
  readonly containerdIdle: UsageWindow;
  /** Where the agent's log is. */
  readonly agentLog: string;
}

/** One round of (c): a raw burst at the pilot's best concurrency, then the agent's. */
export interface BurstRound {
  readonly raw: CriFloorResult;
  readonly agentMs: number;
  /** The machine's steal time over the round's raw bursts and over the agent's, %. */
  readonly rawSteal: number;
  readonly agentSteal: number;
}

/**
 * The concurrency whose pilot bursts took the least time on average (of equal means, the first
 * tried). One draw a concurrency chose on noise: single bursts differ by ±10 % from one minute
 * to the next, about as much as the concurrencies do.
 */
export function bestConcurrency(pilot: readonly CriFloorResult[]): number {
  const totals = new Map<number, { sum: number; count: number }>();
  for (const b of pilot) {
    const t = totals.get(b.concurrency) ?? { sum: 0, count: 0 };
    totals.set(b.concurrency, { sum: t.sum + b.totalMs, count: t.count + 1 });
  }
  let best: { concurrency: number; mean: number } | undefined;
  for (const [concurrency, t] of totals) {
    const mean = t.sum / t.count;
    if (best === undefined || mean < best.mean) best = { concurrency, mean };
  }
  if (best === undefined) throw new Error('bestConcurrency: no raw bursts');
  return best.concurrency;
}

/** The round whose agent/raw ratio is the median (of an even count, the higher of the middle two). */
export function medianRound(rounds: readonly BurstRound[]): BurstRound {
  const sorted = [...rounds].sort((a, b) => a.agentMs / a.raw.totalMs - b.agentMs / b.raw.totalMs);
  const median = sorted[Math.floor(sorted.length / 2)];
  if (median === undefined) throw new Error('medianRound: no rounds');
  return median;
}

const NODE_NAME = 'bench-node';
/** -v of the agent whose idle cost (d) measures. */
const IDLE_VERBOSITY = 2;
const NAMESPACE = 'bench-agent';

function say(options: AgentPodsOptions, line: string): void {
  (options.print ?? ((l: string) => void process.stderr.write(`${l}\n`)))(line);
}

/** Runs (a) to (d) for one network on a running containerd. */
async function measureNetwork(ctrd: ContainerdInstance, dir: string, network: Network, options: AgentPodsOptions): Promise<AgentPodsResult> {
  const sequential = options.sequentialPods ?? 20;
  const burst = options.burstPods ?? 110;
  const raw = {
    endpoint: ctrd.endpoint,
    network,
    image: ctrd.images.busybox,
    cgroupRoot: `${ctrd.cgroupRoot}/bench-raw`,
    logRoot: ctrd.logDir,
    // Raw pods run beside the agent, which would clean up pods with its labels as orphans.
    agentLabels: false,
  };
  // Warm-up (first CNI setup, page cache) whose p50 also sets the poll's hold-off of (b); (a)
  // itself is measured interleaved with (b).
  const warmFloor = await measureCriFloor({ ...raw, pods: 4 });

  const agentDir = path.join(dir, network);
  const agentOptions = { endpoint: ctrd.endpoint, cgroupRoot: ctrd.cgroupRoot, dir: agentDir, nodeName: NODE_NAME };
  const agent = await startAgentProcess({ ...agentOptions, ...(options.verbosity === undefined ? {} : { verbosity: options.verbosity }) });
  /** The agent of (d), which adopts the pods of (c). */
  let idleAgent: AgentProcess | undefined;
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint });
  const ctx: PhaseContext = { cri, agent, nodeName: NODE_NAME, namespace: NAMESPACE, image: ctrd.images.busybox, hostNetwork: network === 'host', cgroupRoot: ctrd.cgroupRoot };
  try {
    say(options, `[${network}] nodeagent pid ${agent.pid}, log ${agent.logFile}`);
    const poll = { holdOffMs: Math.floor(warmFloor.p50Ms / 2), intervalMs: 10 };
    await startSequential(ctx, 'warm', 2, poll); // warm-up: the agent's code paths, as the raw warm-up
    await removeAll(ctx);

    // (a) and (b) one pod each in turn, so that both see the same load from the rest of the
    // machine (a shared VM's steal time drifts by tens of percent within minutes).
    say(options, `[${network}] (a)/(b) raw CRI and nodeagent in turn, ${sequential} pods each (poll: hold-off ${poll.holdOffMs} ms, then every ${poll.intervalMs} ms)`);
    const singles: CriFloorResult[] = [];
    const seqRuns: SequentialResult[] = [];
    for (let i = 0; i < sequential; i++) {
      singles.push(await measureCriFloor({ ...raw, pods: 1 }));
      seqRuns.push(await startSequential(ctx, `seq${i}`, 1, poll));
    }
    const floor = floorOfSingles(singles);
    const seq = joinSequential(seqRuns);
    say(options, `[${network}] (a) p50 ${floor.p50Ms} ms, p99 ${floor.p99Ms} ms`);
    const seqSteps = breakdown(await readCompleteLog(agent.logFile, seq.writtenAt), seq.writtenAt, seq.seenAt);
    say(options, `[${network}] (b) p50 ${percentile(seq.latenciesMs, 50)} ms, p99 ${percentile(seq.latenciesMs, 99)} ms; ${formatBreakdown(seqSteps)}`);
    say(options, `[${network}] removing the ${sequential} pods`);
    await removeAll(ctx);

    // (c) in rounds, each a raw burst right before the agent's (the agent idles meanwhile), for
    // the same reason: the machine's speed drifts by tens of percent between minutes, so one
    // pair compares little; the median round's pair is the figure. A pilot first times the raw
    // calls at every concurrency, twice in turn, and only chooses the best one on average (see
    // bestConcurrency): each round then times a fresh
    // raw burst at it, as taking the pilot's fastest of three draws as a round's raw figure
    // would set the agent against a minimum and bias that round's ratio up. The last round's
    // pods stay for (d).
    const roundCount = Math.max(1, Math.floor(options.burstRounds ?? (options.quick === true ? 1 : 5)));
    const rounds: BurstRound[] = [];
    const ctrdPid = await containerdPid(ctrd);
    const pilot: CriFloorResult[] = [];
    const draws = Math.max(1, Math.floor(options.pilotDraws ?? (options.quick === true ? 1 : 2)));
    for (let draw = 1; draw <= draws; draw++) {
      for (const concurrency of options.concurrencies ?? [2, 4, 8]) {
        say(options, `[${network}] (c) pilot ${draw}/${draws}: raw CRI, ${burst} pods, ${concurrency} in flight`);
        const result = await measureCriFloor({ ...raw, pods: burst, concurrency });
        say(options, `[${network}] (c) pilot ${draw}/${draws}: raw, ${concurrency} in flight: ${(result.totalMs / 1000).toFixed(1)} s`);
        pilot.push(result);
      }
    }
    const best = bestConcurrency(pilot);
    say(options, `[${network}] (c) pilot: ${best} in flight was fastest on average`);
    let last: { steps: StepBreakdown; agentPercent: number; containerdPercent: number } | undefined;
    for (let round = 1; round <= roundCount; round++) {
      const tag = roundCount === 1 ? '' : ` round ${round}/${roundCount}`;
      const rawStealFrom = await readCpuTimes();
      say(options, `[${network}] (c)${tag} raw CRI, ${burst} pods, ${best} in flight`);
      const rawRun = await measureCriFloor({ ...raw, pods: burst, concurrency: best });
      say(options, `[${network}] (c)${tag} raw, ${best} in flight: ${(rawRun.totalMs / 1000).toFixed(1)} s`);
      const rawSteal = stealPercent(rawStealFrom, await readCpuTimes());
      say(options, `[${network}] (c)${tag} nodeagent, ${burst} manifests at once`);
      const before = await Promise.all([sampleProcess(agent.pid), sampleProcess(ctrdPid)]);
      const burstStealFrom = await readCpuTimes();
      const burstRun = await startBurst(ctx, `burst${round}`, burst, 250);
      const agentSteal = stealPercent(burstStealFrom, await readCpuTimes());
      const after = await Promise.all([sampleProcess(agent.pid), sampleProcess(ctrdPid)]);
      const cpu = { agentPercent: cpuPercentBetween(before[0], after[0]), containerdPercent: cpuPercentBetween(before[1], after[1]) };
      const steps = breakdown(await readCompleteLog(agent.logFile, burstRun.writtenAt), burstRun.writtenAt, burstRun.seenAt);
      rounds.push({ raw: rawRun, agentMs: burstRun.totalMs, rawSteal, agentSteal });
      last = { steps, ...cpu };
      say(options, `[${network}] (c)${tag} ${(burstRun.totalMs / 1000).toFixed(1)} s (raw ${(rawRun.totalMs / 1000).toFixed(1)} s, ${(burstRun.totalMs / rawRun.totalMs).toFixed(2)}×); CPU: agent ${cpu.agentPercent.toFixed(0)} %, containerd ${cpu.containerdPercent.toFixed(0)} % of a core; machine steal: raw bursts ${rawSteal.toFixed(0)} %, agent's ${agentSteal.toFixed(0)} %; ${formatBreakdown(steps)}`);
      if (round < roundCount) {
        say(options, `[${network}] (c)${tag} removing the ${burst} pods`);
        await removeAll(ctx);
      }
    }
    if (last === undefined) throw new Error('no burst round ran');
    const median = medianRound(rounds);
    const idleSeconds = options.idleSeconds ?? (options.quick === true ? 15 : 60);
    // The new agent of (d) first syncs every adopted pod and relists: 20 s before the window.
    const settleSeconds = options.settleSeconds ?? 20;
    // (d) at the verbosity a node runs with (-v=2), not the -v=4 that (b) and (c) read their
    // steps from (a log line per resync): that agent stops and a new one adopts the 110 pods.
    await agent.stop();
    idleAgent = await startAgentProcess({ ...agentOptions, verbosity: IDLE_VERBOSITY });
    say(options, `[${network}] (d) ${burst} pods running, adopted by a new agent at -v=${IDLE_VERBOSITY} (pid ${idleAgent.pid}): settling ${settleSeconds} s, then measuring ${idleSeconds} s`);
    await delay(settleSeconds * 1000);
    const idleStealFrom = await readCpuTimes();
    const [agentIdle, containerdIdle] = await measureUsage([idleAgent.pid, ctrdPid], idleSeconds);
    const idleSteal = stealPercent(idleStealFrom, await readCpuTimes());
    if (agentIdle === undefined || containerdIdle === undefined) throw new Error('no usage samples');
    say(options, `[${network}] removing the ${burst} pods`);
    const removalMs = await removeAll({ ...ctx, agent: idleAgent });
    say(options, `[${network}] the agent removed ${burst} pods in ${(removalMs / 1000).toFixed(1)} s`);
    return {
      network,
      raw: floor,
      agent: { pods: seq.latenciesMs.length, p50Ms: percentile(seq.latenciesMs, 50), p99Ms: percentile(seq.latenciesMs, 99), pollsPerPod: seq.pollsPerPod, steps: seqSteps },
      rawBurst: pilot,
      rawBurstMedian: median.raw,
      agentBurst: { pods: burst, totalMs: median.agentMs, steps: last.steps, agentPercent: last.agentPercent, containerdPercent: last.containerdPercent },
      burstRounds: rounds,
      steal: { rawBursts: median.rawSteal, agentBurst: median.agentSteal, idle: idleSteal },
      agentIdle,
      containerdIdle,
      agentLog: agent.logFile,
    };
  } catch (err) {
    say(options, `[${network}] failed; the end of ${agent.logFile}:\n${await tailOf(agent.logFile)}`);
    throw err;
  } finally {
    await agent.stop();
    await idleAgent?.stop();
    cri.close();
    await rm(path.join(agentDir, 'manifests'), { recursive: true, force: true });
  }
}

/**
 * Starts a containerd, measures each network in turn, stops containerd (also on failure) and
 * returns the results. The agents' logs stay in a temporary directory (named in the progress lines).
 */
export async function runAgentPodsBench(options: AgentPodsOptions = {}): Promise<AgentPodsResult[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-agent-pods-'));
  const ctrd = await startContainerd();
  say(options, `containerd ${ctrd.endpoint} (cgroup root ${ctrd.cgroupRoot}); agent logs under ${dir}`);
  const results: AgentPodsResult[] = [];
  try {
    for (const network of options.networks ?? ['host', 'cni']) results.push(await measureNetwork(ctrd, dir, network, options));
    return results;
  } finally {
    await ctrd.stop();
  }
}

/**
 * Makes SIGINT and SIGTERM end the process through process.exit, so that the exit hooks run:
 * the agent is killed (agent-process.ts) and containerd stopped with its pods (test/helpers).
 */
export function exitOnSignals(): void {
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const results = await runAgentPodsBench({ quick: values.quick });
  for (const r of results) process.stdout.write(`${formatAgentPodsTable(r).join('\n')}\n\n`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`agent-pods: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
