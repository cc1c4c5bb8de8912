/**
 * The CRI configuration of one container instance (upstream: generateContainerConfig):
 * metadata with the attempt, the resolved image, command and args expanded against the
 * environment, working dir, env (downward API included), mounts, the log path
 * `<name>/<restartCount>.log` relative to the sandbox's log directory, labels identifying
 * the pod and container, annotations the agent reads back (spec hash, restart count,
 * termination message, grace period, spec image), Linux resources and the cheap part of the
 * security context, and what the device manager gives the container (its envs and mounts
 * before the container's own, device nodes, annotations under the agent's, CDI devices). Also
 * the runAsNonRoot check upstream makes before creating. Pure.
 */
import type { Container, Pod, SecurityContext } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { OrchError } from '../../api/errors.js';
import type { ContainerConfig, LinuxContainerSecurityContext, Mount, MountPropagation } from '../runtime/cri/index.js';
import { expandCommand, makeEnvironment, type NodeCapacity } from './env.js';
import type { EnvObjects } from './env-sources.js';
import { hashContainer, hashContainerWithoutResources } from './hash.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION,
  CONTAINER_IMAGE_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TYPE_LABEL,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  TERMINATION_MESSAGE_PATH_ANNOTATION,
  TERMINATION_MESSAGE_POLICY_ANNOTATION,
} from './labels.js';
import type { ContainerDeviceOptions, ContainerMount } from './options.js';
import { containerResources, type ResourceSettings } from './resources.js';
import { DEFAULT_SECCOMP_PROFILE_ROOT, seccompProfile, type SeccompSettings } from './seccomp.js';
import { namespaceOptions, podGracePeriodSeconds, podLabels, podSupplementalGroups } from './sandbox-config.js';

/** The container runs as root although runAsNonRoot is set, or that cannot be verified (CreateContainerConfigError). */
export const KUBERUNTIME_RUN_AS_NON_ROOT = 'KUBERUNTIME_RUN_AS_NON_ROOT';
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** upstream's default masked and read-only paths for unprivileged containers. */
export const DEFAULT_MASKED_PATHS: readonly string[] = [
  '/proc/asound', '/proc/acpi', '/proc/kcore', '/proc/keys', '/proc/latency_stats', '/proc/timer_list',
  '/proc/timer_stats', '/proc/sched_debug', '/proc/scsi', '/sys/firmware', '/sys/devices/virtual/powercap',
];
export const DEFAULT_READONLY_PATHS: readonly string[] = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

export interface ContainerConfigInput {
  readonly pod: NodePod;
  readonly container: Container;
  readonly init: boolean;
  /** The image ID or digest the image service resolved. */
  readonly imageRef: string;
  readonly restartCount: number;
  readonly podIPs: readonly string[];
  readonly hostIPs: readonly string[];
  /** The PodHostIPs gate (the downward API's status.hostIPs). */
  readonly podHostIPs?: boolean | undefined;
  readonly nodeName: string;
  readonly capacity: NodeCapacity;
  readonly resources: Omit<ResourceSettings, 'memoryCapacityBytes'>;
  readonly mounts: readonly ContainerMount[];
  /** Where the termination message file of this instance is on the host, if one was made. */
  readonly terminationMessageFile?: string;
  /** Default: no RuntimeDefault fallback, profiles under DEFAULT_SECCOMP_PROFILE_ROOT. */
  readonly seccomp?: SeccompSettings;
  /** The ConfigMaps and Secrets the container's env names (default none). */
  readonly envObjects?: EnvObjects;
  /** An ephemeral container, with the ID of its target container (whose process namespace it joins). */
  readonly ephemeral?: { readonly targetId?: string };
  /** The CPUs and memory nodes the CPU and memory managers give the container (cpuset.cpus, cpuset.mems). */
  readonly cpuset?: ContainerCpuset;
  /** What the device manager gives the container. */
  readonly devices?: ContainerDeviceOptions;
}

/** A container's cpuset as the resource managers decide it ('' or absent: not set). */
export interface ContainerCpuset {
  readonly cpus?: string;
  readonly mems?: string;
}

/** `<name>/<restartCount>.log` (upstream: buildContainerLogsPath). */
export function containerLogPath(name: string, restartCount: number): string {
  return `${name}/${restartCount}.log`;
}

/** `name_namespace(uid)` (upstream: format.Pod). */
export function formatPod(pod: NodePod): string {
  const id = pod.metadata;
  return `${id.name}_${id.namespace}(${id.uid})`;
}

const PROPAGATION: Readonly<Record<string, MountPropagation>> = {
  None: 'PROPAGATION_PRIVATE',
  HostToContainer: 'PROPAGATION_HOST_TO_CONTAINER',
  Bidirectional: 'PROPAGATION_BIDIRECTIONAL',
};

export function criMount(m: ContainerMount): Mount {
  const propagation = m.propagation === undefined ? undefined : PROPAGATION[m.propagation];
  return { containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readonly, ...(propagation === undefined ? {} : { propagation }) };
}

/** The container's security context over the pod's (upstream: DetermineEffectiveSecurityContext, the fields used here). */
export function effectiveSecurityContext(pod: Pod, container: Container): SecurityContext {
  const podSc = pod.spec?.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const pick = <K extends keyof SecurityContext>(key: K, fromPod: SecurityContext[K]): Partial<SecurityContext> =>
    (sc[key] ?? fromPod) === undefined ? {} : { [key]: sc[key] ?? fromPod };
  return {
    ...sc,
    ...pick('runAsUser', podSc.runAsUser),
    ...pick('runAsGroup', podSc.runAsGroup),
    ...pick('runAsNonRoot', podSc.runAsNonRoot),
    ...pick('seccompProfile', podSc.seccompProfile),
  };
}

function securityContext(pod: Pod, container: Container, settings: SeccompSettings): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container);
  const privileged = sc.privileged === true;
  const unmasked = privileged || sc.procMount === 'Unmasked';
  const groups = podSupplementalGroups(pod);
  const profile = seccompProfile(pod, container.securityContext?.seccompProfile, settings);
  return {
    namespaceOptions: namespaceOptions(pod),
    privileged,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    ...(sc.runAsUser === undefined ? {} : { runAsUser: { value: sc.runAsUser } }),
    ...(sc.runAsGroup === undefined ? {} : { runAsGroup: { value: sc.runAsGroup } }),
    ...(groups.length === 0 ? {} : { supplementalGroups: groups }),
    ...(sc.capabilities === undefined
      ? {}
      : { capabilities: { addCapabilities: sc.capabilities.add ?? [], dropCapabilities: sc.capabilities.drop ?? [] } }),
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    maskedPaths: unmasked ? [] : DEFAULT_MASKED_PATHS,
    readonlyPaths: unmasked ? [] : DEFAULT_READONLY_PATHS,
    seccomp: profile,
  };
}

/** An ephemeral container with a target joins the target's process namespace, when the pod does not share one (upstream). */
function targeted(sc: LinuxContainerSecurityContext, targetId: string | undefined): LinuxContainerSecurityContext {
  if (targetId === undefined || sc.namespaceOptions?.pid !== 'CONTAINER') return sc;
  return { ...sc, namespaceOptions: { ...sc.namespaceOptions, pid: 'TARGET', targetId } };
}

/** True when the container must be checked against its image's user (runAsNonRoot without runAsUser). */
export function needsImageUser(pod: Pod, container: Container): boolean {
  const sc = effectiveSecurityContext(pod, container);
  return sc.runAsNonRoot === true && sc.runAsUser === undefined;
}

/**
 * upstream verifyRunAsNonRoot: throws KUBERUNTIME_RUN_AS_NON_ROOT when runAsNonRoot is set and
 * the container would run as root, or the image's user is a name that cannot be checked.
 */
export function verifyRunAsNonRoot(pod: NodePod, container: Container, image: { readonly uid?: number; readonly username: string }): void {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return;
  const where = `(pod: "${formatPod(pod)}", container: ${container.name})`;
  const fail = (message: string): OrchError =>
    new OrchError(KUBERUNTIME_RUN_AS_NON_ROOT, 'forbidden', `${message} ${where}`, { subject: `containers[${container.name}].securityContext.runAsNonRoot` });
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0) throw fail("container's runAsUser breaks non-root policy");
    return;
  }
  if (image.uid === 0) throw fail('container has runAsNonRoot and image will run as root');
  if (image.uid === undefined && image.username !== '') {
    throw fail(`container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root`);
  }
}

/** The configuration. Throws KUBERUNTIME_ENV_INVALID or KUBERUNTIME_ENV_REFERENCE_NOT_FOUND when the environment cannot be built. */
export function makeContainerConfig(input: ContainerConfigInput): ContainerConfig {
  const { pod, container } = input;
  const env = makeEnvironment({
    pod, container, podIPs: input.podIPs, hostIPs: input.hostIPs, nodeName: input.nodeName, capacity: input.capacity,
    ...(input.podHostIPs === true ? { podHostIPs: true } : {}),
    ...(input.envObjects === undefined ? {} : { objects: input.envObjects }),
  });
  const { command, args } = expandCommand(container, env);
  const messagePath = container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
  const devices = input.devices;
  // As upstream: the devices' mounts and envs first (a runtime keeps the last of two envs of one name: the container's).
  const mounts = [
    ...(devices?.mounts ?? []).map((m) => ({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readOnly })),
    ...input.mounts.map(criMount),
  ];
  if (input.terminationMessageFile !== undefined && messagePath !== '') {
    mounts.push({ containerPath: messagePath, hostPath: input.terminationMessageFile, readonly: false });
  }
  return {
    metadata: { name: container.name, attempt: input.restartCount },
    image: { image: input.imageRef, userSpecifiedImage: container.image ?? '' },
    command,
    args,
    ...(container.workingDir === undefined || container.workingDir === '' ? {} : { workingDir: container.workingDir }),
    envs: [...(devices?.envs ?? []), ...env].map((e) => ({ key: e.name, value: e.value })),
    mounts,
    ...(devices === undefined || devices.devices.length === 0 ? {} : { devices: devices.devices }),
    ...(devices === undefined || devices.cdiDevices.length === 0 ? {} : { cdiDevices: devices.cdiDevices.map((name) => ({ name })) }),
    labels: { ...podLabels(pod.metadata), [CONTAINER_NAME_LABEL]: container.name, [CONTAINER_TYPE_LABEL]: input.ephemeral !== undefined ? 'ephemeral' : input.init ? 'init' : 'regular' },
    annotations: {
      ...Object.fromEntries((devices?.annotations ?? []).map((a) => [a.name, a.value])),
      [CONTAINER_HASH_ANNOTATION]: hashContainer(container),
      [CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION]: hashContainerWithoutResources(container),
      [CONTAINER_RESTART_COUNT_ANNOTATION]: String(input.restartCount),
      [CONTAINER_IMAGE_ANNOTATION]: container.image ?? '',
      [TERMINATION_MESSAGE_PATH_ANNOTATION]: messagePath,
      [TERMINATION_MESSAGE_POLICY_ANNOTATION]: container.terminationMessagePolicy ?? 'File',
      [POD_TERMINATION_GRACE_PERIOD_ANNOTATION]: String(podGracePeriodSeconds(pod)),
    },
    logPath: containerLogPath(container.name, input.restartCount),
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: {
        ...containerResources(pod, container, { ...input.resources, memoryCapacityBytes: input.capacity.memoryBytes }),
        ...(input.cpuset?.cpus === undefined || input.cpuset.cpus === '' ? {} : { cpusetCpus: input.cpuset.cpus }),
        ...(input.cpuset?.mems === undefined || input.cpuset.mems === '' ? {} : { cpusetMems: input.cpuset.mems }),
      },
      securityContext: targeted(securityContext(pod, container, input.seccomp ?? { runtimeDefault: false, profileRoot: DEFAULT_SECCOMP_PROFILE_ROOT }), input.ephemeral?.targetId),
    },
  };
}
