/**
 * Idle CPU of two agent configurations side by side: two private containerd instances with
 * the same pods running (110 host-network busybox `sleep` pods by default), one agent on each,
 * both idle over the same windows, so that both share whatever else the machine does (a VM's
 * steal time moves a single agent's idle figure by more than the differences looked for).
 * Configuration A and B swap instances every round, so a difference between the instances
 * does not count as one between the configurations; each round prints both agents' CPU share and RSS,
 * the two containerds' (the baseline: what the runtime costs at the same time) and the
 * machine's steal time, and the end the means.
 *
 * A configuration is the node flags the agent runs with (default: those of bin/nodeagent's #!
 * line; the environment that line sets applies to both); the agents are started one after the
 * other, each adopting the pods already running.
 * Not a test: prints, fails on nothing but an error.
 *
 *   node dist/bench/idle-pair.js [--a="<node flags>"] [--b="<node flags>"] [--pods 110]
 *     [--rounds 4] [--window 40] [--settle 20]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectCri, type CriClient } from '../src/agent/runtime/cri/index.js';
import { startContainerd, type ContainerdInstance } from '../test/helpers/containerd.js';
import { startBurst } from './agent-phases.js';
import { containerdPid, measureUsage, shebangNodeFlags, startAgentProcess, type AgentProcess } from './agent-process.js';
import { exitOnSignals } from './agent-pods.js';
import { readCpuTimes, stealPercent } from './steal.js';

export interface IdlePairOptions {
  readonly a: readonly string[];
  readonly b: readonly string[];
  readonly pods: number;
  readonly rounds: number;
  readonly windowSeconds: number;
  readonly settleSeconds: number;
}

interface Instance {
  readonly ctrd: ContainerdInstance;
  readonly containerdPid: number;
  readonly cri: CriClient;
  readonly dir: string;
}

export interface RoundResult {
  /** Configuration -> the agent's CPU share over the window, % of one core. */
  readonly agent: { readonly a: number; readonly b: number };
  /** Configuration -> the agent's mean VmRSS over the window, MiB. */
  readonly rssMiB: { readonly a: number; readonly b: number };
  /** The containerd instance under configuration A's agent, and under B's, % of one core. */
  readonly containerd: { readonly a: number; readonly b: number };
  readonly stealPercent: number;
  /** Which instance ran configuration A (0 or 1). */
  readonly aOn: number;
}

const NODE_NAME = 'idle-pair';
const mean = (v: readonly number[]): number => (v.length === 0 ? 0 : v.reduce((x, y) => x + y, 0) / v.length);

/** The agent on an instance, with the given node flags (default: bin/nodeagent's). */
function startAgent(inst: Pick<Instance, 'ctrd' | 'dir'>, nodeFlags?: readonly string[]): Promise<AgentProcess> {
  return startAgentProcess({
    endpoint: inst.ctrd.endpoint, cgroupRoot: inst.ctrd.cgroupRoot, dir: inst.dir, nodeName: NODE_NAME, verbosity: 2,
    ...(nodeFlags === undefined ? {} : { nodeFlags }),
  });
}

async function startInstance(pods: number, log: (line: string) => void): Promise<Instance> {
  const ctrd = await startContainerd({});
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-idle-pair-'));
  try {
    const inst = { ctrd, containerdPid: await containerdPid(ctrd), cri, dir };
    const agent = await startAgent(inst);
    try {
      const ctx = { cri, agent, nodeName: NODE_NAME, namespace: 'idle', image: ctrd.images.busybox, hostNetwork: true, cgroupRoot: ctrd.cgroupRoot };
      const burst = await startBurst(ctx, 'p', pods, 250);
      log(`instance ${ctrd.dir}: ${pods} pods running after ${(burst.totalMs / 1000).toFixed(1)} s`);
    } finally {
      await agent.stop();
    }
    return inst;
  } catch (err) {
    await stopInstance({ ctrd, cri, dir });
    throw err;
  }
}

async function stopInstance(inst: Pick<Instance, 'ctrd' | 'cri' | 'dir'>): Promise<void> {
  inst.cri.close();
  await inst.ctrd.stop();
  await rm(inst.dir, { recursive: true, force: true });
}

/** One round: A's agent on instance `aOn`, B's on the other, both idle over the same window. */
async function round(insts: readonly Instance[], o: IdlePairOptions, aOn: number): Promise<RoundResult> {
  const flagsOf = (i: number): readonly string[] => (i === aOn ? o.a : o.b);
  const agents: AgentProcess[] = [];
  try {
    for (const [i, inst] of insts.entries()) agents.push(await startAgent(inst, flagsOf(i)));
    await delay(o.settleSeconds * 1000);
    const cpu0 = await readCpuTimes();
    const usage = await measureUsage([...agents.map((a) => a.pid), ...insts.map((x) => x.containerdPid)], o.windowSeconds);
    const cpu1 = await readCpuTimes();
    const share = usage.map((u) => u.cpuPercent);
    const rss = usage.map((u) => u.rssMiB);
    const bOn = 1 - aOn;
    return {
      agent: { a: share[aOn] ?? 0, b: share[bOn] ?? 0 },
      rssMiB: { a: rss[aOn] ?? 0, b: rss[bOn] ?? 0 },
      containerd: { a: share[2 + aOn] ?? 0, b: share[2 + bOn] ?? 0 },
      stealPercent: stealPercent(cpu0, cpu1),
      aOn,
    };
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
  }
}

export async function runIdlePair(o: IdlePairOptions, log: (line: string) => void): Promise<RoundResult[]> {
  const insts: Instance[] = [];
  try {
    for (let i = 0; i < 2; i++) insts.push(await startInstance(o.pods, log));
    const results: RoundResult[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const res = await round(insts, o, r % 2);
      results.push(res);
      log(
        `round ${r + 1}: A ${res.agent.a.toFixed(2)} % ${res.rssMiB.a.toFixed(1)} MiB (instance ${res.aOn}), B ${res.agent.b.toFixed(2)} % ${res.rssMiB.b.toFixed(1)} MiB (instance ${1 - res.aOn}); ` +
          `containerd under A ${res.containerd.a.toFixed(2)} %, under B ${res.containerd.b.toFixed(2)} %; steal ${res.stealPercent.toFixed(1)} %`,
      );
    }
    return results;
  } finally {
    for (const inst of insts) await stopInstance(inst);
  }
}

/** The summary lines: each configuration's flags and mean CPU share, and the paired difference. */
export function formatIdlePair(o: IdlePairOptions, results: readonly RoundResult[]): string[] {
  const a = results.map((r) => r.agent.a);
  const b = results.map((r) => r.agent.b);
  const diffs = results.map((r) => r.agent.b - r.agent.a);
  const range = (v: readonly number[], digits = 2): string => `${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}`;
  const rssA = results.map((r) => r.rssMiB.a);
  const rssB = results.map((r) => r.rssMiB.b);
  return [
    `A [${o.a.join(' ')}]: mean ${mean(a).toFixed(2)} % of a core (${range(a)}); RSS ${mean(rssA).toFixed(1)} MiB (${range(rssA, 1)})`,
    `B [${o.b.join(' ')}]: mean ${mean(b).toFixed(2)} % of a core (${range(b)}); RSS ${mean(rssB).toFixed(1)} MiB (${range(rssB, 1)})`,
    `B − A per round: ${diffs.map((d) => d.toFixed(2)).join(', ')}; mean ${mean(diffs).toFixed(2)} points`,
    `containerd beside them: mean ${mean(results.flatMap((r) => [r.containerd.a, r.containerd.b])).toFixed(2)} %; steal ${range(results.map((r) => r.stealPercent))} %`,
  ];
}

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number, got ${JSON.stringify(value)}`);
  return n;
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      pods: { type: 'string', default: '110' },
      rounds: { type: 'string', default: '4' },
      window: { type: 'string', default: '40' },
      settle: { type: 'string', default: '20' },
    },
  });
  const defaults = await shebangNodeFlags();
  const flags = (v: string | undefined): string[] => (v === undefined ? defaults : v.split(/\s+/).filter((f) => f !== ''));
  const o: IdlePairOptions = {
    a: flags(values.a),
    b: flags(values.b),
    pods: positive('pods', values.pods),
    rounds: positive('rounds', values.rounds),
    windowSeconds: positive('window', values.window),
    settleSeconds: positive('settle', values.settle),
  };
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  const results = await runIdlePair(o, print);
  for (const line of formatIdlePair(o, results)) print(line);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`idle-pair: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
