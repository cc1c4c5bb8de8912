/**
 * The per-pod sync of the agent (upstream's Kubelet.SyncPod, SyncTerminatingPod and
 * SyncTerminatedPod): the PodSyncer the pod workers call. One pass reads what the runtime
 * holds, publishes the pod status, prepares the pod's cgroup and volumes, and lets the runtime
 * manager make the runtime match the spec; termination kills the containers with the grace
 * period, then releases everything the pod held on the node.
 *
 * It also hands the prober each pod's runtime state (its workers follow the containers) and
 * reads readiness back into the status, fails pods past activeDeadlineSeconds
 * (DeadlineExceeded), and gives emptyDir volumes the pod's fsGroup.
 *
 * Owns: the order of those steps, the last sync errors of each pod (for its status) and the
 * failures decided for it (DeadlineExceeded here; Evicted or a node shutdown through the kill
 * that carries them). Must not: decide admission or orphans (the sync loop
 * does), talk to CRI directly, or run probes (the prober does).
 */
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { isStaticPod, podNamespacedName, type NodePod } from '../../api/pod/index.js';
import { runningPodOf } from '../kuberuntime/index.js';
import type { PodRuntimeManager, RuntimePodStatus, SyncError } from '../kuberuntime/index.js';
import type { Logger } from '../logging/index.js';
import type { PodEvent, PodProbeView, ProbedPodState } from '../prober/index.js';
import type { PodFailure, PodSyncer, SyncOutcome } from '../podworkers/index.js';
import type { ResizeManager } from '../resize/index.js';
import { computePodStatus, type StatusManager } from '../status/index.js';
import { activeDeadlineLeftMs, DEADLINE_EXCEEDED_MESSAGE, DEADLINE_EXCEEDED_REASON } from './deadline.js';
import { ensureVolumeRootOwnership, setVolumeOwnership } from './fs-group.js';

export { activeDeadlineLeftMs, DEADLINE_EXCEEDED_MESSAGE, DEADLINE_EXCEEDED_REASON } from './deadline.js';
export { ensureVolumeRootOwnership, setVolumeOwnership } from './fs-group.js';
export { tracedPodSyncer, type TracedPodSyncerOptions } from './tracing.js';

/** The pod's cgroup, as the sync needs it. */
export interface PodCgroupHandle {
  ensure(pod: NodePod): Promise<string>;
  remove(podUID: string): Promise<void>;
}

/** A prepared volume, as the sync needs it (the volume manager's PodVolume has this shape). */
export interface PreparedVolume {
  readonly kind: string;
  readonly hostPath: string;
}

/** The pod's volumes, as the sync needs them. */
export interface PodVolumeHandle {
  /** Prepares the volumes; resolves to them by name (emptyDirs get the pod's fsGroup). */
  preparePodVolumes(pod: NodePod): Promise<ReadonlyMap<string, PreparedVolume>>;
  cleanupPodVolumes(podUID: string): Promise<void>;
}

/** The prober, as the sync needs it. */
export interface PodProbesHandle extends PodProbeView {
  updatePod(pod: NodePod, state: ProbedPodState): void;
  stopLivenessAndStartup(podUID: string): void;
  removePod(podUID: string): void;
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
  readonly qosClass: (pod: NodePod) => string;
  /** The status's times and the active deadline. */
  readonly clock: Clock;
  /** Called with each problem of a sync pass (for events later). */
  readonly onSyncError?: (pod: NodePod, error: SyncError) => void;
  /** The prober; without it every running container is ready. */
  readonly probes?: PodProbesHandle;
  /** Restartable init containers are sidecars (the SidecarContainers gate). */
  readonly sidecarContainers?: boolean;
  /** The PodReadyToStartContainersCondition and PodHostIPs gates (default off: no condition, no status.hostIPs). */
  readonly statusGates?: { readonly podReadyToStartContainers: boolean; readonly podHostIPs: boolean };
  /** Events the sync decides (DeadlineExceeded), after they were logged. */
  readonly onEvent?: (event: PodEvent) => void;
  /**
   * The InPlacePodVerticalScaling gate: a running pod's new requests are admitted here, the pod
   * runs with what it was allocated (its cgroup and containers), and its status carries resize,
   * allocatedResources and resources.
   */
  readonly resize?: Pick<ResizeManager, 'allocatedPod' | 'decorate' | 'podForCgroup' | 'removePod'>;
  /** Why the runtime's pod network is not ready (undefined: it is); a pod off the host network is not synced meanwhile. */
  readonly networkError?: () => Promise<string | undefined>;
}

/** A pod sync refused while the runtime's pod network is not ready (upstream's NetworkNotReady). */
export const PODSYNC_NETWORK_NOT_READY = 'PODSYNC_NETWORK_NOT_READY';

export function createPodSyncer(options: PodSyncOptions): PodSyncer {
  const { runtime, status, logger } = options;
  const now = (): Date => new Date(options.clock.now());
  const errors = new Map<string, readonly SyncError[]>();

  /** Failures the agent decided, by pod UID (phase Failed with this reason until the pod goes). */
  const failures = new Map<string, PodFailure>();
  /** emptyDir volumes that already got the pod's fsGroup (`<uid>/<volume>`). */
  const owned = new Set<string>();
  /** With in-place resize: each pod as it runs (its spec with the allocated resources). */
  const allocatedPods = new Map<string, NodePod>();

  /** Logs an event and hands it on. */
  function record(event: PodEvent): void {
    logger.info('Event', { type: event.type, reason: event.reason, pod: podNamespacedName(event.pod), message: event.message });
    options.onEvent?.(event);
  }

  /** `read` (a runtime read of the pod), recording upstream's FailedSync when it fails. */
  async function determining<T>(pod: NodePod, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      record({ type: 'Warning', reason: 'FailedSync', message: `error determining status: ${messageOf(err)}`, pod });
      throw err;
    }
  }

  /** Refuses the sync of a pod off the host network while the runtime's network is not ready (event NetworkNotReady). */
  async function checkNetwork(pod: NodePod): Promise<void> {
    if (pod.spec?.hostNetwork === true || options.networkError === undefined) return;
    const problem = await options.networkError();
    if (problem === undefined) return;
    const message = `network is not ready: ${problem}`;
    record({ type: 'Warning', reason: 'NetworkNotReady', message, pod });
    throw new OrchError(PODSYNC_NETWORK_NOT_READY, 'unavailable', message, { subject: podNamespacedName(pod) });
  }

  async function publish(pod: NodePod): Promise<ReturnType<typeof computePodStatus>> {
    return (await publishHeld(pod)).computed;
  }

  /** Reads what the runtime holds for the pod (unless given), publishes the status; resolves to both. */
  async function publishHeld(pod: NodePod, known?: RuntimePodStatus): Promise<{ computed: ReturnType<typeof computePodStatus>; held: RuntimePodStatus }> {
    const { uid, name, namespace } = pod.metadata;
    const held = known ?? (await runtime.getPodStatus(uid, name, namespace));
    const probes = options.probes;
    probes?.updatePod(pod, { podIPs: pod.spec?.hostNetwork === true ? options.hostIPs() : held.ips, containers: held.containers });
    const failure = failures.get(uid);
    const previous = status.getPodStatus(uid) ?? pod.status;
    const plain = computePodStatus({
      pod, runtime: held, syncErrors: errors.get(uid) ?? [], hostIPs: options.hostIPs(),
      // After a restart the agent holds no status of its own yet: the one the API server holds
      // (the pod's, from its source) keeps the start time and the conditions' transition times.
      previous, qosClass: options.qosClass(pod), now: now(),
      ...(probes === undefined ? {} : { readiness: probes.readiness(uid), started: probes.startedContainers(uid) }),
      ...(options.sidecarContainers === true ? { sidecarContainers: true } : {}),
      ...options.statusGates,
      ...(failure === undefined ? {} : { failure }),
    });
    const computed = options.resize === undefined || isStaticPod(pod) ? plain : options.resize.decorate(pod, allocatedPods.get(uid) ?? pod, plain, previous);
    status.setPodStatus(uid, computed);
    return { computed, held };
  }

  async function applyFsGroup(pod: NodePod, volumes: ReadonlyMap<string, PreparedVolume>): Promise<void> {
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    if (fsGroup === undefined) return;
    const { uid } = pod.metadata;
    for (const [name, volume] of volumes) {
      if (volume.kind !== 'emptyDir') continue;
      if (owned.has(`${uid}/${name}`)) {
        // The volume manager resets the directory's mode when it prepares the volume again.
        if (await ensureVolumeRootOwnership(volume.hostPath, fsGroup)) logger.v(4, 'Volume root ownership restored', { pod: podNamespacedName(pod), volume: name });
        continue;
      }
      await setVolumeOwnership(volume.hostPath, fsGroup);
      owned.add(`${uid}/${name}`);
      logger.v(3, 'Volume ownership set', { pod: podNamespacedName(pod), volume: name, fsGroup });
    }
  }

  /** Fails the pod when it is past its activeDeadlineSeconds; otherwise the time left (ms). */
  async function checkDeadline(pod: NodePod, startTime: string | undefined): Promise<number | undefined> {
    const left = activeDeadlineLeftMs(pod, startTime, now());
    if (left === undefined || left > 0) return left;
    failures.set(pod.metadata.uid, { reason: DEADLINE_EXCEEDED_REASON, message: DEADLINE_EXCEEDED_MESSAGE });
    const event: PodEvent = { type: 'Normal', reason: DEADLINE_EXCEEDED_REASON, message: DEADLINE_EXCEEDED_MESSAGE, pod };
    logger.info('Event', { type: event.type, reason: event.reason, pod: podNamespacedName(pod), message: event.message });
    options.onEvent?.(event);
    await publish(pod);
    return 0;
  }

  return {

    async syncPod(desired, _kind, signal): Promise<SyncOutcome> {
      const { uid } = desired.metadata;
      // With in-place resize the pod runs with what it was allocated (a resize the node cannot
      // take yet leaves it as it was); its status is the spec's, with the resize fields.
      // Static pods are not resized in place (upstream isInPlacePodVerticalScalingAllowed).
      const resize = isStaticPod(desired) ? undefined : options.resize;
      const pod = resize?.allocatedPod(desired, status.getPodStatus(uid) ?? desired.status) ?? desired;
      if (resize !== undefined) allocatedPods.set(uid, pod);
      const { computed: before, held } = await determining(pod, () => publishHeld(desired));
      if (before.phase === 'Succeeded' || before.phase === 'Failed') return { terminal: true };
      const deadline = await checkDeadline(desired, before.startTime);
      if (deadline === 0) return { terminal: true };
      await checkNetwork(pod);
      let problems: SyncError[] = [];
      // A resize lowers the pod cgroup's limits only after the containers' (cgroup v1 refuses a
      // pod CFS quota below a container's): until then it keeps what the containers have.
      const running = new Map(held.containers.filter((c) => c.state === 'running' && !c.init).map((c) => [c.name, c.id]));
      const cgroupPod = resize?.podForCgroup(pod, running) ?? pod;
      // The pod cgroup and the volumes do not depend on each other: made side by side.
      const [cgroup, volumes] = await Promise.allSettled([
        options.cgroups.ensure(cgroupPod),
        options.volumes.preparePodVolumes(pod).then((prepared) => applyFsGroup(pod, prepared)),
      ]);
      if (cgroup.status === 'rejected' || volumes.status === 'rejected') {
        if (volumes.status === 'rejected') {
          const event: PodEvent = { type: 'Warning', reason: 'FailedMount', message: `MountVolume.SetUp failed: ${messageOf(volumes.reason)}`, pod };
          logger.info('Event', { type: event.type, reason: event.reason, pod: podNamespacedName(pod), message: event.message });
          options.onEvent?.(event);
        }
        const err: unknown = cgroup.status === 'rejected' ? cgroup.reason : volumes.status === 'rejected' ? volumes.reason : undefined;
        // Mount problems keep every container waiting; the worker retries with its back-off.
        problems = (pod.spec?.containers ?? []).map((c) => ({ container: c.name, reason: 'CreateContainerConfigError', message: messageOf(err) }));
        errors.set(uid, problems);
        await publish(desired);
        for (const p of problems.slice(0, 1)) options.onSyncError?.(pod, p);
        throw err;
      }
      // The cgroup and volumes do not change what the runtime holds: the state read for the
      // status serves the sync too (one runtime read fewer per sync).
      const result = await runtime.syncPod(pod, held, signal);
      // The containers were resized: the pod cgroup follows them (a memory limit the runtime
      // manager held back, the container using more, keeps the pod's too).
      if (cgroupPod !== pod) await options.cgroups.ensure(resize?.podForCgroup(pod, running) ?? pod);
      problems = [...result.errors];
      errors.set(uid, problems);
      for (const p of problems) options.onSyncError?.(pod, p);
      const after = (await publishHeld(desired, result.status)).computed;
      if (problems.length > 0) logger.v(2, 'Pod sync left problems', { pod: podNamespacedName(pod), problems: problems.map((p) => `${p.container ?? 'sandbox'}: ${p.reason}`) });
      if (after.phase === 'Succeeded' || after.phase === 'Failed') return { terminal: true };
      const waits = [result.requeueAfterMs, deadline].filter((ms): ms is number => ms !== undefined);
      return waits.length === 0 ? {} : { requeueAfterMs: Math.min(...waits) };
    },

    async syncTerminatingPod(pod, gracePeriodSeconds, failure) {
      const { uid, name, namespace } = pod.metadata;
      options.probes?.stopLivenessAndStartup(uid);
      if (failure !== undefined && !failures.has(uid) && status.getPodStatus(uid)?.phase !== 'Succeeded') {
        // As upstream's PodStatusFunc: the status says Failed before the containers stop (a pod that succeeded stays so).
        failures.set(uid, failure);
        await publish(pod);
      }
      // What the runtime holds of this pod (upstream kills what its pod cache holds): the kept
      // status when the PLEG vouches for it, else the pod's objects read by its UID label. Not
      // a list of every pod on the node: when a node's pods go at once, each would list all.
      const held = await determining(pod, () => runtime.getPodStatus(uid, name, namespace));
      if (held.sandboxes.length > 0 || held.containers.length > 0) {
        try {
          await runtime.killPod(runningPodOf(held), { pod, ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }) });
        } catch (err) {
          record({ type: 'Warning', reason: 'FailedKillPod', message: `error killing pod: ${messageOf(err)}`, pod });
          throw err;
        }
      }
      await publish(pod);
      logger.v(1, 'Pod terminated', { pod: podNamespacedName(pod) });
    },

    async syncTerminatedPod(pod) {
      const { uid } = pod.metadata;
      if (!options.isDesired(uid)) {
        await runtime.removePod(uid);
        await options.volumes.cleanupPodVolumes(uid);
        status.removePod(uid);
        options.resize?.removePod(uid);
      } else if (failures.has(uid)) {
        // A pod the agent failed (evicted, shut down) releases its volumes once terminated even
        // while its source still wants it, as upstream tears down a terminated pod's volumes: an
        // eviction for disk counts on its emptyDirs going.
        await options.volumes.cleanupPodVolumes(uid);
      }
      await options.cgroups.remove(uid);
      options.probes?.removePod(uid);
      errors.delete(uid);
      failures.delete(uid);
      allocatedPods.delete(uid);
      for (const key of owned) if (key.startsWith(`${uid}/`)) owned.delete(key);
    },
  };
}
