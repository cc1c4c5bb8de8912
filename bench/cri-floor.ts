/**
 * The floor of pod start-up that the runtime imposes: RunPodSandbox + CreateContainer +
 * StartContainer of a busybox `sleep` pod, straight over CRI (no agent logic), sequentially and
 * at a given concurrency, host network and CNI. A pod's figure runs from just before its first
 * call to the container's `startedAt` as ContainerStatus reports it (read afterwards, not
 * timed): the same end point as the agent's figure in agent-phases.ts. Baseline measured in the same run: the Version
 * round trip (the gRPC floor). Not a test: it prints numbers.
 *
 *   node dist/bench/cri-floor.js [--pods 20] [--concurrency 4]
 * starts its own containerd (test/helpers/containerd.ts) and prints a table.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  CONTAINER_NAME_LABEL, CONTAINER_TYPE_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, podLogsDirectory,
} from '../src/agent/kuberuntime/index.js';
import { connectCri, type CriClient, type PodSandboxConfig } from '../src/agent/runtime/cri/index.js';
import { localImages, startContainerd } from '../test/helpers/containerd.js';

export interface CriFloorOptions {
  /** CRI endpoint, e.g. unix:///run/containerd/containerd.sock. */
  readonly endpoint: string;
  /** Pods to start (default 20). */
  readonly pods?: number;
  readonly network: 'host' | 'cni';
  /** Pods started at once (default 1: sequential). */
  readonly concurrency?: number;
  /** Image of the `sleep` container (default: the locally built busybox). */
  readonly image?: string;
  /** cgroupfs parent of the pods' cgroups (default /nodeagent-bench); emptied afterwards. */
  readonly cgroupRoot?: string;
  /**
   * Where the pods' log directories go, as the agent lays them out: `<logRoot>/<namespace>_<name>_<uid>`
   * made before RunPodSandbox, `sleep/` in it before CreateContainer, log path `sleep/0.log`;
   * removed afterwards. Default '': no log directory (containerd then keeps no log).
   */
  readonly logRoot?: string;
  /** Puts the agent's identity labels (io.orch.pod.*, io.orch.container.*) on sandboxes and containers, as the agent does (default false). */
  readonly agentLabels?: boolean;
}

export interface Percentiles {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface CriFloorResult extends Percentiles {
  readonly network: 'host' | 'cni';
  readonly pods: number;
  readonly concurrency: number;
  /** Just before the first pod's first call -> the last container's startedAt, ms. */
  readonly totalMs: number;
  readonly phases: {
    readonly runPodSandbox: Percentiles;
    readonly createContainer: Percentiles;
    readonly startContainer: Percentiles;
  };
}

/** Nearest-rank percentile of samples (ms), rounded to 0.1 ms. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round((sorted[index] ?? 0) * 10) / 10;
}

function percentiles(samples: readonly number[]): Percentiles {
  return { p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99) };
}

/** The fastest of some raw bursts, e.g. one per concurrency tried (the first of equals). */
export function fastest(bursts: readonly CriFloorResult[]): CriFloorResult {
  const first = bursts[0];
  if (first === undefined) throw new Error('fastest: no raw bursts');
  return bursts.reduce((b, r) => (r.totalMs < b.totalMs ? r : b), first);
}

/** One result of single-pod runs (pods: 1 each), their pods taken together: for runs interleaved with other work. */
export function floorOfSingles(singles: readonly CriFloorResult[]): CriFloorResult {
  const first = singles[0];
  if (first === undefined || singles.some((r) => r.pods !== 1)) throw new Error('floorOfSingles wants one or more results of one pod each');
  return {
    network: first.network,
    pods: singles.length,
    concurrency: 1,
    ...percentiles(singles.map((r) => r.p50Ms)),
    totalMs: singles.reduce((sum, r) => sum + r.totalMs, 0),
    phases: {
      runPodSandbox: percentiles(singles.map((r) => r.phases.runPodSandbox.p50Ms)),
      createContainer: percentiles(singles.map((r) => r.phases.createContainer.p50Ms)),
      startContainer: percentiles(singles.map((r) => r.phases.startContainer.p50Ms)),
    },
  };
}

interface PodTiming {
  readonly run: number;
  readonly create: number;
  readonly start: number;
  /** Just before RunPodSandbox -> the container's startedAt, ms. */
  readonly total: number;
  /** The container's startedAt, epoch ms. */
  readonly startedAt: number;
}

/** Epoch milliseconds (with fractions) of a CRI nanosecond timestamp. */
export function criTimeMs(nanoseconds: string | number): number {
  return Number(BigInt(nanoseconds) / 1000n) / 1000;
}

/** performance.now() as epoch milliseconds, comparable with criTimeMs. */
export function epochMs(performanceNow: number): number {
  return performance.timeOrigin + performanceNow;
}

async function startOnePod(cri: CriClient, options: Required<CriFloorOptions>, n: number, made: string[]): Promise<PodTiming> {
  const uid = randomUUID();
  const host = options.network === 'host';
  const namespaceOptions = { network: host ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' } as const;
  const id = { uid, name: `floor-${n}`, namespace: 'bench' };
  const identity = options.agentLabels ? { [POD_UID_LABEL]: uid, [POD_NAME_LABEL]: id.name, [POD_NAMESPACE_LABEL]: id.namespace } : {};
  const logDirectory = options.logRoot === '' ? undefined : podLogsDirectory(options.logRoot, id);
  const config: PodSandboxConfig = {
    metadata: { name: id.name, uid, namespace: id.namespace, attempt: 0 },
    hostname: host ? '' : id.name,
    ...(logDirectory === undefined ? {} : { logDirectory }),
    labels: { bench: 'cri-floor', ...identity },
    linux: { cgroupParent: `${options.cgroupRoot}/pod${uid}`, securityContext: { namespaceOptions } },
  };
  made.push(config.linux?.cgroupParent ?? '');
  const t0 = performance.now();
  if (logDirectory !== undefined) await mkdir(logDirectory, { recursive: true, mode: 0o755 });
  const podSandboxId = await cri.runPodSandbox({ config });
  const t1 = performance.now();
  if (logDirectory !== undefined) await mkdir(path.join(logDirectory, 'sleep'), { recursive: true, mode: 0o755 });
  const containerId = await cri.createContainer({
    podSandboxId,
    sandboxConfig: config,
    config: {
      metadata: { name: 'sleep', attempt: 0 },
      image: { image: options.image },
      command: ['sleep', '3600'],
      ...(logDirectory === undefined ? {} : { logPath: 'sleep/0.log' }),
      labels: options.agentLabels ? { ...identity, [CONTAINER_NAME_LABEL]: 'sleep', [CONTAINER_TYPE_LABEL]: 'regular' } : {},
      linux: { securityContext: { namespaceOptions } },
    },
  });
  const t2 = performance.now();
  await cri.startContainer(containerId);
  const t3 = performance.now();
  const status = (await cri.containerStatus({ containerId })).status;
  if (status === null) throw new Error(`ContainerStatus of ${containerId} answered no status`);
  const startedAt = criTimeMs(status.startedAt);
  return { run: t1 - t0, create: t2 - t1, start: t3 - t2, total: startedAt - epochMs(t0), startedAt };
}

/** Removes the pods' cgroup directories in every hierarchy (runc leaves them), retrying on EBUSY. */
async function removePodCgroups(cgroupParents: readonly string[], cgroupRoot: string): Promise<void> {
  const hierarchies = (await readdir('/sys/fs/cgroup')).map((h) => path.join('/sys/fs/cgroup', h));
  const dirs = hierarchies.flatMap((h) => [...cgroupParents.map((p) => path.join(h, p)), path.join(h, cgroupRoot)]);
  for (const dir of dirs) {
    for (let attempt = 0; ; attempt++) {
      try {
        await rmdir(dir);
        break;
      } catch (err) {
        const code: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENOTEMPTY') break; // absent, or not ours to remove
        if (code !== 'EBUSY' || attempt >= 20) {
          process.stderr.write(`cri-floor: cannot remove cgroup ${dir}: ${String(err)}\n`);
          break;
        }
        await delay(50);
      }
    }
  }
}

/**
 * Starts `pods` pods (sandbox + one sleep container) with `concurrency` in flight and measures
 * each; then stops and removes them all, and their cgroups. Needs the image to be present.
 */
export async function measureCriFloor(options: CriFloorOptions): Promise<CriFloorResult> {
  const full: Required<CriFloorOptions> = {
    pods: 20,
    concurrency: 1,
    image: options.image ?? (await localImages()).busybox,
    cgroupRoot: '/nodeagent-bench',
    logRoot: '',
    agentLabels: false,
    ...options,
  };
  const cri = connectCri({ runtimeEndpoint: full.endpoint });
  const made: string[] = [];
  const timings: PodTiming[] = [];
  const totals: number[] = [];
  // The connection is made before the clock starts, as the agent's is (long) before its pods.
  await cri.version('v1');
  const started = performance.now();
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < full.pods) {
        const n = next++;
        const t = await startOnePod(cri, full, n, made);
        timings.push(t);
        totals.push(t.total);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, full.concurrency) }, worker));
    const totalMs = Math.round(Math.max(...timings.map((t) => t.startedAt)) - epochMs(started));
    return {
      network: full.network,
      pods: full.pods,
      concurrency: full.concurrency,
      ...percentiles(totals),
      totalMs,
      phases: {
        runPodSandbox: percentiles(timings.map((t) => t.run)),
        createContainer: percentiles(timings.map((t) => t.create)),
        startContainer: percentiles(timings.map((t) => t.start)),
      },
    };
  } finally {
    for (const pod of await cri.listPodSandbox({ labelSelector: { bench: 'cri-floor' } })) {
      await cri.stopPodSandbox(pod.id);
      await cri.removePodSandbox(pod.id);
    }
    cri.close();
    await removePodCgroups(made, full.cgroupRoot);
    if (full.logRoot !== '') {
      for (const entry of await readdir(full.logRoot)) if (entry.startsWith('bench_floor-')) await rm(path.join(full.logRoot, entry), { recursive: true, force: true });
    }
  }
}

/** measureCriFloor with `concurrency` pods in flight. */
export function measureCriFloorConcurrent(options: CriFloorOptions & { readonly concurrency: number }): Promise<CriFloorResult> {
  return measureCriFloor(options);
}

/** The gRPC round trip of Version, as the baseline next to the pod numbers. */
export async function measureVersionRoundTrip(endpoint: string, calls = 50): Promise<Percentiles> {
  const cri = connectCri({ runtimeEndpoint: endpoint });
  try {
    await cri.version('v1'); // connects
    const samples: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await cri.version('v1');
      samples.push(performance.now() - t);
    }
    return percentiles(samples);
  } finally {
    cri.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pods: { type: 'string', default: '20' }, concurrency: { type: 'string', default: '4' } } });
  const pods = Number(values.pods);
  const concurrency = Number(values.concurrency);
  const ctrd = await startContainerd();
  try {
    const base = { endpoint: ctrd.endpoint, pods, image: ctrd.images.busybox, cgroupRoot: `${ctrd.cgroupRoot}/bench` };
    const baseline = await measureVersionRoundTrip(ctrd.endpoint);
    const rows: CriFloorResult[] = [];
    for (const network of ['host', 'cni'] as const) {
      await measureCriFloor({ ...base, network, pods: 2 }); // warm-up: first CNI setup, page cache
      rows.push(await measureCriFloor({ ...base, network }));
      rows.push(await measureCriFloorConcurrent({ ...base, network, concurrency }));
    }
    const line = (cells: readonly (string | number)[]): string => cells.map((c) => String(c).padStart(9)).join(' ');
    process.stdout.write(`CRI floor: RunPodSandbox + CreateContainer + StartContainer, busybox sleep, ${pods} pods\n`);
    process.stdout.write(`baseline (same run): Version round trip p50 ${baseline.p50Ms} ms, p99 ${baseline.p99Ms} ms\n`);
    process.stdout.write(line(['network', 'parallel', 'p50 ms', 'p99 ms', 'total ms', 'run p50', 'create', 'start']) + '\n');
    for (const r of rows) {
      const { runPodSandbox, createContainer, startContainer } = r.phases;
      process.stdout.write(
        line([r.network, r.concurrency, r.p50Ms, r.p99Ms, r.totalMs, runPodSandbox.p50Ms, createContainer.p50Ms, startContainer.p50Ms]) + '\n',
      );
    }
  } finally {
    await ctrd.stop();
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`cri-floor: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
