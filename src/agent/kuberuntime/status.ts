/**
 * Reading what the runtime holds (upstream: GetPodStatus, GetPods): sandboxes and containers
 * found by the pod UID label, their statuses converted to the agent's view (times in ms,
 * restart count, spec hash and container type from the labels and annotations, the
 * termination message read from the file the container wrote, or from the tail of its log),
 * newest first. Objects without POD_UID_LABEL are never looked at.
 */
import { open } from 'node:fs/promises';
import { isNotFound, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { int64, type ContainerState, type ContainerStatus, type PodSandbox, type PodSandboxStatus } from '../runtime/cri/index.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION,
  CONTAINER_IMAGE_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TYPE_LABEL,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_UID_LABEL,
  TERMINATION_MESSAGE_PATH_ANNOTATION,
  TERMINATION_MESSAGE_POLICY_ANNOTATION,
} from './labels.js';
import type { ManagerRuntime } from './options.js';
import type { RunningPod, RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from './types.js';

/** upstream: MaxContainerTerminationMessageLength, and the log fallback's limits. */
export const MAX_TERMINATION_MESSAGE_BYTES = 4096;
export const MAX_TERMINATION_MESSAGE_LOG_BYTES = 2048;
export const MAX_TERMINATION_MESSAGE_LOG_LINES = 80;

export function nanosToMs(value: string): number {
  return Number(int64(value) / 1_000_000n);
}

export function containerState(state: ContainerState): RuntimeContainerState {
  switch (state) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

/** Sorted by createdAt, newest first (each time parsed once: housekeeping sorts every object of the node). */
function newestFirst<T extends { readonly createdAt: string }>(items: readonly T[]): T[] {
  const keyed = items.map((item) => ({ item, at: int64(item.createdAt) }));
  keyed.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  return keyed.map((k) => k.item);
}

/** The last `max` bytes of a file (upstream: tail.ReadAtMost). */
async function readTail(file: string, max: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, max);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The message part of the last lines of a CRI log file (`<time> <stream> <P|F> <message>`). */
export function messageFromCriLog(text: string, maxLines: number): string {
  const lines = text.split('\n').filter((l) => l !== '');
  let out = '';
  for (const line of lines.slice(-maxLines)) {
    const parts = /^\S+ (?:stdout|stderr) ([PF]) (.*)$/.exec(line);
    if (parts === null) continue; // a line cut by the byte limit or not in CRI format
    out += parts[2] ?? '';
    if (parts[1] === 'F') out += '\n';
  }
  return out;
}

function isMissing(err: unknown): boolean {
  return typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT';
}

/** The termination message of an exited container (upstream: getTerminationMessage and the log fallback). */
export async function terminationMessage(status: ContainerStatus): Promise<string> {
  const path = status.annotations[TERMINATION_MESSAGE_PATH_ANNOTATION] ?? '';
  const fallback = status.annotations[TERMINATION_MESSAGE_POLICY_ANNOTATION] === 'FallbackToLogsOnError' && status.exitCode !== 0 && status.reason !== 'ContainerCannotRun';
  let message = '';
  const mount = path === '' ? undefined : status.mounts.find((m) => m.containerPath === path);
  if (mount !== undefined) {
    try {
      message = await readTail(mount.hostPath, MAX_TERMINATION_MESSAGE_BYTES);
    } catch (err) {
      if (!isMissing(err)) return `Error on reading termination log ${mount.hostPath}: ${messageOf(err)}`;
    }
  }
  if (message !== '' || !fallback || status.logPath === '') return message;
  try {
    return messageFromCriLog(await readTail(status.logPath, MAX_TERMINATION_MESSAGE_LOG_BYTES), MAX_TERMINATION_MESSAGE_LOG_LINES);
  } catch (err) {
    return isMissing(err) ? '' : `Error on reading termination message from logs: ${messageOf(err)}`;
  }
}

/** One container status in the agent's view. */
export async function toRuntimeContainerStatus(status: ContainerStatus): Promise<RuntimeContainerStatus> {
  const state = containerState(status.state);
  let message = status.message;
  if (state === 'exited') {
    const extra = await terminationMessage(status);
    if (extra !== '') message = message === '' ? extra : `${message}: ${extra}`;
  }
  const withoutResources = status.annotations[CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION];
  return {
    id: status.id,
    name: status.labels[CONTAINER_NAME_LABEL] ?? status.metadata?.name ?? '',
    state,
    createdAt: nanosToMs(status.createdAt),
    startedAt: nanosToMs(status.startedAt),
    finishedAt: nanosToMs(status.finishedAt),
    exitCode: status.exitCode,
    reason: status.reason,
    message,
    image: status.annotations[CONTAINER_IMAGE_ANNOTATION] ?? status.image?.image ?? '',
    imageRef: status.imageRef,
    restartCount: Number.parseInt(status.annotations[CONTAINER_RESTART_COUNT_ANNOTATION] ?? '', 10) || (status.metadata?.attempt ?? 0),
    hash: status.annotations[CONTAINER_HASH_ANNOTATION] ?? '',
    init: status.labels[CONTAINER_TYPE_LABEL] === 'init',
    ...(withoutResources === undefined ? {} : { hashWithoutResources: withoutResources }),
    ...(status.labels[CONTAINER_TYPE_LABEL] === 'ephemeral' ? { ephemeral: true } : {}),
  };
}

export function toRuntimeSandboxStatus(sandbox: PodSandbox, status: PodSandboxStatus | null): RuntimeSandboxStatus {
  const hostNetwork = status?.linux?.namespaces?.options?.network === 'NODE';
  const network = status?.network;
  const ips = hostNetwork || network === null || network === undefined || network.ip === '' ? [] : [network.ip, ...network.additionalIps.map((a) => a.ip)];
  return {
    id: sandbox.id,
    state: (status?.state ?? sandbox.state) === 'SANDBOX_READY' ? 'ready' : 'notready',
    createdAt: nanosToMs(sandbox.createdAt),
    attempt: status?.metadata?.attempt ?? sandbox.metadata?.attempt ?? 0,
    ips,
    hostNetwork,
  };
}

/** What the runtime holds for one pod (see PodRuntimeManager.getPodStatus). */
export async function readPodStatus(runtime: ManagerRuntime, logger: Logger, now: () => number, uid: string, name: string, namespace: string): Promise<RuntimePodStatus> {
  const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(selector), runtime.listContainers(selector)]);
  return readStatuses(runtime, logger, now, { uid, name, namespace }, sandboxes.map((item) => ({ item })), containers.map((c) => c.id));
}

/** A sandbox of a pod whose statuses are read: its list item, or the status already read (a new sandbox's). */
export type KnownSandbox = { readonly item: PodSandbox } | { readonly status: PodSandboxStatus };

/**
 * What the runtime holds for one pod whose sandboxes and containers are known (those a list by
 * the pod's UID label gives, or all that a sync made for a pod that had none): their statuses
 * read, newest first, as readPodStatus gives them. Objects removed meanwhile are left out.
 */
export async function readStatuses(
  runtime: ManagerRuntime,
  logger: Logger,
  now: () => number,
  pod: { readonly uid: string; readonly name: string; readonly namespace: string },
  sandboxes: readonly KnownSandbox[],
  containerIds: readonly string[],
): Promise<RuntimePodStatus> {
  const sandboxStatuses = await Promise.all(
    sandboxes.map(async (known): Promise<{ readonly item: PodSandbox; readonly status: PodSandboxStatus | null } | undefined> => {
      if ('status' in known) return { item: known.status, status: known.status };
      try {
        const { status } = await runtime.podSandboxStatus({ podSandboxId: known.item.id });
        // The status holds what the list item does (and a new sandbox's item is only its id).
        return { item: status ?? known.item, status };
      } catch (err) {
        if (!isNotFound(err)) throw err;
        logger.v(4, 'sandbox removed while reading its status', { sandbox: known.item.id, pod: pod.name });
        return undefined;
      }
    }),
  );
  const containerStatuses = await Promise.all(
    containerIds.map(async (id): Promise<ContainerStatus | undefined> => {
      try {
        return (await runtime.containerStatus({ containerId: id })).status ?? undefined;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        logger.v(4, 'container removed while reading its status', { container: id, pod: pod.name });
        return undefined;
      }
    }),
  );
  const sandboxList = newestFirst(sandboxStatuses.filter((s) => s !== undefined).map((s) => ({ createdAt: s.item.createdAt, s })))
    .map(({ s }) => toRuntimeSandboxStatus(s.item, s.status));
  const newest = sandboxList[0];
  return {
    ...pod,
    ips: newest?.state === 'ready' ? newest.ips : [],
    sandboxes: sandboxList,
    containers: await Promise.all(newestFirst(containerStatuses.filter((c) => c !== undefined)).map((c) => toRuntimeContainerStatus(c))),
    timestamp: now(),
  };
}

/** Every pod the agent made, grouped by the UID label. */
export async function listRunningPods(runtime: ManagerRuntime): Promise<RunningPod[]> {
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(), runtime.listContainers()]);
  const pods = new Map<string, { uid: string; name: string; namespace: string; sandboxIds: string[]; containers: RunningPod['containers'][number][] }>();
  const podOf = (labels: Readonly<Record<string, string>>) => {
    const uid = labels[POD_UID_LABEL];
    if (uid === undefined) return undefined;
    let pod = pods.get(uid);
    if (pod === undefined) {
      pod = { uid, name: labels[POD_NAME_LABEL] ?? '', namespace: labels[POD_NAMESPACE_LABEL] ?? '', sandboxIds: [], containers: [] };
      pods.set(uid, pod);
    }
    return pod;
  };
  for (const s of newestFirst(sandboxes)) podOf(s.labels)?.sandboxIds.push(s.id);
  for (const c of newestFirst(containers)) {
    podOf(c.labels)?.containers.push({
      id: c.id,
      name: c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name ?? '',
      state: containerState(c.state),
      image: c.annotations[CONTAINER_IMAGE_ANNOTATION] ?? c.image?.image ?? '',
    });
  }
  return [...pods.values()];
}
