/**
 * The prober's cost in the agent: 110 pods (busybox httpd on the host network, on a private
 * containerd), each with a startup, a liveness and a readiness probe at period 1 s, the kinds
 * rotating over exec, httpGet and tcpSocket from pod to pod, run by the real prober manager
 * (timers, metrics, results). Measured: this process's CPU (process.cpuUsage) over the window,
 * as % of one core, next to a baseline measured in the same run (the same process, the same
 * pods, no prober, over the same window); the probes run per second and their results; the
 * host's CPU (/proc/stat) for context — exec probes cost the runtime (runc exec), not the agent.
 * Target: the prober under 10 % of a core. Not a test: it prints numbers.
 *
 *   node dist/bench/prober.js [--quick] [--pods 110] [--seconds 60]
 * --quick: 15 s windows.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Container, Pod, Probe } from 'kubernetes-types/core/v1.js';
import { createRuntimeManager, type PodRuntimeManager } from '../src/agent/kuberuntime/index.js';
import { LogRoot } from '../src/agent/logging/index.js';
import { createProberManager, createProberMetrics, runProbe, type ExecRunner } from '../src/agent/prober/index.js';
import type { CriClient } from '../src/agent/runtime/cri/index.js';
import { connectCri } from '../src/agent/runtime/cri/index.js';
import { freePort, startContainerd } from '../test/helpers/containerd.js';
import { waitFor } from '../test/helpers/wait.js';
import { realClock } from '../src/api/clock.js';

type Kind = 'exec' | 'http' | 'tcp';
const KINDS: readonly Kind[] = ['exec', 'http', 'tcp'];
const PORT_BASE = 20_000;

function probeOf(kind: Kind, port: number, extra: Probe = {}): Probe {
  const handler: Probe =
    kind === 'exec' ? { exec: { command: ['true'] } } : kind === 'http' ? { httpGet: { path: '/ok', port } } : { tcpSocket: { port } };
  return { ...handler, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 1_000_000, ...extra };
}

/** Pod i: startup, liveness, readiness of the kinds rotated by i (each kind a third of each probe type). */
function benchPod(i: number, image: string, port: number): Pod {
  const kind = (k: number): Kind => KINDS[(i + k) % KINDS.length] ?? 'tcp';
  const container: Container = {
    name: 'web', image, command: ['sh', '-c', `mkdir -p /www && echo ok > /www/ok && exec httpd -f -p ${port} -h /www`],
    startupProbe: probeOf(kind(0), port), livenessProbe: probeOf(kind(1), port), readinessProbe: probeOf(kind(2), port),
  };
  return { metadata: { name: `probed-${i}`, namespace: 'bench', uid: randomUUID() }, spec: { hostNetwork: true, terminationGracePeriodSeconds: 0, containers: [container] } };
}

/** Busy and total jiffies of the host (/proc/stat). */
async function hostCpu(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

interface Window {
  readonly cpuPercent: number;
  readonly hostPercent: number;
  readonly seconds: number;
}

async function measure(seconds: number): Promise<Window> {
  const host = await hostCpu();
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await delay(seconds * 1000);
  const used = process.cpuUsage(cpu);
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const hostAfter = await hostCpu();
  return {
    cpuPercent: ((used.user + used.system) / 1e6 / wall) * 100,
    hostPercent: ((hostAfter.busy - host.busy) / Math.max(1, hostAfter.total - host.total)) * 100,
    seconds: wall,
  };
}

async function startPods(manager: PodRuntimeManager, pods: readonly Pod[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < pods.length; i = next++) {
      const pod = pods[i];
      if (pod === undefined) continue;
      const r = await manager.syncPod(pod, await manager.getPodStatus(pod.metadata?.uid ?? '', pod.metadata?.name ?? '', 'bench'));
      if (r.errors.length > 0) throw new Error(`${pod.metadata?.name ?? ''}: ${r.errors.map((e) => e.message).join('; ')}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, pods: { type: 'string', default: '110' }, seconds: { type: 'string' } } });
  const podCount = Number(values.pods);
  const seconds = Number(values.seconds ?? (values.quick ? 15 : 60));
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('bench');
  if ((await freePort()) === 0) throw new Error('no loopback port');
  const ctrd = await startContainerd();
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 60_000 });
  const manager = createRuntimeManager({
    clock: realClock,
    runtime: cri, images: cri, logger, podLogsRoot: ctrd.logDir,
    dns: { clusterDNS: [], clusterDomain: 'cluster.local', resolvConf: '' }, hostIPs: () => ['127.0.0.1'], nodeName: 'bench',
    volumes: { mountsFor: () => Promise.resolve([]) }, cgroupParent: (p) => Promise.resolve(`${ctrd.cgroupRoot}/pod${p.metadata?.uid ?? ''}`),
  });
  const metrics = createProberMetrics();
  const prober = createProberManager({ exec: cri, logger, metrics, clock: realClock });
  try {
    const pods = Array.from({ length: podCount }, (_, i) => benchPod(i, ctrd.images.busybox, PORT_BASE + i));
    const t0 = Date.now();
    await startPods(manager, pods, 4);
    print(`${podCount} pods started in ${((Date.now() - t0) / 1000).toFixed(1)} s; windows of ${seconds} s; host load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);
    const baseline = await measure(seconds);
    for (const pod of pods) {
      const status = await manager.getPodStatus(pod.metadata?.uid ?? '', pod.metadata?.name ?? '', 'bench');
      prober.updatePod(pod, { podIPs: ['127.0.0.1'], containers: status.containers });
    }
    await waitFor('every startup probe done', () => pods.every((p) => prober.readiness(p.metadata?.uid ?? '').get('web') === true), { timeoutMs: 60_000 });
    const countsBefore = await counts(metrics);
    const probed = await measure(seconds);
    const countsAfter = await counts(metrics);
    const ran = new Map([...countsAfter].map(([k, v]) => [k, v - (countsBefore.get(k) ?? 0)]));
    const total = [...ran.values()].reduce((a, b) => a + b, 0);
    const proberPercent = probed.cpuPercent - baseline.cpuPercent;
    print('');
    print('| window | agent CPU (% of one core) | host CPU busy (%) | probes/s |');
    print('|---|---:|---:|---:|');
    print(`| baseline: ${podCount} pods, no prober | ${baseline.cpuPercent.toFixed(2)} | ${baseline.hostPercent.toFixed(1)} | 0 |`);
    print(`| ${podCount} pods × 3 probes, period 1 s | ${probed.cpuPercent.toFixed(2)} | ${probed.hostPercent.toFixed(1)} | ${(total / probed.seconds).toFixed(0)} |`);
    print('');
    print(`prober cost: ${proberPercent.toFixed(2)} % of a core (target < 10 %: ${proberPercent < 10 ? 'met' : 'NOT met'}); ${((proberPercent / 100) * 1e6 / Math.max(1, total / probed.seconds)).toFixed(0)} µs of agent CPU per probe`);
    print(`runs by probe type and result: ${[...ran].filter(([, v]) => v > 0).map(([k, v]) => `${k}=${v}`).join(', ')}`);
    await prober.stop();
    const ids = await Promise.all(pods.map(async (p) => (await manager.getPodStatus(p.metadata?.uid ?? '', p.metadata?.name ?? '', 'bench')).containers[0]?.id ?? ''));
    print('');
    print('| probe kind (alone, 10 at a time) | agent CPU per probe (µs) | wall per probe (ms) |');
    print('|---|---:|---:|');
    const runs = values.quick ? 300 : 1000;
    for (const kind of KINDS) {
      const r = await perKind(kind, pods, ids, cri, runs);
      print(`| ${kind} | ${r.cpuUs.toFixed(0)} | ${r.wallMs.toFixed(2)} |`);
    }
    const floor = await grpcFloor(cri, runs);
    print(`| baseline: CRI Version round trip (the gRPC floor under exec) | ${floor.cpuUs.toFixed(0)} | ${floor.wallMs.toFixed(2)} |`);
  } finally {
    await prober.stop();
    for (const p of await manager.listPods()) {
      await manager.killPod(p, { gracePeriodSeconds: 0 });
      await manager.removePod(p.uid);
    }
    cri.close();
    await ctrd.stop();
  }
}

/** Agent CPU per probe of one kind: `runs` probes straight through runProbe, 10 at a time, over the pods. */
async function perKind(kind: Kind, pods: readonly Pod[], ids: readonly string[], exec: ExecRunner, runs: number): Promise<{ cpuUs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const started = Date.now();
  for (let i = 0; i < runs; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, runs - i) }, (_, j) => {
      const n = (i + j) % pods.length;
      const container = pods[n]?.spec?.containers[0] ?? { name: 'web' };
      return runProbe(probeOf(kind, PORT_BASE + n), { container, containerId: ids[n] ?? '', podIP: '127.0.0.1', exec });
    }));
  }
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / runs, wallMs: (Date.now() - started) / runs };
}

async function grpcFloor(cri: CriClient, runs: number): Promise<{ cpuUs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const started = Date.now();
  for (let i = 0; i < runs; i += 10) await Promise.all(Array.from({ length: Math.min(10, runs - i) }, () => cri.version('v1')));
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / runs, wallMs: (Date.now() - started) / runs };
}

/** nodeagent_prober_probe_total by `probe_type/result`. */
async function counts(metrics: ReturnType<typeof createProberMetrics>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    if (m.name !== 'nodeagent_prober_probe_total') continue;
    for (const v of m.values) {
      const key = `${String(v.labels.probe_type)}/${String(v.labels.result)}`;
      out.set(key, (out.get(key) ?? 0) + v.value);
    }
  }
  return out;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench prober: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
