/**
 * Two agent configurations idle side by side: two private containerd instances with the same
 * pods running (110 host-network busybox `sleep` pods), one agent on each, both measured over the
 * same windows so that both share whatever else the machine does (a VM's steal time moves one
 * agent's idle figure by more than the differences looked for). The configurations swap
 * instances every round, so a difference between the instances does not count as one between
 * the configurations. Each round prints both agents' CPU share and RSS, the two containerds' CPU
 * (what the runtime costs meanwhile) and the machine's steal time; the end prints the means.
 *
 * A configuration is a build of the agent (--a-bin/--b-bin: a bin/nodeagent-like launcher, e.g.
 * another checkout's; default this checkout's) and the node flags it runs with (--a-flags/
 * --b-flags; default the flags of that launcher's #! line, whose environment applies either way).
 *
 *   node dist/bench/experiments/idle-pair.js [--a-bin PATH] [--a-flags="<node flags>"]
 *     [--b-bin PATH] [--b-flags="<node flags>"] [--pods 110] [--rounds 4] [--window 40] [--settle 20]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectCri } from '../../src/agent/runtime/cri/index.js';
import { startContainerd, type ContainerdInstance } from '../../test/helpers/containerd.js';
import { waitFor } from '../../test/helpers/wait.js';
import { AGENT_BIN, containerdPid, measureUsage, podManifest, startAgent, writeManifests, type AgentProcess } from '../agent.js';
import { withSteal } from '../steal.js';
import { exitOnSignals, isMain } from '../table.js';

export interface Configuration {
  readonly bin: string;
  /** Node's flags; undefined: those of the launcher's #! line. */
  readonly nodeFlags?: readonly string[];
}

export interface IdlePairOptions {
  readonly a: Configuration;
  readonly b: Configuration;
  readonly pods: number;
  readonly rounds: number;
  readonly windowSeconds: number;
  readonly settleSeconds: number;
}

export interface RoundResult {
  /** Each configuration's agent: CPU share over the window (% of one core) and RSS at its end (MiB). */
  readonly a: { readonly cpu: number; readonly rssMiB: number };
  readonly b: { readonly cpu: number; readonly rssMiB: number };
  /** The two containerds' mean CPU share, % of one core. */
  readonly containerd: number;
  readonly steal: number;
}

interface Instance {
  readonly ctrd: ContainerdInstance;
  readonly dir: string;
}

const NODE_NAME = 'idle-pair';
const mean = (v: readonly number[]): number => v.reduce((x, y) => x + y, 0) / Math.max(1, v.length);

function startOn(inst: Instance, c: Configuration): Promise<AgentProcess> {
  return startAgent({
    endpoint: inst.ctrd.endpoint, cgroupRoot: inst.ctrd.cgroupRoot, dir: inst.dir, nodeName: NODE_NAME, bin: c.bin,
    ...(c.nodeFlags === undefined ? {} : { nodeFlags: c.nodeFlags }),
  });
}

/** A containerd with the pods running, started by an agent of configuration A that is stopped again. */
async function startInstance(o: IdlePairOptions, log: (line: string) => void): Promise<Instance> {
  const inst = { ctrd: await startContainerd(), dir: await mkdtemp(path.join(os.tmpdir(), 'na-idle-pair-')) };
  const cri = connectCri({ runtimeEndpoint: inst.ctrd.endpoint });
  try {
    const agent = await startOn(inst, o.a);
    try {
      const manifests = Array.from({ length: o.pods }, (_, i) => ({
        file: `p${i}.yaml`, text: podManifest({ name: `p${i}`, namespace: 'idle', image: inst.ctrd.images.busybox, hostNetwork: true }),
      }));
      await writeManifests(agent.manifestDir, manifests);
      await waitFor(`${o.pods} pods running`, async () =>
        (await cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })).length >= o.pods, { timeoutMs: 600_000, intervalMs: 500 });
    } finally {
      await agent.stop();
    }
    log(`instance ${inst.ctrd.dir}: ${o.pods} pods running`);
    return inst;
  } catch (err) {
    await stopInstance(inst);
    throw err;
  } finally {
    cri.close();
  }
}

async function stopInstance(inst: Instance): Promise<void> {
  await inst.ctrd.stop();
  await rm(inst.dir, { recursive: true, force: true });
}

/** One round: A's agent on instance `aOn`, B's on the other, both idle over the same window. */
async function round(insts: readonly Instance[], o: IdlePairOptions, aOn: number): Promise<RoundResult> {
  const agents: AgentProcess[] = [];
  try {
    for (const [i, inst] of insts.entries()) agents.push(await startOn(inst, i === aOn ? o.a : o.b));
    await delay(o.settleSeconds * 1000);
    const pids = [...agents.map((a) => a.pid), ...(await Promise.all(insts.map((i) => containerdPid(i.ctrd))))];
    const { result: usage, steal } = await withSteal(() => measureUsage(pids, o.windowSeconds));
    const of = (i: number): { cpu: number; rssMiB: number } => ({ cpu: usage[i]?.cpuPercent ?? NaN, rssMiB: usage[i]?.rssMiB ?? NaN });
    return { a: of(aOn), b: of(1 - aOn), containerd: mean([usage[2]?.cpuPercent ?? NaN, usage[3]?.cpuPercent ?? NaN]), steal };
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
  }
}

export async function runIdlePair(o: IdlePairOptions, log: (line: string) => void): Promise<RoundResult[]> {
  const insts: Instance[] = [];
  try {
    for (let i = 0; i < 2; i++) insts.push(await startInstance(o, log));
    const results: RoundResult[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const res = await round(insts, o, r % 2);
      results.push(res);
      log(`round ${r + 1}: A ${res.a.cpu.toFixed(2)} % ${res.a.rssMiB.toFixed(1)} MiB, B ${res.b.cpu.toFixed(2)} % ${res.b.rssMiB.toFixed(1)} MiB; containerd ${res.containerd.toFixed(2)} %; steal ${res.steal.toFixed(1)} %`);
    }
    return results;
  } finally {
    for (const inst of insts) await stopInstance(inst);
  }
}

/** The summary: each configuration with its mean CPU share and RSS (and ranges), and the paired difference. */
export function formatIdlePair(o: IdlePairOptions, results: readonly RoundResult[]): string[] {
  const range = (v: readonly number[], digits: number): string => `${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}`;
  const name = (c: Configuration): string => `${c.bin}${c.nodeFlags === undefined ? '' : ` [${c.nodeFlags.join(' ')}]`}`;
  const line = (label: string, c: Configuration, side: readonly { cpu: number; rssMiB: number }[]): string => {
    const cpu = side.map((s) => s.cpu);
    const rss = side.map((s) => s.rssMiB);
    return `${label} ${name(c)}: mean ${mean(cpu).toFixed(2)} % of a core (${range(cpu, 2)}); RSS ${mean(rss).toFixed(1)} MiB (${range(rss, 1)})`;
  };
  const diffs = results.map((r) => r.b.cpu - r.a.cpu);
  return [
    line('A', o.a, results.map((r) => r.a)),
    line('B', o.b, results.map((r) => r.b)),
    `B − A per round: ${diffs.map((d) => d.toFixed(2)).join(', ')}; mean ${mean(diffs).toFixed(2)} points`,
    `containerd beside them: mean ${mean(results.map((r) => r.containerd)).toFixed(2)} %; steal ${range(results.map((r) => r.steal), 2)} %`,
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
      'a-bin': { type: 'string' }, 'a-flags': { type: 'string' }, 'b-bin': { type: 'string' }, 'b-flags': { type: 'string' },
      pods: { type: 'string', default: '110' }, rounds: { type: 'string', default: '4' },
      window: { type: 'string', default: '40' }, settle: { type: 'string', default: '20' },
    },
  });
  const configuration = (bin: string | undefined, flags: string | undefined): Configuration => ({
    bin: path.resolve(bin ?? AGENT_BIN),
    ...(flags === undefined ? {} : { nodeFlags: flags.split(/\s+/).filter((f) => f !== '') }),
  });
  const o: IdlePairOptions = {
    a: configuration(values['a-bin'], values['a-flags']),
    b: configuration(values['b-bin'], values['b-flags']),
    pods: positive('pods', values.pods),
    rounds: positive('rounds', values.rounds),
    windowSeconds: positive('window', values.window),
    settleSeconds: positive('settle', values.settle),
  };
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  for (const line of formatIdlePair(o, await runIdlePair(o, print))) print(line);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`idle-pair: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
