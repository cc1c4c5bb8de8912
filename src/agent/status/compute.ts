/**
 * The pod status as the upstream agent computes it from the spec and what the runtime holds:
 * container statuses (state, last state, restart count, ready, started, image ID, container
 * ID), the phase, the five conditions, pod and host IPs, the QoS class, and a failure decided
 * by the agent (DeadlineExceeded). Readiness and startup come from the prober; with the
 * SidecarContainers gate, restartable init containers count as upstream counts them (running
 * and started: initialized; their readiness joins ContainersReady; exited: not in the phase).
 * Ephemeral containers have their statuses (never ready, as upstream, and never counted in the
 * phase or the conditions). Pure: no I/O, time is passed in.
 */
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import type { RuntimeContainerStatus, RuntimePodStatus, SyncError } from '../kuberuntime/index.js';
import { qosClass } from '../../api/pod/index.js';
import { formatTime } from '../../api/time.js';

export interface StatusInput {
  readonly pod: Pod;
  readonly runtime: RuntimePodStatus;
  /** Problems of the last sync pass, per container. */
  readonly syncErrors: readonly SyncError[];
  /** The node's IPs (status.hostIP(s), and the pod IPs of host-network pods). */
  readonly hostIPs: readonly string[];
  /** The previous status, to keep transition times and the start time. */
  readonly previous: PodStatus | undefined;
  /** Readiness by container name from probes; a container without an entry is ready once running. */
  readonly readiness?: ReadonlyMap<string, boolean>;
  /** Startup by container name from startup probes; a container without an entry is started once running. */
  readonly started?: ReadonlyMap<string, boolean>;
  /** Restartable init containers are sidecars (the SidecarContainers gate). */
  readonly sidecarContainers?: boolean;
  /** The PodReadyToStartContainers condition is reported (its gate; default off: absent). */
  readonly podReadyToStartContainers?: boolean;
  /** status.hostIPs is reported beside status.hostIP (the PodHostIPs gate; default off: absent). */
  readonly podHostIPs?: boolean;
  /**
   * The agent failed the pod (e.g. DeadlineExceeded): phase Failed with this reason and message;
   * with `disruptionReason`, also the DisruptionTarget condition (node shutdown).
   */
  readonly failure?: { readonly reason: string; readonly message: string; readonly disruptionReason?: string };
  /** The QoS class to report. */
  readonly qosClass?: string;
  readonly now: Date;
}

const RUNTIME_PREFIX = 'containerd://';

function iso(ms: number): string | undefined {
  return ms > 0 ? formatTime(ms) : undefined;
}

/** `{ [key]: time }` when the time is set, else `{}`. */
function timeField<K extends string>(key: K, ms: number): Partial<Record<K, string>> {
  const t = iso(ms);
  return t === undefined ? {} : ({ [key]: t } as Record<K, string>);
}

function terminated(c: RuntimeContainerStatus): ContainerState {
  const reason = c.reason !== '' ? c.reason : c.exitCode === 0 ? 'Completed' : 'Error';
  return {
    terminated: {
      exitCode: c.exitCode,
      reason,
      ...(c.message === '' ? {} : { message: c.message }),
      ...timeField('startedAt', c.startedAt),
      ...timeField('finishedAt', c.finishedAt),
      containerID: `${RUNTIME_PREFIX}${c.id}`,
    },
  };
}

interface ProbeView {
  readonly ready: boolean | undefined;
  readonly started: boolean | undefined;
  /** A regular init container: ready once it exited 0, as upstream. */
  readonly runToCompletion: boolean;
}

function containerStatus(
  spec: Container,
  instances: readonly RuntimeContainerStatus[],
  error: SyncError | undefined,
  probe: ProbeView,
  waitingDefault: 'ContainerCreating' | 'PodInitializing',
): ContainerStatus {
  const [newest, older] = instances;
  const base = {
    name: spec.name,
    image: spec.image ?? '',
    imageID: newest?.imageRef ?? '',
    restartCount: newest?.restartCount ?? 0,
    ...(newest === undefined ? {} : { containerID: `${RUNTIME_PREFIX}${newest.id}` }),
  };
  let state: ContainerState;
  let lastState: ContainerState = {};
  if (newest?.state === 'running' && error === undefined) {
    state = { running: timeField('startedAt', newest.startedAt) };
    if (older !== undefined && older.state === 'exited') lastState = terminated(older);
  } else if (newest?.state === 'exited') {
    if (error !== undefined) {
      state = { waiting: { reason: error.reason, message: error.message } };
      lastState = terminated(newest);
    } else {
      state = terminated(newest);
      if (older !== undefined && older.state === 'exited') lastState = terminated(older);
    }
  } else if (error !== undefined) {
    state = { waiting: { reason: error.reason, message: error.message } };
    if (older !== undefined && older.state === 'exited') lastState = terminated(older);
  } else {
    state = { waiting: { reason: waitingDefault } };
    if (older !== undefined && older.state === 'exited') lastState = terminated(older);
  }
  const running = state.running !== undefined;
  const started = running && probe.started !== false;
  const ready = probe.runToCompletion ? state.terminated?.exitCode === 0 : started && probe.ready !== false;
  return { ...base, state, lastState, ready, started };
}

/** Instances of one container, newest first. */
function instancesOf(runtime: RuntimePodStatus, name: string, init: boolean): RuntimeContainerStatus[] {
  return runtime.containers.filter((c) => c.name === name && c.init === init && c.ephemeral !== true);
}

/** The statuses of the ephemeral containers: their state only (upstream reports them never ready). */
function ephemeralStatuses(pod: Pod, runtime: RuntimePodStatus, errors: ReadonlyMap<string, SyncError>): ContainerStatus[] {
  return (pod.spec?.ephemeralContainers ?? []).map((c) => {
    const instances = runtime.containers.filter((i) => i.name === c.name && i.ephemeral === true);
    const { started: _started, ...status } = containerStatus(c, instances, errors.get(c.name), { ready: false, started: undefined, runToCompletion: false }, 'ContainerCreating');
    return { ...status, ready: false };
  });
}

function exitedOk(s: ContainerStatus): boolean {
  return s.state?.terminated?.exitCode === 0;
}

/** Whether a regular container ever ran (upstream HasAnyRegularContainerStarted). */
function anyRegularStarted(regular: readonly ContainerStatus[]): boolean {
  return regular.some((s) => s.state?.running !== undefined || s.state?.terminated !== undefined || s.lastState?.terminated !== undefined);
}

/** The phase, as upstream's getPhase decides it. `sidecars`: names of the restartable init containers (with the gate). */
export function podPhase(
  pod: Pod,
  init: readonly ContainerStatus[],
  regular: readonly ContainerStatus[],
  sidecars: ReadonlySet<string> = new Set(),
): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  let failedInit = false;
  let pendingInit = false;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of init) {
    if (sidecars.has(s.name)) {
      if (s.state?.running !== undefined) {
        if (s.started !== true) pendingInit = true;
        running++;
      } else if (s.state?.waiting !== undefined && s.lastState?.terminated === undefined) {
        pendingInit = true;
        waiting++;
      }
      continue; // an exited sidecar does not count
    }
    if (exitedOk(s)) continue;
    const t = s.state?.terminated ?? s.lastState?.terminated;
    if (t !== undefined && t.exitCode !== 0) failedInit = true;
    else pendingInit = true;
  }
  if (failedInit && policy === 'Never') return 'Failed';
  if (failedInit || (pendingInit && !anyRegularStarted(regular))) return 'Pending';
  for (const s of regular) {
    if (s.state?.running !== undefined) running++;
    else if (s.state?.terminated !== undefined) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState?.terminated !== undefined) {
      stopped++;
    } else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    return policy === 'Never' ? 'Failed' : 'Running';
  }
  return 'Pending';
}

function condition(
  type: string,
  ok: boolean,
  previous: PodStatus | undefined,
  now: Date,
  reason?: string,
  message?: string,
): PodCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.conditions?.find((c) => c.type === type);
  const lastTransitionTime = before?.status === status && before.lastTransitionTime !== undefined ? before.lastTransitionTime : formatTime(now.getTime());
  return {
    type, status, lastTransitionTime,
    ...(ok || reason === undefined ? {} : { reason }),
    ...(ok || message === undefined ? {} : { message }),
  };
}

/**
 * The status of a pod refused at admission (upstream's rejectPod): Failed with the refusal's
 * reason, its message after "Pod was rejected: ", the pod's QoS class, started at `now`; it
 * never runs, so there is nothing else to report.
 */
export function rejectedPodStatus(pod: Pod, reason: string, message: string, now: number): PodStatus {
  let qos: string | undefined;
  try {
    qos = qosClass(pod);
  } catch {
    // A malformed quantity is itself the refusal's cause (validation names it): no class to report.
  }
  return { phase: 'Failed', reason, message: `Pod was rejected: ${message}`, ...(qos === undefined ? {} : { qosClass: qos }), startTime: formatTime(now) };
}

/** The whole status of a pod that runs on this node. */
export function computePodStatus(input: StatusInput): PodStatus {
  const { pod, runtime, previous, now } = input;
  const spec = pod.spec;
  const errors = new Map(input.syncErrors.filter((e) => e.container !== undefined).map((e) => [e.container ?? '', e]));
  const initSpecs = spec?.initContainers ?? [];
  const sidecars = new Set(input.sidecarContainers === true ? initSpecs.filter((c) => c.restartPolicy === 'Always').map((c) => c.name) : []);
  const view = (name: string, runToCompletion: boolean): ProbeView => ({ ready: input.readiness?.get(name), started: input.started?.get(name), runToCompletion });
  const initStatuses = initSpecs.map((c) =>
    containerStatus(c, instancesOf(runtime, c.name, true), errors.get(c.name), view(c.name, !sidecars.has(c.name)), 'PodInitializing'));
  const initDone = initStatuses.every((s) => (sidecars.has(s.name) ? s.started === true : exitedOk(s)));
  const regular = (spec?.containers ?? []).map((c) =>
    containerStatus(c, instancesOf(runtime, c.name, false), errors.get(c.name), view(c.name, false), initDone ? 'ContainerCreating' : 'PodInitializing'));
  const phase = input.failure === undefined ? podPhase(pod, initStatuses, regular, sidecars) : 'Failed';
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const hostNetwork = spec?.hostNetwork === true;
  const ips = hostNetwork ? input.hostIPs : runtime.ips;
  const sandboxReady = runtime.sandboxes[0]?.state === 'ready';
  const initialized = anyRegularStarted(regular);
  const incompleteInit = initialized ? [] : initStatuses.filter((s) => (sidecars.has(s.name) ? s.started !== true : !exitedOk(s))).map((s) => s.name);
  const unready = [...initStatuses.filter((s) => sidecars.has(s.name)), ...regular].filter((s) => !s.ready).map((s) => s.name);
  const readyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = terminal ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conditions: PodCondition[] = [
    ...(input.podReadyToStartContainers === true ? [condition('PodReadyToStartContainers', sandboxReady, previous, now)] : []),
    condition('Initialized', incompleteInit.length === 0, previous, now, 'ContainersNotInitialized', `containers with incomplete status: [${incompleteInit.join(' ')}]`),
    condition('Ready', !terminal && unready.length === 0, previous, now, readyReason, readyMessage),
    condition('ContainersReady', !terminal && unready.length === 0, previous, now, readyReason, readyMessage),
    condition('PodScheduled', true, previous, now),
  ];
  const disruption = input.failure?.disruptionReason;
  if (disruption !== undefined && input.failure !== undefined) {
    const before = previous?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
    conditions.push({
      type: 'DisruptionTarget', status: 'True', reason: disruption, message: input.failure.message,
      lastTransitionTime: before?.lastTransitionTime ?? formatTime(now.getTime()),
    });
  }
  const status: PodStatus = {
    phase,
    ...(input.failure === undefined ? {} : { reason: input.failure.reason, message: input.failure.message }),
    conditions,
    ...(input.hostIPs[0] === undefined ? {} : { hostIP: input.hostIPs[0] }),
    ...(input.hostIPs[0] === undefined || input.podHostIPs !== true ? {} : { hostIPs: input.hostIPs.map((ip) => ({ ip })) }),
    ...(ips[0] === undefined ? {} : { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) }),
    startTime: previous?.startTime ?? formatTime(now.getTime()),
    ...(initStatuses.length === 0 ? {} : { initContainerStatuses: initStatuses }),
    containerStatuses: regular,
    ...((spec?.ephemeralContainers ?? []).length === 0 ? {} : { ephemeralContainerStatuses: ephemeralStatuses(pod, runtime, errors) }),
    ...(input.qosClass === undefined ? {} : { qosClass: input.qosClass }),
  };
  return status;
}
