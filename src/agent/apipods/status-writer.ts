/**
 * The status writer (upstream: the status manager's apiserver sync): every pod status the
 * agent computes is written to the pod's status subresource, for static pods to their mirror
 * pod. Writes of one pod are serialized and always carry the newest status, so an older status
 * never overwrites a newer one; a pod the API server already holds as terminal (Succeeded or
 * Failed) is never moved back to a running phase. Fields the agent no longer sets are removed
 * (the merge patch sends them as null). Failed writes are retried every `resyncMs`.
 *
 * It also finishes graceful deletion: once the pod's worker finished a pod the API server is
 * deleting, the final status is written and the pod deleted with grace period 0 and a UID
 * precondition (upstream: the status manager's canBeDeleted path).
 */
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { jsonEqual } from '../../api/json-equal.js';
import { API_SOURCE, isStaticPod, podSource, type NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import { statusOf } from '../orchclient/index.js';
import type { RestClient } from '../orchclient/index.js';
import type { StatusManager } from '../status/index.js';

export interface StatusWriterOptions {
  readonly rest: RestClient;
  readonly status: StatusManager;
  readonly logger: Logger;
  /** The retry timer. */
  readonly clock: Clock;
  /** The pod the agent runs with this UID (any source), if it still does. */
  readonly podOf: (uid: string) => NodePod | undefined;
  /** The API object a status goes to: the API pod itself, or the mirror pod of a static pod. */
  readonly apiObjectOf: (pod: NodePod) => NodePod | undefined;
  /** How often failed or pending writes are retried (default 10 s, upstream's syncPeriod). */
  readonly resyncMs?: number;
}

export interface StatusWriter {
  start(): void;
  stop(): Promise<void>;
  /** Writes this pod's status again soon (e.g. its mirror pod was just created). */
  requestWrite(uid: string): void;
  /** The pod's worker finished: an API pod being deleted is deleted for good now. */
  podFinished(pod: NodePod): void;
  /** Resolves when nothing is pending (tests). */
  idle(): Promise<void>;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);

/** A merge patch turning `from` into `to` at the top level of the status (removed keys become null). */
export function statusPatch(from: PodStatus | undefined, to: PodStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...to };
  for (const k of Object.keys(from ?? {})) if (!(k in to)) patch[k] = null;
  return patch;
}

export function createStatusWriter(options: StatusWriterOptions): StatusWriter {
  const { rest, status, logger: log } = options;
  const dirty = new Set<string>();
  const deleting = new Map<string, NodePod>();
  /** What was last written per UID (JSON), to skip writes of equal statuses. */
  const written = new Map<string, string>();
  let running: Promise<void> | undefined;
  let again = false;
  let timer: Timer | undefined;
  let unsubscribe: (() => void) | undefined;
  let stopped = false;

  function kick(): void {
    if (stopped) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        kick();
      }
    });
  }

  async function writeOne(uid: string): Promise<boolean> {
    const pod = options.podOf(uid) ?? deleting.get(uid);
    const local = status.getPodStatus(uid);
    if (pod === undefined || local === undefined) return true;
    if (!isStaticPod(pod) && podSource(pod) !== API_SOURCE) return true;
    const target = options.apiObjectOf(pod);
    if (target === undefined) return !isStaticPod(pod); // a static pod's mirror comes later: keep it pending
    const { namespace: ns, name, uid: targetUID } = target.metadata;
    const json = `${targetUID}:${JSON.stringify(local)}`;
    if (written.get(uid) === json) return true;
    const current = target.status;
    if (current !== undefined && jsonEqual(current, local)) {
      // The API server holds this status already (an agent restart recomputed an unchanged one).
      written.set(uid, json);
      return true;
    }
    if (TERMINAL.has(current?.phase ?? '') && !TERMINAL.has(local.phase ?? '')) {
      log.v(2, 'Not moving a terminal pod back to a running phase', { pod: `${ns}/${name}`, apiPhase: current?.phase, phase: local.phase });
      return true;
    }
    try {
      await rest.patch(`/api/v1/namespaces/${ns}/pods/${name}/status`, 'merge', { metadata: { uid: targetUID }, status: statusPatch(current, local) });
      written.set(uid, json);
      log.v(3, 'Pod status written', { pod: `${ns}/${name}`, phase: local.phase });
      return true;
    } catch (err) {
      const code = statusOf(err)?.code;
      if (code === 404) return true; // the pod is gone; its removal comes through the watch
      log.warn('Writing a pod status failed; retrying', { pod: `${ns}/${name}`, err: messageOf(err) });
      return false;
    }
  }

  async function deleteOne(pod: NodePod): Promise<boolean> {
    const target = options.apiObjectOf(pod) ?? pod;
    const { namespace: ns, name } = target.metadata;
    try {
      await rest.delete(`/api/v1/namespaces/${ns}/pods/${name}`, {
        apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: target.metadata.uid },
      });
      log.info('Pod deleted from the API server after its containers stopped', { pod: `${ns}/${name}` });
      return true;
    } catch (err) {
      const code = statusOf(err)?.code;
      if (code === 404 || code === 409) return true; // gone, or another pod of that name now
      log.warn('Deleting a terminated pod failed; retrying', { pod: `${ns}/${name}`, err: messageOf(err) });
      return false;
    }
  }

  async function pass(): Promise<void> {
    const uids = [...dirty];
    dirty.clear();
    const failed = await Promise.all(uids.map(async (uid) => ((await writeOne(uid)) ? undefined : uid)));
    for (const uid of failed) if (uid !== undefined) dirty.add(uid);
    for (const [uid, pod] of [...deleting]) {
      if (dirty.has(uid)) continue; // the final status first
      if (await deleteOne(pod)) {
        deleting.delete(uid);
        written.delete(uid);
      }
    }
  }

  return {
    start() {
      unsubscribe = status.onChange((uid) => {
        dirty.add(uid);
        kick();
      });
      const tick = (): void => {
        if (dirty.size > 0 || deleting.size > 0) kick();
        timer = options.clock.setTimer(options.resyncMs ?? 10_000, tick);
      };
      tick();
    },
    async stop() {
      stopped = true;
      unsubscribe?.();
      timer?.cancel();
      await running;
    },
    requestWrite(uid) {
      written.delete(uid);
      dirty.add(uid);
      kick();
    },
    podFinished(pod) {
      const { uid } = pod.metadata;
      if (pod.metadata.deletionTimestamp === undefined || podSource(pod) !== API_SOURCE) {
        written.delete(uid);
        return;
      }
      deleting.set(uid, pod);
      dirty.add(uid);
      kick();
    },
    async idle() {
      while (running !== undefined) await running;
    },
  };
}
