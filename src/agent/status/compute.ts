/**
 * The pod status as the upstream agent computes it from the spec and what the runtime holds:
 * container statuses (state, last state, restart count, ready, started, image ID, container
 * ID), the phase, the five conditions, pod and host IPs. Pure: no I/O, time is passed in.
 */
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import type { RuntimeContainerStatus, RuntimePodStatus, SyncError } from '../kuberuntime/types.js';

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
  /** The QoS class to report. */
  readonly qosClass?: string;
  readonly now: Date;
}

const RUNTIME_PREFIX = 'containerd://';

function iso(ms: number): string | undefined {
  return ms > 0 ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
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

function containerStatus(
  spec: Container,
  instances: readonly RuntimeContainerStatus[],
  error: SyncError | undefined,
  ready: boolean | undefined,
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
  return { ...base, state, lastState, ready: running && ready !== false, started: running };
}

/** Instances of one container, newest first. */
function instancesOf(runtime: RuntimePodStatus, name: string, init: boolean): RuntimeContainerStatus[] {
  return runtime.containers.filter((c) => c.name === name && c.init === init);
}

function exitedOk(s: ContainerStatus): boolean {
  return s.state?.terminated?.exitCode === 0;
}

/** The phase, as upstream's getPhase decides it. */
export function podPhase(pod: Pod, init: readonly ContainerStatus[], regular: readonly ContainerStatus[]): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  let failedInit = false;
  let pendingInit = false;
  for (const s of init) {
    if (exitedOk(s)) continue;
    const t = s.state?.terminated ?? s.lastState?.terminated;
    if (t !== undefined && t.exitCode !== 0) failedInit = true;
    else pendingInit = true;
  }
  if (failedInit && policy === 'Never') return 'Failed';
  if (failedInit || pendingInit) return 'Pending';
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
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
  const lastTransitionTime = before?.status === status && before.lastTransitionTime !== undefined ? before.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    type, status, lastTransitionTime,
    ...(ok || reason === undefined ? {} : { reason }),
    ...(ok || message === undefined ? {} : { message }),
  };
}

/** The whole status of a pod that runs on this node. */
export function computePodStatus(input: StatusInput): PodStatus {
  const { pod, runtime, previous, now } = input;
  const spec = pod.spec;
  const errors = new Map(input.syncErrors.filter((e) => e.container !== undefined).map((e) => [e.container ?? '', e]));
  const initSpecs = spec?.initContainers ?? [];
  const initStatuses = initSpecs.map((c) => containerStatus(c, instancesOf(runtime, c.name, true), errors.get(c.name), input.readiness?.get(c.name), 'PodInitializing'));
  const initDone = initStatuses.every(exitedOk);
  const regular = (spec?.containers ?? []).map((c) =>
    containerStatus(c, instancesOf(runtime, c.name, false), errors.get(c.name), input.readiness?.get(c.name), initDone ? 'ContainerCreating' : 'PodInitializing'));
  const phase = podPhase(pod, initStatuses, regular);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const hostNetwork = spec?.hostNetwork === true;
  const ips = hostNetwork ? input.hostIPs : runtime.ips;
  const sandboxReady = runtime.sandboxes[0]?.state === 'ready';
  const incompleteInit = initStatuses.filter((s) => !exitedOk(s)).map((s) => s.name);
  const unready = regular.filter((s) => !s.ready).map((s) => s.name);
  const readyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = terminal ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conditions: PodCondition[] = [
    condition('PodReadyToStartContainers', sandboxReady, previous, now),
    condition('Initialized', incompleteInit.length === 0, previous, now, 'ContainersNotInitialized', `containers with incomplete status: [${incompleteInit.join(' ')}]`),
    condition('Ready', !terminal && unready.length === 0, previous, now, readyReason, readyMessage),
    condition('ContainersReady', !terminal && unready.length === 0, previous, now, readyReason, readyMessage),
    condition('PodScheduled', true, previous, now),
  ];
  const status: PodStatus = {
    phase,
    conditions,
    ...(input.hostIPs[0] === undefined ? {} : { hostIP: input.hostIPs[0], hostIPs: input.hostIPs.map((ip) => ({ ip })) }),
    ...(ips[0] === undefined ? {} : { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) }),
    startTime: previous?.startTime ?? now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(initStatuses.length === 0 ? {} : { initContainerStatuses: initStatuses }),
    containerStatuses: regular,
    ...(input.qosClass === undefined ? {} : { qosClass: input.qosClass }),
  };
  return status;
}
