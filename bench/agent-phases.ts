/**
 * The phases of the agent-pods benchmark that drive a running nodeagent through its manifest
 * directory, observing the result through CRI only (never through the agent):
 *
 * - `startSequential`: one manifest at a time, each waited for until its container runs;
 * - `startBurst`: many manifests at once, until all their containers run;
 * - `removeAll`: every manifest deleted, until the agent has removed the pods from the runtime,
 *   the pods' directories under --root-dir and their cgroups (falls back to removing them over
 *   CRI, with a warning, if the agent does not within the deadline).
 *
 * How running is observed without distorting the agent: ListContainers with a label selector
 * on io.orch.pod.name and state RUNNING (containerd answers it from memory in about 1 ms). For
 * a single pod the poll holds off for `holdOffMs` (the caller passes half the raw p50 of the
 * same run: the agent cannot be faster than the runtime calls it makes itself) and then polls
 * every `intervalMs`; once the container is listed, its ContainerStatus gives `startedAt`, the
 * moment the runtime started it, and the pod's figure is write -> startedAt, the same end point
 * as the raw floor's (cri-floor.ts). So the poll only finds the container and adds nothing to the
 * figure, and a 10 ms interval keeps the poll's load on containerd low while the agent works
 * (a 2 ms poll made ~35 calls per pod, slowing the runtime calls being measured). A burst is
 * timed to its last container's startedAt as well, so its poll can be slow (see startBurst).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL } from '../src/agent/kuberuntime/index.js';
import type { CriClient } from '../src/agent/runtime/cri/index.js';
import { waitFor } from '../test/helpers/wait.js';
import { criTimeMs, epochMs } from './cri-floor.js';
import { podManifest, removeManifests, writeManifests, type AgentProcess } from './agent-process.js';

export interface PhaseContext {
  readonly cri: CriClient;
  readonly agent: AgentProcess;
  /** --hostname-override of the agent (static pod names end in `-<nodeName>`). */
  readonly nodeName: string;
  readonly namespace: string;
  readonly image: string;
  readonly hostNetwork: boolean;
  /** The containerd instance's CGROUP_ROOT (the agent's --cgroup-root). */
  readonly cgroupRoot: string;
}

export interface StartTimes {
  /** Manifest file -> pod name the agent gives it. */
  readonly podNames: readonly string[];
  /** Per pod name: epoch ms of the manifest's rename into the directory (for the agent's log). */
  readonly writtenAt: ReadonlyMap<string, number>;
  /** Per pod name: epoch ms at which the runtime started its container (startedAt). */
  readonly seenAt: ReadonlyMap<string, number>;
}

export interface SequentialResult extends StartTimes {
  /** Write -> the container's startedAt, per pod, ms. */
  readonly latenciesMs: readonly number[];
  /** ListContainers calls made per pod, on average. */
  readonly pollsPerPod: number;
}

export interface BurstResult extends StartTimes {
  /** Just before the writes -> the last container's startedAt, ms. */
  readonly totalMs: number;
}

function manifestFor(ctx: PhaseContext, name: string): { file: string; text: string } {
  return { file: `${name}.yaml`, text: podManifest({ name, namespace: ctx.namespace, image: ctx.image, hostNetwork: ctx.hostNetwork }) };
}

/** Epoch ms at which the runtime started the pod's running container, if one is listed. */
async function runningSince(ctx: PhaseContext, podName: string): Promise<number | undefined> {
  const [container] = await ctx.cri.listContainers({ labelSelector: { [POD_NAME_LABEL]: podName }, state: { state: 'CONTAINER_RUNNING' } });
  if (container === undefined) return undefined;
  const status = (await ctx.cri.containerStatus({ containerId: container.id })).status;
  return status === null ? undefined : criTimeMs(status.startedAt);
}

/** Starts `count` pods one after another (`<prefix>-<i>`), each waited for until its container runs. */
export async function startSequential(
  ctx: PhaseContext,
  prefix: string,
  count: number,
  poll: { readonly holdOffMs: number; readonly intervalMs: number; readonly timeoutMs?: number },
): Promise<SequentialResult> {
  const latenciesMs: number[] = [];
  const podNames: string[] = [];
  const writtenAt = new Map<string, number>();
  const seenAt = new Map<string, number>();
  let polls = 0;
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${i}`;
    const podName = `${name}-${ctx.nodeName}`;
    podNames.push(podName);
    const manifest = manifestFor(ctx, name);
    const t0 = performance.now();
    const epoch0 = epochMs(t0);
    await writeManifests(ctx.agent.manifestDir, [manifest]);
    writtenAt.set(podName, epoch0);
    await delay(Math.max(0, poll.holdOffMs - (performance.now() - t0)));
    const deadline = t0 + (poll.timeoutMs ?? 60_000);
    for (;;) {
      polls++;
      const startedAt = await runningSince(ctx, podName);
      if (startedAt !== undefined) {
        latenciesMs.push(startedAt - epoch0);
        seenAt.set(podName, startedAt);
        break;
      }
      const now = performance.now();
      if (now > deadline) throw new Error(`pod ${podName} not running ${Math.round(now - t0)} ms after its manifest was written; see ${ctx.agent.logFile}`);
      await delay(poll.intervalMs);
    }
  }
  return { podNames, writtenAt, seenAt, latenciesMs, pollsPerPod: polls / Math.max(1, count) };
}

/** Several sequential runs taken together (their pods have distinct names). */
export function joinSequential(runs: readonly SequentialResult[]): SequentialResult {
  const polls = runs.reduce((sum, r) => sum + r.pollsPerPod * r.latenciesMs.length, 0);
  const latenciesMs = runs.flatMap((r) => r.latenciesMs);
  return {
    podNames: runs.flatMap((r) => r.podNames),
    writtenAt: new Map(runs.flatMap((r) => [...r.writtenAt])),
    seenAt: new Map(runs.flatMap((r) => [...r.seenAt])),
    latenciesMs,
    pollsPerPod: polls / Math.max(1, latenciesMs.length),
  };
}

/**
 * Writes `count` manifests (`<prefix>-<i>`) at once and waits until every container runs (polled
 * every `intervalMs`). Timed like the raw burst (cri-floor.ts): from just before the writes to the
 * last container's `startedAt`, read once all run; so the poll only finds the end and a slow
 * interval keeps its load (a ListContainers of up to `count` containers, with the decoding on
 * both sides) off the machine the runtime needs.
 */
export async function startBurst(ctx: PhaseContext, prefix: string, count: number, intervalMs: number, timeoutMs = 600_000): Promise<BurstResult> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const podNames = names.map((n) => `${n}-${ctx.nodeName}`);
  const manifests = names.map((n) => manifestFor(ctx, n));
  const t0 = performance.now();
  const epoch0 = epochMs(t0);
  await writeManifests(ctx.agent.manifestDir, manifests);
  const writtenAt = new Map(podNames.map((p) => [p, epoch0]));
  const wanted = new Set(podNames);
  for (;;) {
    const running = (await ctx.cri.listContainers({ labelSelector: { [POD_NAMESPACE_LABEL]: ctx.namespace }, state: { state: 'CONTAINER_RUNNING' } }))
      .filter((c) => wanted.has(c.labels[POD_NAME_LABEL] ?? ''));
    const found = new Set(running.map((c) => c.labels[POD_NAME_LABEL] ?? ''));
    if (found.size >= wanted.size) {
      const seenAt = new Map<string, number>();
      for (const c of running) {
        const status = (await ctx.cri.containerStatus({ containerId: c.id })).status;
        if (status === null) throw new Error(`ContainerStatus of ${c.id} (pod ${c.labels[POD_NAME_LABEL] ?? '?'}) answered no status`);
        seenAt.set(c.labels[POD_NAME_LABEL] ?? '', criTimeMs(status.startedAt));
      }
      return { podNames, writtenAt, seenAt, totalMs: Math.max(...seenAt.values()) - epoch0 };
    }
    const now = performance.now();
    if (now - t0 > timeoutMs) throw new Error(`${found.size} of ${count} pods running ${Math.round(now - t0)} ms after their manifests were written; see ${ctx.agent.logFile}`);
    await delay(intervalMs);
  }
}

/** Pod cgroup directories (`pod<uid>`) below the agent's QoS cgroups, in any hierarchy. */
export async function agentPodCgroups(cgroupRoot: string): Promise<string[]> {
  const found: string[] = [];
  for (const hierarchy of await readdir('/sys/fs/cgroup')) {
    const top = path.join('/sys/fs/cgroup', hierarchy, cgroupRoot, 'orchpods');
    for (const dir of [top, path.join(top, 'burstable'), path.join(top, 'besteffort')]) {
      const entries = await readdir(dir).catch(() => []); // hierarchy without the agent's cgroups
      found.push(...entries.filter((e) => e.startsWith('pod')).map((e) => path.join(dir, e)));
    }
  }
  return found;
}

/** Whatever of the agent's pods is still on the node: sandboxes, pod directories, cgroups. */
async function leftovers(ctx: PhaseContext): Promise<string | undefined> {
  const sandboxes = await ctx.cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE_LABEL]: ctx.namespace } });
  const podDirs = await readdir(path.join(ctx.agent.rootDir, 'pods')).catch(() => []); // not made yet: no pods
  const cgroups = await agentPodCgroups(ctx.cgroupRoot);
  const parts = [
    sandboxes.length > 0 ? `${sandboxes.length} sandboxes` : '',
    podDirs.length > 0 ? `${podDirs.length} pod directories` : '',
    cgroups.length > 0 ? `${cgroups.length} pod cgroups` : '',
  ].filter((p) => p !== '');
  return parts.length === 0 ? undefined : parts.join(', ');
}

/**
 * Deletes every manifest and waits until the agent has removed its pods entirely. Returns how
 * long that took (ms). If the deadline passes, warns and removes the sandboxes over CRI.
 */
export async function removeAll(ctx: PhaseContext, timeoutMs = 180_000): Promise<number> {
  const t0 = performance.now();
  const files = (await readdir(ctx.agent.manifestDir)).filter((f) => f.endsWith('.yaml'));
  await removeManifests(ctx.agent.manifestDir, files);
  let last: string | undefined;
  try {
    await waitFor(
      `nodeagent to remove its pods (${files.length} manifests deleted)`,
      async () => {
        last = await leftovers(ctx);
        return last === undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  } catch (err) {
    process.stderr.write(`agent-pods: ${err instanceof Error ? err.message : String(err)}: left ${last ?? '?'}; removing the sandboxes over CRI\n`);
    for (const sandbox of await ctx.cri.listPodSandbox({ labelSelector: { [POD_NAMESPACE_LABEL]: ctx.namespace } })) {
      await ctx.cri.stopPodSandbox(sandbox.id);
      await ctx.cri.removePodSandbox(sandbox.id);
    }
  }
  return performance.now() - t0;
}
