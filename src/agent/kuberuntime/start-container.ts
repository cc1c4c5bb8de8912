/**
 * Starting one container instance (upstream: the start closure of SyncPod with doBackOff and
 * startContainer), in upstream's order, each step's failure becoming the container's waiting
 * reason:
 *
 *   | step                                                   | failure                        |
 *   |--------------------------------------------------------|--------------------------------|
 *   | restart back-off since the newest exited instance       | CrashLoopBackOff               |
 *   | image by pull policy                                   | ErrImagePull, ImagePullBackOff, |
 *   |                                                        | ErrImageNeverPull, InvalidImageName |
 *   | restart count, runAsNonRoot, mounts, env, config       | CreateContainerConfigError     |
 *   | CreateContainer                                        | CreateContainerError           |
 *   | StartContainer                                         | RunContainerError              |
 *   | the postStart hook (the container is then killed with  | PostStartHookError             |
 *   | FailedPostStartHook)                                   |                                |
 *
 * A container that fails to start is left as the runtime put it (exited, StartError), as
 * upstream does: its status carries the runtime's message, and the restart back-off counts it.
 */
import type { Container, EphemeralContainer } from 'kubernetes-types/core/v1.js';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { durationFromMs, formatDuration } from '../../api/duration.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { AuthConfig, ContainerConfig, PodSandboxConfig } from '../runtime/cri/index.js';
import type { BackOff } from './backoff.js';
import { findContainer } from './compute-actions.js';
import { formatPod, makeContainerConfig, verifyRunAsNonRoot, type ContainerCpuset } from './container-config.js';
import type { NodeCapacity } from './env.js';
import { invalidEnvFromKeys, readEnvObjects, type EnvObjectSource } from './env-sources.js';
import { isRuntimeUnreachable } from './errors.js';
import { hashContainer } from './hash.js';
import type { ImagePuller } from './images.js';
import { killContainer, type KillDeps } from './kill.js';
import { emitEvent, runHandler } from './lifecycle.js';
import type { ContainerDeviceProvider, ContainerVolumes, ManagerRuntime } from './options.js';
import type { ResourceSettings } from './resources.js';
import type { SeccompSettings } from './seccomp.js';
import type { RuntimePodStatus, SyncError } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

export interface StartDeps extends KillDeps {
  readonly runtime: ManagerRuntime;
  readonly logger: Logger;
  readonly puller: ImagePuller;
  readonly backOff: BackOff;
  readonly volumes: ContainerVolumes;
  readonly nodeName: string;
  /** The PodHostIPs gate (the downward API's status.hostIPs). */
  readonly podHostIPs?: boolean | undefined;
  readonly capacity: () => NodeCapacity;
  readonly resources: Omit<ResourceSettings, 'memoryCapacityBytes'>;
  readonly seccomp: SeccompSettings;
  /** Told the OOM score adjustment of each container created (warns once when it cannot apply). */
  readonly checkOomScore: (adjust: number) => void;
  /** Registry credentials for a pod's pull from a repository, tried in turn; absent or none: anonymous pulls. */
  readonly pullCredentials?: ((pod: NodePod, repository: string) => Promise<readonly AuthConfig[]>) | undefined;
  /** The container's cpuset from the CPU and memory managers (upstream PreCreateContainer); absent: none. */
  readonly cpuset?: ((pod: NodePod, container: Container) => ContainerCpuset) | undefined;
  /** Where env reads ConfigMaps and Secrets; absent (standalone): a container that names one fails. */
  readonly envObjects?: EnvObjectSource | undefined;
  /** The device manager (upstream GetResources, PreStartContainer included); absent: no devices. */
  readonly devices?: ContainerDeviceProvider | undefined;
}

export interface StartContext {
  readonly pod: NodePod;
  readonly status: RuntimePodStatus;
  readonly sandboxId: string;
  readonly sandboxConfig: PodSandboxConfig;
  readonly podIPs: readonly string[];
  readonly hostIPs: readonly string[];
  /** Called once the runtime has started the container, before its postStart hook (not when creating or starting it failed). */
  readonly onRuntimeDone?: () => void;
  /** Called when the container's image starts being pulled (a pull may take minutes). */
  readonly onPull?: () => void;
}

/** Which list of the spec a container comes from. */
export type ContainerKind = 'init' | 'regular' | 'ephemeral';

export interface StartResult {
  /** The new container's ID when it started. */
  readonly id?: string;
  readonly error?: SyncError;
  /** When to try again (a back-off's time left). */
  readonly retryAfterMs?: number;
}

/** The restart back-off key: pod UID, container name and spec hash (`<uid>_` first, to forget a pod's keys). */
export function backOffKey(pod: NodePod, container: Container): string {
  return `${pod.metadata.uid}_${container.name}_${hashContainer(container)}`;
}

/** upstream calcRestartCountByLogDir: one more than the highest `<n>.log` in the container's log directory, 0 when there is none. */
export function restartCountFromLogs(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir); // synchronous: on the start path, as terminationMessageFile
  } catch {
    return 0; // no log directory yet: the first instance
  }
  let next = 0;
  for (const name of names) {
    const match = /^(\d+)\.log(\..*)?$/.exec(name);
    if (match !== null) next = Math.max(next, Number(match[1]) + 1);
  }
  return next;
}

/**
 * The CrashLoopBackOff check (upstream doBackOff): in back-off when the newest exited
 * instance finished less than the key's delay ago; otherwise the delay grows for next time.
 */
export function checkBackOff(backOff: BackOff, pod: NodePod, container: Container, status: RuntimePodStatus): StartResult | undefined {
  const exited = status.containers.find((c) => c.name === container.name && c.state === 'exited');
  if (exited === undefined) return undefined;
  const key = backOffKey(pod, container);
  const finishedAt = exited.finishedAt > 0 ? exited.finishedAt : exited.createdAt;
  const left = backOff.remainingSince(key, finishedAt);
  if (left > 0) {
    const delay = formatDuration(durationFromMs(backOff.get(key)));
    const message = `back-off ${delay} restarting failed container=${container.name} pod=${formatPod(pod)}`;
    return { error: { container: container.name, reason: 'CrashLoopBackOff', message }, retryAfterMs: left };
  }
  backOff.next(key, finishedAt);
  return undefined;
}

/**
 * Makes the termination-message file of a new instance (upstream: in makeMounts), mode 0666.
 * Synchronous calls: three local system calls on the start path, which an asynchronous round
 * trip through libuv's thread pool would make wait behind the agent's other file work.
 */
function terminationMessageFile(deps: StartDeps, pod: NodePod, container: Container): string | undefined {
  const dir = deps.volumes.containerDir?.(pod, container);
  if (dir === undefined || container.terminationMessagePath === '') return undefined;
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const file = path.join(dir, randomBytes(4).toString('hex'));
  writeFileSync(file, '', { mode: 0o666 });
  chmodSync(file, 0o666);
  return file;
}

/** What starting a container needs that does not depend on its sandbox existing yet. */
interface PreparedContainer {
  readonly image: Extract<Awaited<ReturnType<ImagePuller['ensureImage']>>, { ok: true }>;
  readonly restartCount: number;
  readonly messageFile: string | undefined;
}

/** A container made ready to create, or the result that ends its start (back-off, image or config error). */
type Preparation = { readonly ready: PreparedContainer } | { readonly done: StartResult };

/**
 * The steps of a start before CreateContainer that need only the sandbox's config: the back-off
 * check, the image (ImageStatus, a pull when the policy asks), the restart count, the
 * termination-message file and the log directory (the mounts wait for the sandbox: its IPs go
 * into the pod's /etc/hosts). Rejects only when the runtime is unreachable.
 */
async function prepareContainer(deps: StartDeps, ctx: Pick<StartContext, 'pod' | 'status' | 'sandboxConfig' | 'onPull'>, container: Container): Promise<Preparation> {
  const { pod } = ctx;
  const name = container.name;
  const backedOff = checkBackOff(deps.backOff, pod, container, ctx.status);
  if (backedOff !== undefined) {
    emitEvent(deps, { type: 'Warning', reason: 'BackOff', message: `Back-off restarting failed container ${name} in pod ${formatPod(pod)}`, pod, container: name });
    return { done: backedOff };
  }
  const credentials = deps.pullCredentials;
  const image = await deps.puller.ensureImage(pod, container, ctx.sandboxConfig, {
    emit: (e) => { emitEvent(deps, e); },
    ...(credentials === undefined ? {} : { auth: (repository: string) => credentials(pod, repository) }),
    ...(ctx.onPull === undefined ? {} : { onPull: ctx.onPull }),
  });
  if (!image.ok) {
    return { done: { error: { container: name, reason: image.reason, message: image.message }, ...(image.retryAfterMs === undefined ? {} : { retryAfterMs: image.retryAfterMs }) } };
  }
  const logDir = path.join(ctx.sandboxConfig.logDirectory ?? '', name);
  const previous = findContainer(ctx.status, name);
  try {
    verifyRunAsNonRoot(pod, container, image);
    const messageFile = terminationMessageFile(deps, pod, container);
    mkdirSync(logDir, { recursive: true, mode: 0o755 });
    const restartCount = previous === undefined ? restartCountFromLogs(logDir) : previous.restartCount + 1;
    return { ready: { image, restartCount, messageFile } };
  } catch (err) {
    return { done: configFailure(deps, pod, name, err) };
  }
}

function configFailure(deps: StartDeps, pod: NodePod, name: string, err: unknown): StartResult {
  emitEvent(deps, { type: 'Warning', reason: 'Failed', message: `Error: ${messageOf(err)}`, pod, container: name });
  return { error: { container: name, reason: 'CreateContainerConfigError', message: messageOf(err) } };
}

/**
 * An ephemeral container's target (upstream getTargetID): the newest instance of the container
 * it names, whose process namespace it joins. Throws when there is none.
 */
function targetOf(ctx: StartContext, container: Container | EphemeralContainer): { readonly targetId?: string } {
  const target = 'targetContainerName' in container ? container.targetContainerName ?? '' : '';
  if (target === '') return {};
  const found = findContainer(ctx.status, target);
  if (found === undefined) throw new Error(`unable to find target container ${target}`);
  return { targetId: found.id };
}

/** Starts one container; rejects only when the runtime is unreachable. */
export async function startContainer(deps: StartDeps, ctx: StartContext, spec: Container | EphemeralContainer, kind: ContainerKind): Promise<StartResult> {
  const { pod } = ctx;
  // An ephemeral container is a container with a target (upstream converts it the same way).
  const container: Container = spec;
  const name = container.name;
  const preparation = await prepareContainer(deps, ctx, container);
  if ('done' in preparation) return preparation.done;
  const { image, restartCount, messageFile } = preparation.ready;
  let config: ContainerConfig;
  try {
    const envObjects = await readEnvObjects(deps.envObjects, pod, container);
    for (const message of invalidEnvFromKeys(pod, container, envObjects)) {
      emitEvent(deps, { type: 'Warning', reason: 'InvalidEnvironmentVariableNames', message, pod });
    }
    const mounts = await deps.volumes.mountsFor(pod, container, { id: ctx.sandboxId, podIPs: ctx.podIPs });
    const devices = await deps.devices?.containerDevices(pod, container);
    config = makeContainerConfig({
      envObjects,
      pod,
      container,
      init: kind === 'init',
      ...(kind === 'ephemeral' ? { ephemeral: targetOf(ctx, spec) } : {}),
      imageRef: image.imageRef,
      restartCount,
      podIPs: ctx.podIPs,
      hostIPs: ctx.hostIPs,
      podHostIPs: deps.podHostIPs,
      nodeName: deps.nodeName,
      capacity: deps.capacity(),
      resources: deps.resources,
      mounts,
      seccomp: deps.seccomp,
      ...(messageFile === undefined ? {} : { terminationMessageFile: messageFile }),
      ...(deps.cpuset === undefined ? {} : { cpuset: deps.cpuset(pod, container) }),
      ...(devices === undefined ? {} : { devices }),
    });
  } catch (err) {
    return configFailure(deps, pod, name, err);
  }
  const oomScoreAdj = config.linux?.resources?.oomScoreAdj;
  if (oomScoreAdj !== undefined) deps.checkOomScore(oomScoreAdj);
  let id: string;
  try {
    id = await deps.runtime.createContainer({ podSandboxId: ctx.sandboxId, config, sandboxConfig: ctx.sandboxConfig });
  } catch (err) {
    if (isRuntimeUnreachable(err)) throw err;
    deps.logger.warn('failed to create container', { pod: formatPod(pod), container: name, err: messageOf(err) });
    emitEvent(deps, { type: 'Warning', reason: 'Failed', message: `Error: ${messageOf(err)}`, pod, container: name });
    return { error: { container: name, reason: 'CreateContainerError', message: messageOf(err) } };
  }
  emitEvent(deps, { type: 'Normal', reason: 'Created', message: `Created container ${name}`, pod, container: name });
  try {
    await deps.runtime.startContainer(id);
  } catch (err) {
    if (isRuntimeUnreachable(err)) throw err;
    deps.logger.warn('failed to start container', { pod: formatPod(pod), container: name, id, err: messageOf(err) });
    emitEvent(deps, { type: 'Warning', reason: 'Failed', message: `Error: ${messageOf(err)}`, pod, container: name });
    return { error: { container: name, reason: 'RunContainerError', message: messageOf(err) } };
  }
  ctx.onRuntimeDone?.();
  emitEvent(deps, { type: 'Normal', reason: 'Started', message: `Started container ${name}`, pod, container: name });
  deps.logger.v(2, 'started container', { pod: formatPod(pod), container: name, id, attempt: config.metadata.attempt, kind });
  const failure = await postStart(deps, ctx, container, id);
  return failure === undefined ? { id } : { id, error: { container: name, reason: 'PostStartHookError', message: failure } };
}

/** Runs the postStart hook; on failure records FailedPostStartHook and kills the container. Resolves to the failure message. */
async function postStart(deps: StartDeps, ctx: StartContext, container: Container, id: string): Promise<string | undefined> {
  const handler = container.lifecycle?.postStart;
  if (handler === undefined) return undefined;
  const { pod } = ctx;
  const failure = await runHandler(deps, { pod, container, containerId: id, handler, podIP: () => Promise.resolve(ctx.podIPs[0] ?? '') });
  if (failure === undefined) return undefined;
  emitEvent(deps, { type: 'Warning', reason: 'FailedPostStartHook', message: failure, pod, container: container.name });
  try {
    await killContainer(deps, { id, name: container.name, pod, spec: container, message: 'FailedPostStartHook' });
  } catch (err) {
    if (isRuntimeUnreachable(err)) throw err;
    deps.logger.warn('failed to kill a container whose postStart hook failed', { pod: formatPod(pod), container: container.name, id, err: messageOf(err) });
  }
  return failure;
}
