/**
 * The phases of the agent-apiserver benchmark that go through the real kubectl: pods created
 * one after another (`kubectl create -f <file>`, each waited for until the pod watch sees it
 * Running), many at once (one `kubectl create -f <directory>`), and the removal of every pod of
 * the namespace (`kubectl delete pods --all`, waited for until the watch has seen each DELETED,
 * the list is empty and no container of the namespace runs in containerd).
 *
 * Times are performance.now(): t0 just before kubectl is spawned, its exit when execFile calls
 * back, ADDED and Running when the watch's events are read (bench/agent-apiserver-watch.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { POD_NAMESPACE_LABEL } from '../src/agent/kuberuntime/index.js';
import type { CriClient } from '../src/agent/runtime/cri/index.js';
import { runKubectl, type ApiServer } from '../test/helpers/apiserver.js';
import { waitFor } from '../test/helpers/wait.js';
import type { PodWatch } from './agent-apiserver-watch.js';

export interface KubectlPhaseContext {
  readonly server: ApiServer;
  readonly watch: PodWatch;
  readonly cri: CriClient;
  /** Where the pod files are written. */
  readonly dir: string;
  readonly namespace: string;
  readonly nodeName: string;
  readonly image: string;
}

/** Per pod, ms. */
export interface PodSample {
  readonly name: string;
  /** kubectl spawned -> pod seen Running. */
  readonly toRunningMs: number;
  /** kubectl spawned -> kubectl exited. */
  readonly kubectlMs: number;
  /** kubectl spawned -> ADDED read from the watch. */
  readonly toAddedMs: number;
  /** ADDED read -> Running read. */
  readonly addedToRunningMs: number;
}

export interface BurstSample {
  readonly pods: number;
  /** kubectl spawned -> the last pod seen Running. */
  readonly totalMs: number;
  readonly kubectlMs: number;
  /** Per pod: ADDED -> Running. */
  readonly addedToRunningMs: readonly number[];
}

const RUNNING_TIMEOUT_MS = 120_000;

/** A host-network busybox `sleep 3600` pod bound to the node (grace 1 s: `sleep` as PID 1 ignores SIGTERM). */
export function benchPod(ctx: KubectlPhaseContext, name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ctx.namespace },
    spec: {
      nodeName: ctx.nodeName,
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'sleep', image: ctx.image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    },
  };
}

async function kubectlTimed(ctx: KubectlPhaseContext, args: readonly string[]): Promise<{ t0: number; exitedAt: number }> {
  const t0 = performance.now();
  await runKubectl(ctx.server, args);
  return { t0, exitedAt: performance.now() };
}

/** Creates `count` pods `<prefix>-<i>` one after another, each waited for until Running. */
export async function createSequential(ctx: KubectlPhaseContext, prefix: string, count: number): Promise<PodSample[]> {
  const samples: PodSample[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${i}`;
    const file = path.join(ctx.dir, `${name}.json`);
    await writeFile(file, JSON.stringify(benchPod(ctx, name)));
    const { t0, exitedAt } = await kubectlTimed(ctx, ['create', '-f', file]);
    const m = await ctx.watch.running(name, RUNNING_TIMEOUT_MS);
    const added = m.added ?? m.running; // a pod created Running would come as one ADDED event
    samples.push({ name, toRunningMs: m.running - t0, kubectlMs: exitedAt - t0, toAddedMs: added - t0, addedToRunningMs: m.running - added });
  }
  return samples;
}

/** Writes `count` pod files into one directory and creates them with a single `kubectl create -f <dir>`. */
export async function createBurst(ctx: KubectlPhaseContext, prefix: string, count: number): Promise<BurstSample> {
  const dir = path.join(ctx.dir, prefix);
  await mkdir(dir, { recursive: true });
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  await Promise.all(names.map((name) => writeFile(path.join(dir, `${name}.json`), JSON.stringify(benchPod(ctx, name)))));
  const { t0, exitedAt } = await kubectlTimed(ctx, ['create', '-f', dir]);
  const moments = await Promise.all(names.map((name) => ctx.watch.running(name, RUNNING_TIMEOUT_MS)));
  const last = Math.max(...moments.map((m) => m.running));
  return {
    pods: count,
    totalMs: last - t0,
    kubectlMs: exitedAt - t0,
    addedToRunningMs: moments.map((m) => m.running - (m.added ?? m.running)),
  };
}

/**
 * Deletes every pod of the namespace and waits until they are gone: DELETED seen for each named
 * pod, the namespace's pod list empty, and no running container of the namespace in containerd.
 * Returns the time taken, ms.
 */
export async function deleteAll(ctx: KubectlPhaseContext, names: readonly string[]): Promise<number> {
  const t0 = performance.now();
  await runKubectl(ctx.server, ['delete', 'pods', '--all', '--namespace', ctx.namespace, '--wait=false']);
  await ctx.watch.deleted(names, 120_000);
  await waitFor(`the pods of ${ctx.namespace} gone from the API server`, async () => {
    const res = await ctx.server.client.request('GET', `/api/v1/namespaces/${ctx.namespace}/pods`);
    return res.status === 200 && Array.isArray(res.body.items) && res.body.items.length === 0;
  }, { timeoutMs: 60_000, intervalMs: 200 });
  await waitFor(`no running container of ${ctx.namespace} pods in containerd`, async () => {
    const running = await ctx.cri.listContainers({ labelSelector: { [POD_NAMESPACE_LABEL]: ctx.namespace }, state: { state: 'CONTAINER_RUNNING' } });
    return running.length === 0;
  }, { timeoutMs: 60_000, intervalMs: 200 });
  return performance.now() - t0;
}
