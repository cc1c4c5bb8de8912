/**
 * What one sync pass must do to make the runtime match a pod's spec (upstream:
 * computePodActions), decided from the spec and the runtime's status alone. Pure: the
 * back-offs and the runtime calls come after, in the manager.
 *
 *   | runtime holds                                  | actions                                              |
 *   |------------------------------------------------|------------------------------------------------------|
 *   | no sandbox, or none ready, or >1 ready, or the | kill the pod; create a sandbox (attempt + 1); purge   |
 *   | network mode changed, or a pod network w/o IP   | init containers; start the first init container, or   |
 *   |                                                | every container (OnFailure: not the succeeded ones)   |
 *   |   ... but restartPolicy Never and containers ran | kill the pod only (it is done)                       |
 *   | init containers not all succeeded              | the next init container (none while one runs); a     |
 *   |                                                | failed one again, or kill the pod with Never          |
 *   | a container missing or not running             | start it when the restart policy says so              |
 *   | a running container whose spec hash changed    | kill it and start it again                            |
 *   | a running container that failed its liveness   | kill it; start it again unless restartPolicy Never    |
 *   | or startup probe                               |                                                      |
 *   | nothing to keep and nothing to start           | kill the pod (stop the sandbox)                       |
 *
 * With the SidecarContainers gate, init containers follow init-actions.ts (sidecars start
 * before the next init container and keep running beside the containers). Ephemeral containers
 * that never ran start in the pod's sandbox whatever its init containers do, and never again (as
 * upstream); they do not keep a pod running.
 */
import type { Container, EphemeralContainer, Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { containerResizeAction } from '../resize/index.js';
import type { ContainerProbeResults } from '../prober/index.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from './types.js';
import { hashContainer, hashContainerWithoutResources } from './hash.js';
import { sidecarInitActions } from './init-actions.js';

export interface ContainerToKill {
  readonly id: string;
  readonly name: string;
  /** The spec of the container, when the pod still has one of that name. */
  readonly spec?: Container;
  readonly message: string;
  /** Killed because this probe failed (its terminationGracePeriodSeconds applies). */
  readonly probe?: 'liveness' | 'startup';
}

export interface PodActions {
  /** Stop every container and the sandbox(es) first. */
  readonly killPod: boolean;
  readonly createSandbox: boolean;
  /** The ready sandbox to create containers in ('' when one is to be created). */
  readonly sandboxId: string;
  /** The attempt of the sandbox to create, or of the existing one. */
  readonly attempt: number;
  /** Remove every init container instance (a new sandbox runs them all again). */
  readonly purgeInitContainers: boolean;
  /** Exited init container instances to remove: all but the newest of each name. */
  readonly initContainersToPrune: readonly string[];
  /** Init containers to start, in order (without sidecars: at most the next one). */
  readonly initContainersToStart: readonly Container[];
  /** False while init containers must finish first: nothing of containersToStart then. */
  readonly initDone: boolean;
  readonly containersToStart: readonly Container[];
  readonly containersToKill: readonly ContainerToKill[];
  /** Ephemeral containers that never ran (started before the init containers, as upstream). */
  readonly ephemeralContainersToStart: readonly EphemeralContainer[];
  /** Running containers to give their spec's resources in place (InPlacePodVerticalScaling). */
  readonly containersToUpdate: readonly Container[];
}

/** The newest instance of a container (statuses are newest first). */
export function findContainer(status: RuntimePodStatus, name: string): RuntimeContainerStatus | undefined {
  return status.containers.find((c) => c.name === name);
}

export function shouldRestartOnFailure(pod: Pod): boolean {
  return pod.spec?.restartPolicy !== 'Never';
}

function succeeded(status: RuntimePodStatus, c: Container): boolean {
  const s = findContainer(status, c.name);
  return s !== undefined && s.state === 'exited' && s.exitCode === 0;
}

function initFailed(s: RuntimeContainerStatus): boolean {
  return (s.state === 'exited' && s.exitCode !== 0) || s.state === 'unknown';
}

/** upstream ShouldContainerBeRestarted. */
export function shouldContainerBeRestarted(pod: Pod, c: Container, status: RuntimePodStatus): boolean {
  if (pod.metadata?.deletionTimestamp !== undefined) return false;
  const s = findContainer(status, c.name);
  if (s === undefined) return true;
  if (s.state === 'running') return false;
  if (s.state === 'unknown' || s.state === 'created') return true;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && s.exitCode === 0) return false;
  return true;
}

/** Whether a new sandbox is needed, with its attempt and the current sandbox (upstream podSandboxChanged). */
export function podSandboxChanged(pod: Pod, status: RuntimePodStatus): { changed: boolean; attempt: number; sandboxId: string } {
  const newest = status.sandboxes[0];
  if (newest === undefined) return { changed: true, attempt: 0, sandboxId: '' };
  const attempt = newest.attempt + 1;
  const ready = status.sandboxes.filter((s) => s.state === 'ready').length;
  const hostNetwork = pod.spec?.hostNetwork === true;
  if (ready > 1 || newest.state !== 'ready') return { changed: true, attempt, sandboxId: newest.id };
  if (newest.hostNetwork !== hostNetwork) return { changed: true, attempt, sandboxId: '' };
  if (!hostNetwork && newest.ips.length === 0) return { changed: true, attempt, sandboxId: newest.id };
  return { changed: false, attempt: newest.attempt, sandboxId: newest.id };
}

/**
 * The init container to run next (upstream findNextInitContainerToRun): `done` when all have
 * succeeded (or a regular container already runs); `failed` is the newest failed instance.
 */
export function nextInitContainer(pod: Pod, status: RuntimePodStatus): { done: boolean; next?: Container; failed?: RuntimeContainerStatus } {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return { done: true };
  for (const c of pod.spec?.containers ?? []) {
    if (findContainer(status, c.name)?.state === 'running') return { done: true };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i];
    const s = c === undefined ? undefined : findContainer(status, c.name);
    if (c !== undefined && s !== undefined && initFailed(s)) return { done: false, next: c, failed: s };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i];
    const s = c === undefined ? undefined : findContainer(status, c.name);
    if (s === undefined) continue;
    if (s.state === 'running') return { done: false };
    if (s.state === 'exited') {
      const following = inits[i + 1];
      return following === undefined ? { done: true } : { done: false, next: following };
    }
  }
  return { done: false, ...(inits[0] === undefined ? {} : { next: inits[0] }) };
}

/** Exited (or unknown) init container instances other than the newest of each name. */
function initContainersToPrune(pod: Pod, status: RuntimePodStatus): string[] {
  const names = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const seen = new Set<string>();
  const prune: string[] = [];
  for (const s of status.containers) {
    if (!s.init || !names.has(s.name) || (s.state !== 'exited' && s.state !== 'unknown')) continue;
    if (seen.has(s.name)) prune.push(s.id);
    else seen.add(s.name);
  }
  return prune;
}

export interface ComputeOptions {
  /** The spec hash function (injectable for tests). */
  readonly hashOf?: (c: Container) => string;
  /** Liveness and startup failures to act on. */
  readonly probes?: ContainerProbeResults | undefined;
  /** The SidecarContainers gate. */
  readonly sidecarContainers?: boolean | undefined;
  /**
   * The InPlacePodVerticalScaling gate: the resources each running container instance has (by
   * container ID). A running container whose spec changed only in its resources is then updated
   * in place, or restarted where its resizePolicy says RestartContainer, instead of recreated.
   */
  readonly inPlaceResize?: { readonly current: (containerId: string) => ResourceRequirements | undefined } | undefined;
}

/** The actions of one sync pass. */
export function computePodActions(pod: Pod, status: RuntimePodStatus, options: ComputeOptions = {}): PodActions {
  const hashOf = options.hashOf ?? hashContainer;
  const sandbox = podSandboxChanged(pod, status);
  const containers = pod.spec?.containers ?? [];
  const base = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.changed ? '' : sandbox.sandboxId,
    attempt: sandbox.attempt,
    purgeInitContainers: false,
    initContainersToPrune: [] as string[],
    initContainersToStart: [] as Container[],
    initDone: true,
    containersToStart: [] as Container[],
    containersToKill: [] as ContainerToKill[],
    ephemeralContainersToStart: [] as EphemeralContainer[],
    containersToUpdate: [] as Container[],
  };
  if (sandbox.changed) {
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && status.containers.length > 0) {
      return { ...base, createSandbox: false }; // the pod ran and must not restart: only make sure it is stopped
    }
    const firstInit = pod.spec?.initContainers?.[0];
    if (firstInit !== undefined) return { ...base, purgeInitContainers: true, initContainersToStart: [firstInit], initDone: false };
    const toStart = containers.filter((c) => !(pod.spec?.restartPolicy === 'OnFailure' && succeeded(status, c)));
    if (toStart.length === 0) return { ...base, createSandbox: false };
    return { ...base, containersToStart: toStart };
  }
  base.ephemeralContainersToStart = (pod.spec?.ephemeralContainers ?? []).filter((c) => findContainer(status, c.name) === undefined);
  const prune = initContainersToPrune(pod, status);
  const initStart: Container[] = [];
  const toKill: ContainerToKill[] = [];
  if (options.sidecarContainers === true) {
    const init = sidecarInitActions(pod, status, options.probes);
    if (init.failed) return { ...base, killPod: true, initContainersToPrune: prune };
    initStart.push(...init.start);
    toKill.push(...init.kill);
    if (!init.done) return { ...base, initContainersToPrune: prune, initContainersToStart: initStart, initDone: false, containersToKill: toKill };
  } else {
    const init = nextInitContainer(pod, status);
    if (!init.done) {
      if (init.next === undefined) return { ...base, initContainersToPrune: prune, initDone: false };
      if (init.failed !== undefined && !shouldRestartOnFailure(pod)) return { ...base, killPod: true, initContainersToPrune: prune };
      const kill: ContainerToKill[] =
        init.failed?.state === 'unknown' ? [{ id: init.failed.id, name: init.failed.name, spec: init.next, message: 'Init container is in unknown state, try killing it before restart' }] : [];
      return { ...base, initContainersToPrune: prune, initContainersToStart: [init.next], initDone: false, containersToKill: kill };
    }
  }
  const toStart: Container[] = [];
  const toUpdate: Container[] = [];
  const resize = options.inPlaceResize;
  const restart = shouldRestartOnFailure(pod);
  let keep = 0;
  for (const c of containers) {
    const s = findContainer(status, c.name);
    if (s === undefined || s.state !== 'running') {
      if (shouldContainerBeRestarted(pod, c, status)) {
        toStart.push(c);
        if (s?.state === 'unknown') toKill.push({ id: s.id, name: c.name, spec: c, message: 'Container is in unknown state, try killing it before restart' });
      }
      continue;
    }
    const sameHash = s.hash === hashOf(c);
    const onlyResources = resize !== undefined && (s.hashWithoutResources ?? '') !== '' && s.hashWithoutResources === hashContainerWithoutResources(c);
    if (!sameHash && !onlyResources) {
      toStart.push(c); // restarted whatever the restart policy: the spec changed
      toKill.push({ id: s.id, name: c.name, spec: c, message: `Container ${c.name} definition changed, will be restarted` });
      continue;
    }
    const failed = options.probes?.failedProbe(s.id);
    if (failed !== undefined) {
      const message = `Container ${c.name} failed ${failed.probe} probe`;
      if (restart) toStart.push(c);
      toKill.push({ id: s.id, name: c.name, spec: c, probe: failed.probe, message: restart ? `${message}, will be restarted` : message });
      continue;
    }
    if (resize !== undefined) {
      const current = resize.current(s.id);
      const action = current === undefined ? (sameHash ? 'none' : 'update') : containerResizeAction(c, current);
      if (action === 'restart') {
        toStart.push(c);
        toKill.push({ id: s.id, name: c.name, spec: c, message: `Container ${c.name} resize requires restart` });
        continue;
      }
      if (action === 'update') toUpdate.push(c);
    }
    keep++;
  }
  return {
    ...base, killPod: keep === 0 && toStart.length === 0, initContainersToPrune: prune, initContainersToStart: initStart,
    containersToStart: toStart, containersToKill: toKill, containersToUpdate: toUpdate,
  };
}

/** Whether carrying out the actions changes what the runtime holds for the pod. */
export function changesRuntime(a: PodActions): boolean {
  return a.killPod || a.createSandbox || a.containersToKill.length > 0 || a.initContainersToStart.length > 0 || a.containersToStart.length > 0
    || a.purgeInitContainers || a.initContainersToPrune.length > 0 || a.ephemeralContainersToStart.length > 0 || a.containersToUpdate.length > 0;
}
