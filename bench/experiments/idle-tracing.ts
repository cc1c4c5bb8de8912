/**
 * The agent's idle CPU with tracing off, on with samplingRatePerMillion 0, and on with every span
 * sampled, side by side: three private containerd instances with the same pods running (host-
 * network busybox `sleep` pods), one agent on each, all three measured over the same windows (a
 * VM's steal time moves an idle figure by more than the differences looked for). The
 * configurations rotate over the instances every round, so that a difference between instances
 * does not count as one between configurations. The agents with tracing export to an OTLP/gRPC
 * receiver in this process (test/helpers/otlp-receiver.ts), so the sampled one pays for the
 * export as it would with a collector.
 *
 * The window (default 120 s) spans two of the agents' resyncs (syncFrequency 1 min): a shorter
 * one holds one resync or none, which moves a figure by more than tracing does.
 *
 *   node dist/bench/experiments/idle-tracing.js [--pods 20] [--rounds 3] [--window 120] [--settle 20]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectCri } from '../../src/agent/runtime/cri/index.js';
import { startContainerd, type ContainerdInstance } from '../../test/helpers/containerd.js';
import { startOtlpReceiver } from '../../test/helpers/otlp-receiver.js';
import { waitFor } from '../../test/helpers/wait.js';
import { containerdPid, measureUsage, podManifest, startAgent, writeManifests, type AgentProcess } from '../agent.js';
import { withSteal } from '../steal.js';
import { exitOnSignals, isMain } from '../table.js';

/** A configuration: its label and the tracing section's samplingRatePerMillion (undefined: no section, tracing off). */
export interface TracingCase {
  readonly label: string;
  readonly samplingRatePerMillion?: number;
}

export const CASES: readonly TracingCase[] = [
  { label: 'tracing off' },
  { label: 'tracing on, sampling 0', samplingRatePerMillion: 0 },
  { label: 'tracing on, every span sampled', samplingRatePerMillion: 1_000_000 },
];

export interface IdleTracingOptions {
  readonly pods: number;
  readonly rounds: number;
  readonly windowSeconds: number;
  readonly settleSeconds: number;
}

/** One round: each case's agent CPU share (% of a core) and RSS (MiB), the containerds' mean share, the steal. */
export interface TracingRound {
  readonly agents: readonly { readonly cpu: number; readonly rssMiB: number }[];
  readonly containerd: number;
  readonly steal: number;
}

interface Instance {
  readonly ctrd: ContainerdInstance;
  readonly dir: string;
}

const NODE_NAME = 'idle-tracing';
const mean = (v: readonly number[]): number => v.reduce((x, y) => x + y, 0) / Math.max(1, v.length);

/** The drop-in that turns tracing on (or removes it), written where startAgent reads its drop-ins. */
async function setTracing(dir: string, c: TracingCase, endpoint: string): Promise<void> {
  const dropIns = path.join(dir, 'config.d');
  await mkdir(dropIns, { recursive: true });
  const file = path.join(dropIns, '50-tracing.conf');
  if (c.samplingRatePerMillion === undefined) {
    await rm(file, { force: true });
    return;
  }
  await writeFile(file, `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\ntracing:\n  endpoint: ${endpoint}\n  samplingRatePerMillion: ${c.samplingRatePerMillion}\n`);
}

async function startInstance(o: IdleTracingOptions, log: (line: string) => void): Promise<Instance> {
  const inst = { ctrd: await startContainerd(), dir: await mkdtemp(path.join(os.tmpdir(), 'na-idle-tracing-')) };
  const cri = connectCri({ runtimeEndpoint: inst.ctrd.endpoint });
  try {
    const agent = await startAgent({ endpoint: inst.ctrd.endpoint, cgroupRoot: inst.ctrd.cgroupRoot, dir: inst.dir, nodeName: NODE_NAME });
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

/** One round: case i on instance (i + shift) mod 3, all idle over the same window. */
async function round(insts: readonly Instance[], o: IdleTracingOptions, shift: number, endpoint: string): Promise<TracingRound> {
  const agents: AgentProcess[] = [];
  const on = (i: number): Instance => insts[(i + shift) % insts.length] as Instance;
  try {
    for (const [i, c] of CASES.entries()) {
      await setTracing(on(i).dir, c, endpoint);
      agents.push(await startAgent({ endpoint: on(i).ctrd.endpoint, cgroupRoot: on(i).ctrd.cgroupRoot, dir: on(i).dir, nodeName: NODE_NAME }));
    }
    await delay(o.settleSeconds * 1000);
    const ctrdPids = await Promise.all(insts.map((i) => containerdPid(i.ctrd)));
    const { result: usage, steal } = await withSteal(() => measureUsage([...agents.map((a) => a.pid), ...ctrdPids], o.windowSeconds));
    return {
      agents: CASES.map((_, i) => ({ cpu: usage[i]?.cpuPercent ?? NaN, rssMiB: usage[i]?.rssMiB ?? NaN })),
      containerd: mean(usage.slice(CASES.length).map((u) => u.cpuPercent)),
      steal,
    };
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
  }
}

/** A round again when one of its processes went away meanwhile (on a shared machine something else may end it), up to 3 times. */
async function roundWithRetries(insts: readonly Instance[], o: IdleTracingOptions, shift: number, endpoint: string, log: (line: string) => void): Promise<TracingRound> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await round(insts, o, shift, endpoint);
    } catch (err) {
      if (attempt === 3) throw err;
      log(`round ${shift + 1} attempt ${attempt} failed (${err instanceof Error ? err.message : String(err)}); again`);
    }
  }
}

export async function runIdleTracing(o: IdleTracingOptions, log: (line: string) => void): Promise<{ rounds: TracingRound[]; spans: number }> {
  const receiver = await startOtlpReceiver();
  const insts: Instance[] = [];
  try {
    for (let i = 0; i < CASES.length; i++) insts.push(await startInstance(o, log));
    const rounds: TracingRound[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const res = await roundWithRetries(insts, o, r, receiver.endpoint, log);
      rounds.push(res);
      log(`round ${r + 1}: ${CASES.map((c, i) => `${c.label} ${res.agents[i]?.cpu.toFixed(2) ?? '?'} %`).join(', ')}; containerd ${res.containerd.toFixed(2)} %; steal ${res.steal.toFixed(1)} %`);
    }
    return { rounds, spans: receiver.spans().length };
  } finally {
    for (const inst of insts) await stopInstance(inst);
    await receiver.close();
  }
}

/** The summary: each case's mean CPU share and RSS with their ranges, and its difference from tracing off. */
export function formatIdleTracing(rounds: readonly TracingRound[], spans: number): string[] {
  const range = (v: readonly number[], digits: number): string => `${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}`;
  const of = (i: number): { cpu: number[]; rss: number[] } => ({
    cpu: rounds.map((r) => r.agents[i]?.cpu ?? NaN), rss: rounds.map((r) => r.agents[i]?.rssMiB ?? NaN),
  });
  const off = of(0);
  return [
    ...CASES.map((c, i) => {
      const s = of(i);
      const diff = i === 0 ? '' : `; vs off ${(mean(s.cpu) - mean(off.cpu) >= 0 ? '+' : '')}${(mean(s.cpu) - mean(off.cpu)).toFixed(2)} points`;
      return `${c.label}: mean ${mean(s.cpu).toFixed(2)} % of a core (${range(s.cpu, 2)}); RSS ${mean(s.rss).toFixed(1)} MiB (${range(s.rss, 1)})${diff}`;
    }),
    `containerd beside them: mean ${mean(rounds.map((r) => r.containerd)).toFixed(2)} %; steal ${range(rounds.map((r) => r.steal), 2)} %; spans received ${spans}`,
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
      pods: { type: 'string', default: '20' }, rounds: { type: 'string', default: '3' },
      window: { type: 'string', default: '120' }, settle: { type: 'string', default: '20' },
    },
  });
  const o: IdleTracingOptions = {
    pods: positive('pods', values.pods), rounds: positive('rounds', values.rounds),
    windowSeconds: positive('window', values.window), settleSeconds: positive('settle', values.settle),
  };
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  const { rounds, spans } = await runIdleTracing(o, print);
  for (const line of formatIdleTracing(rounds, spans)) print(line);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`idle-tracing: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
