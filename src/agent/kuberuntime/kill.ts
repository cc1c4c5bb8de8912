/**
 * Stopping and removing a pod's runtime objects (upstream: killContainer, killPodWithSyncResult,
 * and the removal half of the garbage collector for one pod). Grace periods as upstream
 * (setTerminationGracePeriod): the pod's deletionGracePeriodSeconds, else for a container that
 * failed its liveness or startup probe that probe's terminationGracePeriodSeconds, else the
 * pod's terminationGracePeriodSeconds; for an orphan, the grace period its containers were
 * annotated with. The preStop hook runs first, within that period, and the time it took is
 * taken from what StopContainer gets (TERM, then KILL after it); without an override the stop
 * gets at least 2 s. With the SidecarContainers gate the pod's regular containers stop first,
 * then its restartable init containers.
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { rm, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { PodEvent } from '../prober/index.js';
import { isRuntimeUnreachable } from './errors.js';
import { POD_TERMINATION_GRACE_PERIOD_ANNOTATION, POD_UID_LABEL } from './labels.js';
import { emitEvent, runHandler } from './lifecycle.js';
import type { ManagerRuntime } from './options.js';
import { podGracePeriodSeconds, podLogsDirectory } from './sandbox-config.js';
import type { RunningPod } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

/** Stopping a pod or removing its objects failed; the message names each failure. */
export const KUBERUNTIME_KILL_FAILED = 'KUBERUNTIME_KILL_FAILED';
export const KUBERUNTIME_REMOVE_FAILED = 'KUBERUNTIME_REMOVE_FAILED';
/** upstream minimumGracePeriodInSeconds. */
export const MIN_GRACE_PERIOD_SECONDS = 2;

export interface KillDeps {
  readonly runtime: ManagerRuntime;
  readonly logger: Logger;
  /** The preStop hook's share of the grace period. */
  readonly clock: Clock;
  readonly onEvent?: ((e: PodEvent) => void) | undefined;
  /** The pod's IP for httpGet preStop hooks without a host. */
  readonly podIP?: ((pod: NodePod) => Promise<string>) | undefined;
  /** Stop restartable init containers after the others (the SidecarContainers gate). */
  readonly sidecarContainers?: boolean | undefined;
}

/** One container to stop. */
export interface KillTarget {
  readonly id: string;
  readonly name: string;
  readonly pod?: NodePod | undefined;
  /** The container's spec (its preStop hook and probes); absent for orphans. */
  readonly spec?: Container | undefined;
  /** The Killing event's message ('' : `Stopping container <name>`). */
  readonly message: string;
  /** Killed because this probe failed (its terminationGracePeriodSeconds applies). */
  readonly probe?: 'liveness' | 'startup' | undefined;
  readonly gracePeriodOverride?: number | undefined;
  /** An orphan's annotated grace period. */
  readonly annotatedGrace?: number | undefined;
}

/** The grace period before the preStop hook and the minimum (upstream setTerminationGracePeriod). */
export function terminationGracePeriod(target: Pick<KillTarget, 'pod' | 'spec' | 'probe' | 'annotatedGrace'>): number {
  const { pod, spec } = target;
  if (pod === undefined) return target.annotatedGrace ?? MIN_GRACE_PERIOD_SECONDS;
  if (pod.metadata.deletionGracePeriodSeconds !== undefined) return pod.metadata.deletionGracePeriodSeconds;
  const probe = target.probe === 'liveness' ? spec?.livenessProbe : target.probe === 'startup' ? spec?.startupProbe : undefined;
  return probe?.terminationGracePeriodSeconds ?? podGracePeriodSeconds(pod);
}

/** Runs the preStop hook within `graceSeconds`; resolves to the whole seconds it took (upstream: executePreStopHook). */
async function preStop(deps: KillDeps, target: KillTarget, pod: NodePod, spec: Container, graceSeconds: number): Promise<number> {
  const handler = spec.lifecycle?.preStop;
  if (handler === undefined || graceSeconds <= 0) return 0;
  const started = deps.clock.now();
  const expiry = new AbortController();
  const deadline = expiry.signal;
  const timer = deps.clock.setTimer(graceSeconds * 1000, () => { expiry.abort(); });
  const run = runHandler(deps, {
    pod, container: spec, containerId: target.id, handler, signal: deadline,
    podIP: () => (deps.podIP === undefined ? Promise.resolve('') : deps.podIP(pod)),
  }).then((failure) => {
    if (failure === undefined) {
      deps.logger.v(3, 'PreStop hook completed', { container: spec.name, id: target.id });
      return;
    }
    deps.logger.warn('PreStop hook failed', { container: spec.name, id: target.id, err: failure });
    // Not the message: it may carry secrets (as upstream).
    emitEvent(deps, { type: 'Warning', reason: 'FailedPreStopHook', message: 'PreStopHook failed', pod, container: spec.name });
  });
  const expired = new Promise<void>((resolve) => {
    deadline.addEventListener('abort', () => {
      deps.logger.v(2, 'PreStop hook not completed in grace period', { container: spec.name, id: target.id, gracePeriodSeconds: graceSeconds });
      resolve();
    }, { once: true });
  });
  await Promise.race([run, expired]);
  timer.cancel();
  return Math.floor((deps.clock.now() - started) / 1000);
}

/** Stops one container: Killing event, preStop, then StopContainer with what is left of the grace period. Rejects with the runtime's error. */
export async function killContainer(deps: KillDeps, target: KillTarget): Promise<void> {
  let grace = target.gracePeriodOverride ?? terminationGracePeriod(target);
  const { pod, spec } = target;
  if (pod !== undefined) {
    emitEvent(deps, { type: 'Normal', reason: 'Killing', message: target.message === '' ? `Stopping container ${target.name}` : target.message, pod, container: target.name });
    if (spec !== undefined) grace -= await preStop(deps, target, pod, spec, grace);
  }
  grace = target.gracePeriodOverride === undefined ? Math.max(MIN_GRACE_PERIOD_SECONDS, grace) : Math.max(0, grace);
  deps.logger.v(3, 'killing container', { container: target.name, id: target.id, gracePeriodSeconds: grace, reason: target.message });
  await deps.runtime.stopContainer({ containerId: target.id, timeout: grace });
}

/** The grace periods annotated on an orphan's containers, by container ID. */
async function annotatedGracePeriods(runtime: ManagerRuntime, uid: string): Promise<Map<string, number>> {
  const containers = await runtime.listContainers({ labelSelector: { [POD_UID_LABEL]: uid } });
  const periods = new Map<string, number>();
  for (const c of containers) {
    const value = Number.parseInt(c.annotations[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] ?? '', 10);
    if (Number.isFinite(value)) periods.set(c.id, value);
  }
  return periods;
}

/** The spec of a container of the pod by name (regular or init), and whether it is a sidecar. */
function specOf(pod: NodePod | undefined, name: string): { spec?: Container; sidecar: boolean } {
  const regular = pod?.spec?.containers.find((c) => c.name === name);
  if (regular !== undefined) return { spec: regular, sidecar: false };
  const init = pod?.spec?.initContainers?.find((c) => c.name === name);
  return init === undefined ? { sidecar: false } : { spec: init, sidecar: init.restartPolicy === 'Always' };
}

/**
 * Stops every container of the pod that is not exited (all at once; with the sidecar gate the
 * regular ones first, then the sidecars), then every sandbox. Rejects with
 * KUBERUNTIME_KILL_FAILED naming every failure (after trying them all), or with the runtime's
 * own error when it is unreachable.
 */
export async function killPod(deps: KillDeps, running: RunningPod, options: { readonly pod?: NodePod; readonly gracePeriodSeconds?: number } = {}): Promise<void> {
  const live = running.containers.filter((c) => c.state !== 'exited');
  const annotated = options.pod === undefined && options.gracePeriodSeconds === undefined && live.length > 0 ? await annotatedGracePeriods(deps.runtime, running.uid) : new Map<string, number>();
  const targets = live.map((c) => {
    const { spec, sidecar } = specOf(options.pod, c.name);
    const target: KillTarget = { id: c.id, name: c.name, pod: options.pod, spec, message: '', gracePeriodOverride: options.gracePeriodSeconds, annotatedGrace: annotated.get(c.id) };
    return { target, late: deps.sidecarContainers === true && sidecar };
  });
  const failures: string[] = [];
  let unreachable: OrchError | undefined;
  for (const wave of [targets.filter((t) => !t.late), targets.filter((t) => t.late)]) {
    const results = await Promise.allSettled(wave.map((t) => killContainer(deps, t.target)));
    results.forEach((r, i) => {
      if (r.status !== 'rejected') return;
      if (isRuntimeUnreachable(r.reason)) unreachable ??= r.reason;
      failures.push(`container ${wave[i]?.target.name ?? ''} (${wave[i]?.target.id ?? ''}): ${messageOf(r.reason)}`);
    });
  }
  if (unreachable !== undefined) throw unreachable;
  for (const id of running.sandboxIds) {
    try {
      await deps.runtime.stopPodSandbox(id);
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      failures.push(`sandbox ${id}: ${messageOf(err)}`);
    }
  }
  if (failures.length > 0) {
    throw new OrchError(KUBERUNTIME_KILL_FAILED, 'internal', `killing pod ${running.namespace}/${running.name} (${running.uid}) failed: ${failures.join('; ')}`, {
      subject: `pod ${running.uid}`,
    });
  }
}

/**
 * Removes the pod's log directories: those of `known` identities (`<namespace>_<name>_<uid>`,
 * read from its sandboxes) when given, else every `*_<uid>` under the root (a sandbox removed
 * by an earlier pass: the scan reads the whole root, one entry per pod of the node). A missing
 * root is fine.
 */
export async function removePodLogs(root: string, uid: string, logger: Logger, known: readonly { readonly namespace: string; readonly name: string }[] = []): Promise<void> {
  let dirs: string[];
  if (known.length > 0) {
    dirs = [...new Set(known.map((id) => podLogsDirectory(root, { ...id, uid })))];
  } else {
    try {
      dirs = (await readdir(root)).filter((e) => e.endsWith(`_${uid}`)).map((e) => path.join(root, e));
    } catch (err) {
      if (typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT') return;
      throw err;
    }
  }
  for (const dir of dirs) {
    logger.v(3, 'removing pod log directory', { dir });
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Removes every container, then every sandbox, carrying the pod's UID label, then its log
 * directory. Rejects with KUBERUNTIME_REMOVE_FAILED naming every failure.
 */
export async function removePod(deps: Pick<KillDeps, 'runtime' | 'logger'> & { readonly podLogsRoot: string }, uid: string): Promise<void> {
  if (uid === '') throw new OrchError(KUBERUNTIME_REMOVE_FAILED, 'invalid', 'removing a pod needs its UID', { subject: 'uid' });
  const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
  const failures: string[] = [];
  const containers = await deps.runtime.listContainers(selector);
  const removed = await Promise.allSettled(containers.map((c) => deps.runtime.removeContainer(c.id)));
  for (const [i, r] of removed.entries()) {
    if (r.status !== 'rejected') continue;
    if (isRuntimeUnreachable(r.reason)) throw r.reason;
    failures.push(`container ${containers[i]?.id ?? ''}: ${messageOf(r.reason)}`);
  }
  const sandboxes = await deps.runtime.listPodSandbox(selector);
  for (const sandbox of sandboxes) {
    try {
      await deps.runtime.removePodSandbox(sandbox.id);
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      failures.push(`sandbox ${sandbox.id}: ${messageOf(err)}`);
    }
  }
  try {
    const known = sandboxes.flatMap((sb) => (sb.metadata === null || sb.metadata.uid !== uid ? [] : [{ namespace: sb.metadata.namespace, name: sb.metadata.name }]));
    await removePodLogs(deps.podLogsRoot, uid, deps.logger, known);
  } catch (err) {
    failures.push(`logs: ${messageOf(err)}`);
  }
  if (failures.length > 0) {
    throw new OrchError(KUBERUNTIME_REMOVE_FAILED, 'internal', `removing pod ${uid} failed: ${failures.join('; ')}`, { subject: `pod ${uid}` });
  }
}
