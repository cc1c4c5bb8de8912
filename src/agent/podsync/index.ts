/**
 * The per-pod sync of the agent (upstream's Kubelet.SyncPod, SyncTerminatingPod and
 * SyncTerminatedPod): the PodSyncer the pod workers call. One pass reads what the runtime
 * holds, publishes the pod status, prepares the pod's cgroup and volumes, and lets the runtime
 * manager make the runtime match the spec; termination kills the containers with the grace
 * period, then releases everything the pod held on the node.
 *
 * Owns: the order of those steps and the last sync errors of each pod (for its status).
 * Must not: decide admission or orphans (the sync loop does) or talk to CRI directly.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';
import type { PodRuntimeManager, SyncError } from '../kuberuntime/types.js';
import type { Logger } from '../logging/index.js';
import type { PodSyncer, SyncOutcome } from '../podworkers/index.js';
import { podName } from '../podworkers/index.js';
import { computePodStatus, type StatusManager } from '../status/index.js';

/** The pod's cgroup, as the sync needs it. */
export interface PodCgroupHandle {
  ensure(pod: Pod): Promise<string>;
  remove(podUID: string): Promise<void>;
}

/** The pod's volumes, as the sync needs them. */
export interface PodVolumeHandle {
  preparePodVolumes(pod: Pod): Promise<unknown>;
  cleanupPodVolumes(podUID: string): Promise<void>;
}

export interface PodSyncOptions {
  readonly runtime: PodRuntimeManager;
  readonly cgroups: PodCgroupHandle;
  readonly volumes: PodVolumeHandle;
  readonly status: StatusManager;
  readonly logger: Logger;
  readonly hostIPs: () => readonly string[];
  /**
   * True while the pod is still wanted by its source. A terminated pod that is still wanted
   * (it completed) keeps its stopped containers and volumes, so that its logs and final status
   * stay readable; one that is not is removed from the node entirely.
   */
  readonly isDesired: (uid: string) => boolean;
  readonly qosClass: (pod: Pod) => string;
  readonly now?: () => Date;
  /** Called with each problem of a sync pass (for events later). */
  readonly onSyncError?: (pod: Pod, error: SyncError) => void;
}

function ids(pod: Pod): { uid: string; name: string; namespace: string } {
  return { uid: pod.metadata?.uid ?? '', name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '' };
}

export function createPodSyncer(options: PodSyncOptions): PodSyncer & { lastErrors(uid: string): readonly SyncError[] } {
  const { runtime, status, logger } = options;
  const now = options.now ?? (() => new Date());
  const errors = new Map<string, readonly SyncError[]>();

  async function publish(pod: Pod): Promise<ReturnType<typeof computePodStatus>> {
    const { uid, name, namespace } = ids(pod);
    const held = await runtime.getPodStatus(uid, name, namespace);
    const computed = computePodStatus({
      pod, runtime: held, syncErrors: errors.get(uid) ?? [], hostIPs: options.hostIPs(),
      previous: status.getPodStatus(uid), qosClass: options.qosClass(pod), now: now(),
    });
    status.setPodStatus(uid, computed);
    return computed;
  }

  return {
    lastErrors: (uid) => errors.get(uid) ?? [],

    async syncPod(pod): Promise<SyncOutcome> {
      const { uid, name, namespace } = ids(pod);
      const before = await publish(pod);
      if (before.phase === 'Succeeded' || before.phase === 'Failed') return { terminal: true };
      let problems: SyncError[] = [];
      try {
        await options.cgroups.ensure(pod);
        await options.volumes.preparePodVolumes(pod);
      } catch (err) {
        // Mount problems keep every container waiting; the worker retries with its back-off.
        problems = (pod.spec?.containers ?? []).map((c) => ({ container: c.name, reason: 'CreateContainerConfigError', message: messageOf(err) }));
        errors.set(uid, problems);
        await publish(pod);
        for (const p of problems.slice(0, 1)) options.onSyncError?.(pod, p);
        throw err;
      }
      const held = await runtime.getPodStatus(uid, name, namespace);
      const result = await runtime.syncPod(pod, held);
      problems = [...result.errors];
      errors.set(uid, problems);
      for (const p of problems) options.onSyncError?.(pod, p);
      const after = await publish(pod);
      if (problems.length > 0) logger.v(2, 'Pod sync left problems', { pod: podName(pod), problems: problems.map((p) => `${p.container ?? 'sandbox'}: ${p.reason}`) });
      if (after.phase === 'Succeeded' || after.phase === 'Failed') return { terminal: true };
      const requeue = (result as { requeueAfterMs?: number }).requeueAfterMs;
      return requeue === undefined ? {} : { requeueAfterMs: requeue };
    },

    async syncTerminatingPod(pod, gracePeriodSeconds) {
      const { uid } = ids(pod);
      const running = (await runtime.listPods()).find((p) => p.uid === uid);
      if (running !== undefined) {
        await runtime.killPod(running, { pod, ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }) });
      }
      await publish(pod);
      logger.v(1, 'Pod terminated', { pod: podName(pod) });
    },

    async syncTerminatedPod(pod) {
      const { uid } = ids(pod);
      if (!options.isDesired(uid)) {
        await runtime.removePod(uid);
        await options.volumes.cleanupPodVolumes(uid);
        status.removePod(uid);
      }
      await options.cgroups.remove(uid);
      errors.delete(uid);
    },
  };
}
