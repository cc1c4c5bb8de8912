/**
 * runonce (upstream's kubelet RunOnce): take the pods of the manifest path and URL sources once,
 * sync each until it runs or finishes (or gives up after upstream's retries: 10 attempts, the
 * pause doubling from 1 s), and report each pod's final state. The containers keep running
 * after the agent exits, as upstream's.
 *
 * Owns: waiting for the sources' first snapshot, the retry loop and what counts as settled.
 * Must not: run the daemon's loops (no PLEG, no pod workers, no housekeeping) or stop what it
 * started.
 */
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { podFullName } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { PodConfigUpdate } from '../syncloop/index.js';

/** Upstream: 10 attempts, the pause doubling from 1 s. */
export const MAX_ATTEMPTS = 10;
export const FIRST_DELAY_MS = 1000;

export interface RunOnceOptions {
  readonly podConfig: {
    subscribe(listener: (u: PodConfigUpdate) => void): () => void;
    start(): Promise<void>;
    stop(): Promise<void>;
    sourcesReady(): boolean;
  };
  readonly syncer: { syncPod(pod: NodePod, kind: 'create' | 'sync'): Promise<unknown> };
  readonly status: { getPodStatus(uid: string): PodStatus | undefined };
  /** How many pods may run (maxPods, podsPerCore); the pods beyond are refused. */
  readonly capacity: number;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How long to wait for every source's first snapshot (default 30 s). */
  readonly sourcesTimeoutMs?: number;
}

export interface RunOnceResult {
  readonly pod: NodePod;
  readonly ok: boolean;
  /** One line: the pod, its phase and each container's state. */
  readonly line: string;
}

/** Running with every container running, or finished. */
export function settled(status: PodStatus | undefined): boolean {
  if (status === undefined) return false;
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return true;
  return status.phase === 'Running' && (status.containerStatuses ?? []).every((s) => s.state?.running !== undefined);
}

/** `pod "name_namespace": Phase (reason: message) c1=running c2=terminated(0) ...` */
export function describePod(pod: Pod, status: PodStatus | undefined): string {
  const containers = (status?.containerStatuses ?? [])
    .map((s) => `${s.name}=${s.state?.running !== undefined ? 'running' : s.state?.terminated !== undefined ? `terminated(${s.state.terminated.exitCode})` : `waiting(${s.state?.waiting?.reason ?? ''})`}`)
    .join(' ');
  return `pod "${podFullName(pod)}": ${status?.phase ?? 'Unknown'}${status?.reason === undefined ? '' : ` (${status.reason}: ${status.message ?? ''})`} ${containers}`;
}

/** The pods of every source's first snapshot; undefined when a source gave none in time. */
async function firstSnapshot(o: RunOnceOptions): Promise<NodePod[] | undefined> {
  const pods = new Map<string, NodePod>();
  const unsubscribe = o.podConfig.subscribe((u) => {
    for (const p of u.pods) {
      if (u.op === 'REMOVE') pods.delete(p.metadata.uid);
      else pods.set(p.metadata.uid, p);
    }
  });
  await o.podConfig.start();
  const deadline = o.clock.now() + (o.sourcesTimeoutMs ?? 30_000);
  while (!o.podConfig.sourcesReady() && o.clock.now() < deadline) await sleepKeepingAlive(o.clock, 50);
  unsubscribe();
  await o.podConfig.stop();
  return o.podConfig.sourcesReady() ? [...pods.values()] : undefined;
}

/** Syncs one pod until it settles or the attempts run out. */
async function runPod(o: RunOnceOptions, pod: NodePod): Promise<RunOnceResult> {
  const uid = pod.metadata.uid;
  let wait = FIRST_DELAY_MS;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      await o.syncer.syncPod(pod, attempt === 1 ? 'create' : 'sync');
    } catch (err) {
      o.logger.warn('Pod sync failed', { pod: pod.metadata.name, attempt, err: messageOf(err) });
    }
    if (settled(o.status.getPodStatus(uid))) break;
    await sleepKeepingAlive(o.clock, wait);
    wait *= 2;
  }
  const status = o.status.getPodStatus(uid);
  const ok = status?.phase === 'Succeeded' || (status?.phase === 'Running' && settled(status));
  return { pod, ok, line: describePod(pod, status) };
}

/**
 * Runs the sources' pods once; resolves to one result per pod (in the sources' order), or to
 * undefined when the sources gave no first snapshot in time (a manifest that does not parse).
 */
export async function runPodsOnce(o: RunOnceOptions): Promise<RunOnceResult[] | undefined> {
  const pods = await firstSnapshot(o);
  if (pods === undefined) return undefined;
  return Promise.all(pods.map((pod, i) =>
    i >= o.capacity
      ? Promise.resolve({ pod, ok: false, line: `pod "${podFullName(pod)}": rejected (OutOfpods: capacity ${o.capacity})` })
      : runPod(o, pod)));
}
