/**
 * Stopping and removing a pod's runtime objects (upstream: killContainer, killPodWithSyncResult,
 * and the removal half of the garbage collector for one pod). Grace periods as upstream:
 * the override when given, else the pod's deletionGracePeriodSeconds, else its
 * terminationGracePeriodSeconds, at least 2 s; for an orphan, the grace period its containers
 * were annotated with. StopContainer sends TERM, then KILL after the grace period.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { rm, readdir } from 'node:fs/promises';
import path from 'node:path';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { isRuntimeUnreachable } from './errors.js';
import { POD_TERMINATION_GRACE_PERIOD_ANNOTATION, POD_UID_LABEL } from './labels.js';
import type { ManagerRuntime } from './options.js';
import { podGracePeriodSeconds } from './sandbox-config.js';
import type { RunningPod } from './types.js';

/** Stopping a pod or removing its objects failed; the message names each failure. */
export const KUBERUNTIME_KILL_FAILED = 'KUBERUNTIME_KILL_FAILED';
export const KUBERUNTIME_REMOVE_FAILED = 'KUBERUNTIME_REMOVE_FAILED';
/** upstream minimumGracePeriodInSeconds. */
export const MIN_GRACE_PERIOD_SECONDS = 2;

/** The grace period to stop a container of `pod` with (upstream: killContainer's rules). */
export function gracePeriodFor(pod: Pod | undefined, annotated: number | undefined, override: number | undefined): number {
  if (override !== undefined) return Math.max(0, override);
  let grace = MIN_GRACE_PERIOD_SECONDS;
  if (pod?.metadata?.deletionGracePeriodSeconds !== undefined) grace = pod.metadata.deletionGracePeriodSeconds;
  else if (pod !== undefined) grace = podGracePeriodSeconds(pod);
  else if (annotated !== undefined) grace = annotated;
  return Math.max(MIN_GRACE_PERIOD_SECONDS, grace);
}

export interface KillDeps {
  readonly runtime: ManagerRuntime;
  readonly logger: Logger;
}

/** Stops one container. Rejects with the runtime's error. */
export async function killContainer(deps: KillDeps, id: string, name: string, gracePeriodSeconds: number, reason: string): Promise<void> {
  deps.logger.v(3, 'killing container', { container: name, id, gracePeriodSeconds, reason });
  await deps.runtime.stopContainer({ containerId: id, timeout: gracePeriodSeconds });
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

/**
 * Stops every container of the pod that is not exited, all at once, then every sandbox.
 * Rejects with KUBERUNTIME_KILL_FAILED naming every failure (after trying them all), or with
 * the runtime's own error when it is unreachable.
 */
export async function killPod(deps: KillDeps, running: RunningPod, options: { readonly pod?: Pod; readonly gracePeriodSeconds?: number } = {}): Promise<void> {
  const live = running.containers.filter((c) => c.state !== 'exited');
  const annotated = options.pod === undefined && options.gracePeriodSeconds === undefined && live.length > 0 ? await annotatedGracePeriods(deps.runtime, running.uid) : new Map<string, number>();
  const failures: string[] = [];
  const results = await Promise.allSettled(
    live.map((c) => killContainer(deps, c.id, c.name, gracePeriodFor(options.pod, annotated.get(c.id), options.gracePeriodSeconds), 'the pod is being killed')),
  );
  let unreachable: OrchError | undefined;
  results.forEach((r, i) => {
    if (r.status !== 'rejected') return;
    if (isRuntimeUnreachable(r.reason)) unreachable ??= r.reason;
    failures.push(`container ${live[i]?.name ?? ''} (${live[i]?.id ?? ''}): ${messageOf(r.reason)}`);
  });
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

/** Removes the pod's log directories (`*_<uid>` under the root); a missing root is fine. */
export async function removePodLogs(root: string, uid: string, logger: Logger): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(root);
  } catch (err) {
    if (typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT') return;
    throw err;
  }
  for (const entry of entries.filter((e) => e.endsWith(`_${uid}`))) {
    logger.v(3, 'removing pod log directory', { dir: path.join(root, entry) });
    await rm(path.join(root, entry), { recursive: true, force: true });
  }
}

/**
 * Removes every container, then every sandbox, carrying the pod's UID label, then its log
 * directory. Rejects with KUBERUNTIME_REMOVE_FAILED naming every failure.
 */
export async function removePod(deps: KillDeps & { readonly podLogsRoot: string }, uid: string): Promise<void> {
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
  for (const sandbox of await deps.runtime.listPodSandbox(selector)) {
    try {
      await deps.runtime.removePodSandbox(sandbox.id);
    } catch (err) {
      if (isRuntimeUnreachable(err)) throw err;
      failures.push(`sandbox ${sandbox.id}: ${messageOf(err)}`);
    }
  }
  try {
    await removePodLogs(deps.podLogsRoot, uid, deps.logger);
  } catch (err) {
    failures.push(`logs: ${messageOf(err)}`);
  }
  if (failures.length > 0) {
    throw new OrchError(KUBERUNTIME_REMOVE_FAILED, 'internal', `removing pod ${uid} failed: ${failures.join('; ')}`, { subject: `pod ${uid}` });
  }
}
