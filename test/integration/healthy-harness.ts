/**
 * A node for the healthy-* integration tests, composed from the real modules as the agent's
 * composition root does: a private containerd, the runtime manager, the prober (its results
 * waking the pod worker), pod cgroups under the instance's cgroup root, the volume manager,
 * the per-pod sync, the pod workers and the PLEG. Pods are given to the workers directly (no
 * pod source); events and log lines are kept for assertions.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../src/api/pod/index.js';
import { createPodCgroups, type PodCgroups } from '../../src/agent/cm/index.js';
import { qosClass } from '../../src/api/pod/index.js';
import { createPodStatusCache, createRuntimeManager, type PodRuntimeManager } from '../../src/agent/kuberuntime/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { createPleg, type Pleg } from '../../src/agent/pleg/index.js';
import { createProberManager, createProberMetrics, type PodEvent, type ProberManager, type ProberMetrics } from '../../src/agent/prober/index.js';
import { createPodSyncer } from '../../src/agent/podsync/index.js';
import { createPodWorkers, type PodWorkers } from '../../src/agent/podworkers/index.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { createStatusManager, type StatusManager } from '../../src/agent/status/index.js';
import { createVolumeManager } from '../../src/agent/volumes/index.js';
import { Cleanups, processesUnder, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';
import { realClock } from '../../src/api/clock.js';

export const HOST_IP = '127.0.0.1';

export interface HealthyNodeOptions {
  readonly sidecarContainers?: boolean;
  readonly seccompDefault?: boolean;
  readonly podPidsLimit?: number;
  /** The restart back-off (default 200 ms doubling to 1.6 s). */
  readonly backOffMs?: number;
}

export interface HealthyNode {
  readonly ctrd: ContainerdInstance;
  readonly cri: CriClient;
  readonly runtime: PodRuntimeManager;
  readonly prober: ProberManager;
  readonly metrics: ProberMetrics;
  readonly status: StatusManager;
  readonly cgroups: PodCgroups;
  readonly workers: PodWorkers;
  readonly pleg: Pleg;
  /** The agent's root directory (pods, seccomp profiles). */
  readonly rootDir: string;
  readonly events: PodEvent[];
  readonly logs: string[];
  /** A pod in namespace `healthy` with a fresh UID and a short grace period. */
  pod(name: string, spec: Partial<NonNullable<Pod['spec']>> & Pick<NonNullable<Pod['spec']>, 'containers'>): NodePod;
  /** Gives the pod to its worker (the sync loop's ADD). */
  run(pod: NodePod): void;
  /** Stops the pod; the source no longer wants it (its worker kills and removes it). */
  remove(pod: NodePod): void;
  statusOf(pod: NodePod): PodStatus | undefined;
  /** Polls the pod's status until `check` returns true. */
  waitStatus(pod: NodePod, what: string, check: (s: PodStatus) => boolean, timeoutMs?: number): Promise<PodStatus>;
  /** The running container's ID of that name (regular or init). */
  containerId(pod: NodePod, name: string): Promise<string>;
  exec(pod: NodePod, container: string, cmd: readonly string[]): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Events of the pod, as `Reason: message`. */
  eventsOf(pod: NodePod): string[];
  stop(): Promise<void>;
}

export async function startHealthyNode(options: HealthyNodeOptions = {}): Promise<HealthyNode> {
  const cleanups = new Cleanups();
  const logs: string[] = [];
  const events: PodEvent[] = [];
  const root = new LogRoot({ clock: realClock, format: 'text', verbosity: 4, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: (_s, l) => logs.push(l) } });
  const ctrd = await startContainerd();
  cleanups.push(async () => {
    await ctrd.stop();
    assert.deepEqual(await processesUnder(ctrd.dir), [], 'processes left behind');
  });
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 60_000 });
  cleanups.push(() => {
    cri.close();
  });
  const rootDir = await mkdtemp(path.join(os.tmpdir(), 'na-healthy-'));
  cleanups.push(() => rm(rootDir, { recursive: true, force: true }));
  const desired = new Map<string, NodePod>();
  const late: { wake?: (uid: string) => void } = {};
  const wake = (uid: string): void => late.wake?.(uid);
  const onEvent = (e: PodEvent): void => {
    events.push(e);
  };
  const sidecarContainers = options.sidecarContainers ?? false;

  const cgroups = createPodCgroups({
    clock: realClock, cgroupRoot: ctrd.cgroupRoot, cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger: root.logger('cm'),
    ...(options.podPidsLimit === undefined ? {} : { podPidsLimit: options.podPidsLimit }),
  });
  const volumes = createVolumeManager({ rootDir, clock: realClock, logger: root.logger('volumes') });
  const metrics = createProberMetrics();
  const prober = createProberManager({ exec: cri, logger: root.logger('prober'), clock: realClock, metrics, sidecarContainers, onEvent });
  prober.onResult((c) => { wake(c.podUID); });
  // Fed by the PLEG only: the runtime manager reads the runtime every time, so that the tests'
  // reads of it see each change as it happens.
  const podCache = createPodStatusCache({ clock: realClock });
  const backOff = options.backOffMs ?? 200;
  const runtime = createRuntimeManager({
    clock: realClock,
    runtime: cri, images: cri, logger: root.logger('kuberuntime'), podLogsRoot: ctrd.logDir,
    dns: { clusterDNS: [], clusterDomain: 'cluster.local', resolvConf: '' },
    hostIPs: () => [HOST_IP], nodeName: 'healthy-node',
    volumes,
    cgroupParent: (pod) => cgroups.ensure(pod),
    containerBackOff: { initialMs: backOff, maxMs: 8 * backOff },
    probeResults: prober, onEvent, sidecarContainers,
    seccompDefault: options.seccompDefault ?? false,
    seccompProfileRoot: path.join(rootDir, 'seccomp'),
  });
  const status = createStatusManager();
  const syncer = createPodSyncer({
    runtime, cgroups, status, clock: realClock, logger: root.logger('podsync'), hostIPs: () => [HOST_IP], qosClass,
    volumes,
    isDesired: (uid) => desired.has(uid), probes: prober, sidecarContainers, onEvent,
  });
  const workers = createPodWorkers({ syncer, logger: root.logger('podworkers'), clock: realClock, resyncIntervalMs: 5000, backoffMs: 200, maxBackoffMs: 2000 });
  late.wake = (uid) => {
    const pod = desired.get(uid);
    if (pod !== undefined) workers.updatePod({ type: 'sync', pod });
  };
  const pleg = createPleg({
    runtime: { listPodSandbox: () => cri.listPodSandbox(), listContainers: () => cri.listContainers() },
    cache: podCache, clock: realClock, logger: root.logger('pleg'), onPodChanged: wake, relistPeriodMs: 300,
  });
  pleg.start();
  // Run newest first: stop the loops (killing every container at once, so that a worker's
  // graceful stop in flight ends now), then remove what is left with nothing else running.
  cleanups.push(async () => {
    for (const p of await runtime.listPods()) {
      await runtime.killPod(p, { gracePeriodSeconds: 0 });
      await runtime.removePod(p.uid);
      await cgroups.remove(p.uid);
    }
  });
  cleanups.push(async () => {
    await pleg.stop();
    const kills = (await runtime.listPods()).map((p) => runtime.killPod(p, { gracePeriodSeconds: 0 }));
    // A worker may be removing the same pod meanwhile: failures here are retried above.
    const failed = (await Promise.allSettled(kills)).filter((r) => r.status === 'rejected').length;
    if (failed > 0) logs.push(`harness: ${failed} early kill(s) failed; retried once the workers stopped\n`);
    await workers.stop();
    await prober.stop();
  });

  const node: HealthyNode = {
    ctrd, cri, runtime, prober, metrics, status, cgroups, workers, pleg, rootDir, events, logs,
    pod: (name, spec) => ({ metadata: { name, namespace: 'healthy', uid: randomUUID() }, spec: { terminationGracePeriodSeconds: 2, ...spec } }),
    run(pod) {
      desired.set(pod.metadata.uid, pod);
      workers.updatePod({ type: 'create', pod });
    },
    remove(pod) {
      desired.delete(pod.metadata.uid);
      workers.updatePod({ type: 'kill', pod });
    },
    statusOf: (pod) => status.getPodStatus(pod.metadata.uid),
    waitStatus: (pod, what, check, timeoutMs = 20_000) =>
      waitFor(`${pod.metadata.name}: ${what}`, () => {
        const s = status.getPodStatus(pod.metadata.uid);
        return s !== undefined && check(s) && s;
      }, { timeoutMs }),
    async containerId(pod, name) {
      return waitFor(`${name} of ${pod.metadata.name} running`, async () => {
        const s = await runtime.getPodStatus(pod.metadata.uid, pod.metadata.name, 'healthy');
        return s.containers.find((c) => c.name === name && c.state === 'running')?.id;
      });
    },
    async exec(pod, container, cmd) {
      const id = await node.containerId(pod, container);
      const r = await cri.execSync({ containerId: id, cmd, timeout: 10 });
      return { exitCode: r.exitCode, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
    },
    eventsOf: (pod) => events.filter((e) => e.pod.metadata.uid === pod.metadata.uid).map((e) => `${e.reason}: ${e.message}`),
    async stop() {
      await cleanups.run().catch((err: unknown) => {
        const causes = err instanceof AggregateError ? err.errors.map((e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e))) : [];
        process.stderr.write(`${logs.join('')}\ncleanup failures:\n${causes.join('\n')}\n`);
        throw err;
      });
    },
  };
  return node;
}

/** A container's status by name (regular first, then init). */
export function containerStatus(s: PodStatus, name: string): NonNullable<PodStatus['containerStatuses']>[number] | undefined {
  return s.containerStatuses?.find((c) => c.name === name) ?? s.initContainerStatuses?.find((c) => c.name === name);
}

/** The status of a pod condition ('True', 'False' or undefined). */
export function conditionOf(s: PodStatus, type: string): string | undefined {
  return s.conditions?.find((c) => c.type === type)?.status;
}
