/**
 * Raw CRI pods: the baseline the benches set the agent against. A raw pod is RunPodSandbox +
 * CreateContainer + StartContainer of a busybox `sleep` straight over CRI, laid out as the agent
 * lays out its pods (its log directory made before RunPodSandbox, its cgroup parent under the
 * containerd instance's cgroup root), but without the agent's labels: an agent running beside
 * them removes pods that carry its labels and that it does not know. A pod's time runs from just
 * before its first call to its container's `startedAt` as ContainerStatus reports it, the same
 * end point as the agent's figures.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { podLogsDirectory } from '../src/agent/kuberuntime/index.js';
import { connectCri, type CriClient, type PodSandboxConfig } from '../src/agent/runtime/cri/index.js';

export type Network = 'host' | 'cni';

export interface RawPodOptions {
  /** CRI endpoint, `unix://...`. */
  readonly endpoint: string;
  readonly network: Network;
  /** Image of the `sleep` container (present in the runtime). */
  readonly image: string;
  /** cgroupfs parent of the pods' cgroups; removed afterwards. */
  readonly cgroupRoot: string;
  /** Where the pods' log directories go (`<logRoot>/<namespace>_<name>_<uid>`); removed afterwards. */
  readonly logRoot: string;
}

export interface RawPodsResult {
  /** Per pod: just before RunPodSandbox -> its container's startedAt, ms. */
  readonly podMs: readonly number[];
  /** Just before the first call -> the last container's startedAt, ms. */
  readonly totalMs: number;
}

const NAMESPACE = 'bench-raw';

/** Epoch milliseconds (with fractions) of a CRI nanosecond timestamp. */
export function criTimeMs(nanoseconds: string | number): number {
  return Number(BigInt(nanoseconds) / 1000n) / 1000;
}

/** performance.now() as epoch milliseconds, comparable with criTimeMs. */
export function epochMs(performanceNow: number): number {
  return performance.timeOrigin + performanceNow;
}

/** The epoch ms at which the runtime started a container. */
export async function startedAt(cri: CriClient, containerId: string): Promise<number> {
  const status = (await cri.containerStatus({ containerId })).status;
  if (status === null) throw new Error(`ContainerStatus of ${containerId} answered no status`);
  return criTimeMs(status.startedAt);
}

/** Starts one raw pod; returns the epoch ms it started at (just before its first call) and its container's startedAt. */
async function startRawPod(cri: CriClient, o: RawPodOptions, n: number, cgroups: string[]): Promise<{ from: number; to: number }> {
  const uid = randomUUID();
  const host = o.network === 'host';
  const namespaceOptions = { network: host ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' } as const;
  const id = { uid, name: `raw-${n}`, namespace: NAMESPACE };
  const logDirectory = podLogsDirectory(o.logRoot, id);
  const cgroupParent = `${o.cgroupRoot}/pod${uid}`;
  cgroups.push(cgroupParent);
  const config: PodSandboxConfig = {
    metadata: { ...id, attempt: 0 },
    hostname: host ? '' : id.name,
    logDirectory,
    labels: { bench: 'raw' },
    linux: { cgroupParent, securityContext: { namespaceOptions } },
  };
  const from = epochMs(performance.now());
  await mkdir(logDirectory, { recursive: true, mode: 0o755 });
  const podSandboxId = await cri.runPodSandbox({ config });
  await mkdir(path.join(logDirectory, 'sleep'), { recursive: true, mode: 0o755 });
  const containerId = await cri.createContainer({
    podSandboxId,
    sandboxConfig: config,
    config: {
      metadata: { name: 'sleep', attempt: 0 },
      image: { image: o.image },
      command: ['sleep', '3600'],
      logPath: 'sleep/0.log',
      linux: { securityContext: { namespaceOptions } },
    },
  });
  await cri.startContainer(containerId);
  return { from, to: await startedAt(cri, containerId) };
}

/**
 * Starts `pods` raw pods with `concurrency` in flight, times them, then removes them with their
 * cgroups and log directories.
 */
export async function runRawPods(o: RawPodOptions, pods: number, concurrency = 1): Promise<RawPodsResult> {
  const cri = connectCri({ runtimeEndpoint: o.endpoint });
  const cgroups: string[] = [];
  const times: { from: number; to: number }[] = [];
  try {
    // The connection is made before the clock starts, as the agent's is long before its pods.
    await cri.version('v1');
    const started = epochMs(performance.now());
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < pods) times.push(await startRawPod(cri, o, next++, cgroups));
    };
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
    return { podMs: times.map((t) => t.to - t.from), totalMs: Math.max(...times.map((t) => t.to)) - started };
  } finally {
    for (const pod of await cri.listPodSandbox({ labelSelector: { bench: 'raw' } })) {
      await cri.stopPodSandbox(pod.id);
      await cri.removePodSandbox(pod.id);
    }
    cri.close();
    await removeCgroups([...cgroups, o.cgroupRoot]);
    for (const entry of await readdir(o.logRoot)) {
      if (entry.startsWith(`${NAMESPACE}_`)) await rm(path.join(o.logRoot, entry), { recursive: true, force: true });
    }
  }
}

/** Removes cgroup directories in every hierarchy (runc leaves them behind), retrying while busy. */
async function removeCgroups(cgroups: readonly string[]): Promise<void> {
  const hierarchies = (await readdir('/sys/fs/cgroup')).map((h) => path.join('/sys/fs/cgroup', h));
  for (const dir of hierarchies.flatMap((h) => cgroups.map((c) => path.join(h, c)))) {
    for (let attempt = 0; ; attempt++) {
      try {
        await rmdir(dir);
        break;
      } catch (err) {
        const code: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENOTEMPTY') break; // absent, or not a leaf of ours
        if (code !== 'EBUSY' || attempt >= 20) throw new Error(`cannot remove cgroup ${dir}: ${String(err)}`);
        await delay(50);
      }
    }
  }
}
