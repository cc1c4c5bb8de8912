/**
 * The PLEG bench: the relist PLEG (every second) next to the evented one (EventedPLEG: containerd's
 * task events, the relist every 300 s), on one containerd, each mode measured in turn in each run
 * (2 runs; 1 with --quick):
 *   (a) container exit -> pod status: 20 host-network pods whose container exits when the bench
 *       creates its trigger file; the time from the container's `finishedAt` (the runtime's) to
 *       the agent's status showing it terminated, read from the agent's read-only `/pods` (static
 *       pods: the status the agent would write to the API server), polled every 10 ms; p50 / p99.
 *   (b) the agent's idle CPU with 110 running host-network pods over a window (60 s; 20 s with
 *       --quick) after 15 s of settling: CPU time of the agent's process over wall time.
 *
 *   npm run build && node dist/bench/pleg.js [--quick]
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL } from '../src/agent/kuberuntime/index.js';
import { connectCri, type CriClient } from '../src/agent/runtime/cri/index.js';
import { freePort, startContainerd, type ContainerdInstance } from '../test/helpers/containerd.js';
import { waitFor } from '../test/helpers/wait.js';
import { measureUsage, podManifest, startAgent, tailOf, writeManifests, type AgentProcess } from './agent.js';
import { withSteal } from './steal.js';
import { exitOnSignals, formatTable, isMain, ms, percentile, type Row } from './table.js';

const NODE_NAME = 'bench-pleg';
const NAMESPACE = 'bench';
const EXITS = 20;
const IDLE_PODS = 110;

export type PlegMode = 'relist' | 'events';
export interface PlegModeResult {
  readonly exitMs: readonly number[];
  readonly idleCpuPercent: number;
  readonly steal: number;
}
export interface PlegRun {
  readonly modes: Readonly<Record<PlegMode, PlegModeResult>>;
  /** The 1-minute load average at the run's end. */
  readonly load: number;
}

function triggerManifest(name: string, image: string, triggers: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${NAMESPACE}}
spec:
  hostNetwork: true
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: "${image}"
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'while [ ! -f /trigger/${name} ]; do sleep 0.05; done; exit 3']
    volumeMounts: [{name: trigger, mountPath: /trigger}]
  volumes: [{name: trigger, hostPath: {path: "${triggers}"}}]
`;
}

interface PodLite { metadata: { name: string }; status?: { containerStatuses?: { state?: { running?: object; terminated?: object } }[] } }

async function agentPods(port: number): Promise<PodLite[]> {
  const res = await fetch(`http://127.0.0.1:${port}/pods`);
  return ((await res.json()) as { items: PodLite[] }).items;
}

async function removeAll(cri: CriClient, agent: AgentProcess): Promise<void> {
  await rm(agent.manifestDir, { recursive: true, force: true });
  await mkdir(agent.manifestDir, { recursive: true });
  await waitFor('the agent to remove its pods', async () => (await cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE } })).length === 0, { timeoutMs: 900_000, intervalMs: 500 });
}

async function measureMode(ctrd: ContainerdInstance, cri: CriClient, dir: string, mode: PlegMode, o: { readonly window: number; readonly say: (l: string) => void }): Promise<PlegModeResult> {
  const port = await freePort();
  const agentDir = await mkdtemp(path.join(dir, `${mode}-`));
  const triggers = path.join(agentDir, 'triggers');
  await mkdir(triggers, { recursive: true });
  const agent = await startAgent({
    endpoint: ctrd.endpoint, cgroupRoot: ctrd.cgroupRoot, dir: agentDir, nodeName: NODE_NAME,
    args: ['--enable-server=false', `--read-only-port=${port}`, ...(mode === 'events' ? ['--feature-gates=EventedPLEG=true'] : [])],
  });
  try {
    // (a) exits
    const names = Array.from({ length: EXITS }, (_, i) => `exit-${i}`);
    await writeManifests(agent.manifestDir, names.map((n) => ({ file: `${n}.yaml`, text: triggerManifest(n, ctrd.images.busybox, triggers) })));
    await waitFor(`${EXITS} trigger pods running`, async () => (await agentPods(port)).filter((p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined).length === EXITS, { timeoutMs: 180_000, intervalMs: 250 });
    const exitMs: number[] = [];
    for (const name of names) {
      const podName = `${name}-${NODE_NAME}`;
      await writeFile(path.join(triggers, name), '');
      await waitFor(`${podName} terminated in /pods`, async () => (await agentPods(port)).find((p) => p.metadata.name === podName)?.status?.containerStatuses?.[0]?.state?.terminated !== undefined, { timeoutMs: 400_000, intervalMs: 10 });
      const seen = Date.now();
      const [container] = await cri.listContainers({ labelSelector: { [POD_NAME_LABEL]: podName } });
      const status = await cri.containerStatus({ containerId: container?.id ?? '' });
      exitMs.push(seen - Number(BigInt(status.status?.finishedAt ?? '0') / 1_000_000n));
    }
    o.say(`[${mode}] exit -> /pods status: p50 ${ms(percentile(exitMs, 50))} ms, p99 ${ms(percentile(exitMs, 99))} ms`);
    await removeAll(cri, agent);
    // (b) idle
    const idleNames = Array.from({ length: IDLE_PODS }, (_, i) => `idle-${i}`);
    await writeManifests(agent.manifestDir, idleNames.map((n) => ({ file: `${n}.yaml`, text: podManifest({ name: n, namespace: NAMESPACE, image: ctrd.images.busybox, hostNetwork: true }) })));
    await waitFor(`${IDLE_PODS} pods running`, async () => (await cri.listContainers({ labelSelector: { [POD_NAMESPACE_LABEL]: NAMESPACE }, state: { state: 'CONTAINER_RUNNING' } })).length === IDLE_PODS, { timeoutMs: 600_000, intervalMs: 500 });
    await delay(15_000);
    const idle = await withSteal(() => measureUsage([agent.pid], o.window));
    const idleCpuPercent = idle.result[0]?.cpuPercent ?? NaN;
    o.say(`[${mode}] idle with ${IDLE_PODS} pods over ${o.window} s: ${idleCpuPercent.toFixed(2)} % of a core (steal ${idle.steal.toFixed(0)} %)`);
    await removeAll(cri, agent);
    return { exitMs, idleCpuPercent, steal: idle.steal };
  } catch (err) {
    o.say(`[${mode}] failed; the end of ${agent.logFile}:\n${await tailOf(agent.logFile)}`);
    throw err;
  } finally {
    await agent.stop();
  }
}

/** Starts a containerd, measures both modes in each run (relist first in odd runs, events first in even ones). */
export async function runPlegBench(o: { readonly quick?: boolean; readonly runs?: number; readonly print?: (l: string) => void } = {}): Promise<PlegRun[]> {
  const say = o.print ?? ((l: string) => void process.stderr.write(`pleg: ${l}\n`));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-bench-pleg-'));
  const ctrd = await startContainerd();
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint });
  const window = o.quick === true ? 20 : 60;
  try {
    const runs: PlegRun[] = [];
    const count = o.runs ?? (o.quick === true ? 1 : 2);
    for (let r = 0; r < count; r++) {
      const order: PlegMode[] = r % 2 === 0 ? ['relist', 'events'] : ['events', 'relist'];
      const modes: Partial<Record<PlegMode, PlegModeResult>> = {};
      for (const mode of order) modes[mode] = await measureMode(ctrd, cri, dir, mode, { window, say: (l) => { say(`run ${r + 1}: ${l}`); } });
      const load = Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);
      say(`run ${r + 1}: load average ${load.toFixed(2)}`);
      runs.push({ modes: modes as Record<PlegMode, PlegModeResult>, load });
    }
    return runs;
  } finally {
    cri.close();
    await ctrd.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function plegRows(runs: readonly PlegRun[]): Row[] {
  const each = (f: (r: PlegRun) => string): string => runs.map(f).join('; ');
  const p = (m: PlegModeResult): string => `${ms(percentile(m.exitMs, 50))} / ${ms(percentile(m.exitMs, 99))} ms`;
  return [
    { measure: `container exit → pod status (agent's /pods), ${EXITS} exits: p50 / p99`, baseline: `relist (1 s): ${each((r) => p(r.modes.relist))}`, ours: `events: ${each((r) => p(r.modes.events))}`, target: 'events below the relist' },
    { measure: `idle agent CPU with ${IDLE_PODS} pods`, baseline: `relist: ${each((r) => `${r.modes.relist.idleCpuPercent.toFixed(2)} %`)}`, ours: `events: ${each((r) => `${r.modes.events.idleCpuPercent.toFixed(2)} %`)} (load ${each((r) => r.load.toFixed(1))})`, target: 'events below the relist' },
  ];
}

async function main(): Promise<void> {
  exitOnSignals();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, runs: { type: 'string' } } });
  const runs = values.runs === undefined ? undefined : Number(values.runs);
  const results = await runPlegBench({ quick: values.quick, ...(runs === undefined ? {} : { runs }) });
  process.stdout.write(`${formatTable(plegRows(results)).join('\n')}\n`);
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench pleg: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
