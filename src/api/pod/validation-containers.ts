/**
 * Validation of a pod's containers and init containers: names (unique across both lists),
 * image, policies, ports and host port conflicts, environment variables and volume
 * mounts. Probes, lifecycle handlers and resources are checked in their own files.
 */
import type { Container, ContainerPort, EnvVar, PodSpec, VolumeMount } from 'kubernetes-types/core/v1.js';

import { validateResources } from './validation-resources.js';
import { validateLifecycle, validateProbe } from './validation-probes.js';
import {
  ENV_FIELD_PATHS, Problems, checkAbsolutePath, checkDNSLabel, checkDNSSubdomain, checkEnum, checkFieldRef, checkIP,
  checkOptionalEnum, checkQuantity, checkRange, checkRelativePath, ianaServiceNameProblems, maybe, quote, setKeys,
} from './validation-util.js';

export const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;
export const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;
export const MOUNT_PROPAGATIONS = ['None', 'HostToContainer', 'Bidirectional'] as const;
export const RECURSIVE_READ_ONLY = ['Disabled', 'IfPossible', 'Enabled'] as const;

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const ENV_RESOURCES = /^(limits|requests)\.(cpu|memory|ephemeral-storage|hugepages-.+)$/;

export interface ContainerContext {
  readonly volumeNames: ReadonlySet<string>;
  readonly hostNetwork: boolean;
  readonly init: boolean;
}

function validatePorts(p: Problems, path: string, ports: readonly ContainerPort[], hostNetwork: boolean): void {
  const names = new Map<string, number>();
  ports.forEach((port, i) => {
    const at = `${path}[${i}]`;
    if ((port.containerPort as number | undefined) === undefined || port.containerPort === 0) {
      p.add(`${at}.containerPort`, 'is required: a port number from 1 to 65535');
    } else {
      checkRange(p, `${at}.containerPort`, port.containerPort, 1, 65535);
    }
    checkRange(p, `${at}.hostPort`, port.hostPort, 0, 65535);
    checkEnum(p, `${at}.protocol`, port.protocol, PROTOCOLS);
    if (port.hostIP !== undefined && port.hostIP !== '') checkIP(p, `${at}.hostIP`, port.hostIP);
    if (hostNetwork && port.hostPort !== undefined && port.hostPort !== 0 && port.hostPort !== port.containerPort) {
      p.add(`${at}.hostPort`, `${port.hostPort} must equal containerPort (${port.containerPort}) when the pod uses the host network`);
    }
    if (port.name === undefined || port.name === '') return;
    p.addEach(`${at}.name`, port.name, ianaServiceNameProblems(port.name));
    const first = names.get(port.name);
    if (first !== undefined) p.add(`${at}.name`, `${quote(port.name)} is already the name of ${path}[${first}]; port names must be unique in a container`);
    else names.set(port.name, i);
  });
}

/** Two ports of the pod's containers may not take the same host port, protocol and host IP. */
function validateHostPorts(p: Problems, path: string, containers: readonly Container[]): void {
  const seen = new Map<string, string>();
  containers.forEach((c, ci) => {
    (c.ports ?? []).forEach((port, pi) => {
      if (port.hostPort === undefined || port.hostPort === 0) return;
      const key = `${port.protocol ?? ''}/${port.hostIP ?? ''}/${port.hostPort}`;
      const at = `${path}[${ci}].ports[${pi}].hostPort`;
      const other = seen.get(key);
      if (other === undefined) seen.set(key, at);
      else p.add(at, `host port ${port.hostPort}/${port.protocol ?? ''}${port.hostIP === undefined || port.hostIP === '' ? '' : ` on ${port.hostIP}`} is already taken by ${other}`);
    });
  });
}

function validateEnv(p: Problems, path: string, env: EnvVar, containerNames: ReadonlySet<string>): void {
  const name = env.name as string | undefined;
  if (name === undefined || name === '') p.add(`${path}.name`, 'is required');
  else if (!ENV_NAME.test(name)) {
    p.add(`${path}.name`, `${quote(name)} must consist of letters, digits, '-', '_' or '.', and not start with a digit (e.g. 'MY_VAR', 'my.var')`);
  }
  const from = env.valueFrom;
  if (from === undefined) return;
  if (env.value !== undefined && env.value !== '') p.add(`${path}.valueFrom`, 'must not be set together with a non-empty value');
  const sources = setKeys(from, ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef']);
  if (sources.length !== 1) {
    p.add(`${path}.valueFrom`, `must have exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef (found ${sources.length === 0 ? 'none' : sources.join(', ')})`);
    return;
  }
  if (from.fieldRef !== undefined) checkFieldRef(p, `${path}.valueFrom.fieldRef`, from.fieldRef, ENV_FIELD_PATHS);
  const rf = from.resourceFieldRef;
  if (rf !== undefined) {
    const at = `${path}.valueFrom.resourceFieldRef`;
    if (!ENV_RESOURCES.test(rf.resource)) {
      p.add(`${at}.resource`, `${quote(rf.resource)} is not supported: must be limits.<r> or requests.<r> with <r> cpu, memory, ephemeral-storage or hugepages-<size>`);
    }
    if (rf.containerName !== undefined && rf.containerName !== '' && !containerNames.has(rf.containerName)) {
      p.add(`${at}.containerName`, `${quote(rf.containerName)} is not a container of this pod`);
    }
    if (rf.divisor !== undefined) checkQuantity(p, `${at}.divisor`, rf.divisor);
  }
  for (const kind of ['configMapKeyRef', 'secretKeyRef'] as const) {
    const ref = from[kind];
    if (ref === undefined) continue;
    const at = `${path}.valueFrom.${kind}`;
    if (ref.name === undefined || ref.name === '') p.add(`${at}.name`, 'is required');
    else checkDNSSubdomain(p, `${at}.name`, ref.name);
    if ((ref.key as string | undefined) === undefined || ref.key === '') p.add(`${at}.key`, 'is required');
    else if (!CONFIG_KEY.test(ref.key) || ref.key.length > 253) {
      p.add(`${at}.key`, `${quote(ref.key)} must be at most 253 letters, digits, '-', '_' or '.'`);
    }
  }
}

function validateMounts(p: Problems, path: string, mounts: readonly VolumeMount[], volumeNames: ReadonlySet<string>): void {
  const mountPaths = new Map<string, number>();
  mounts.forEach((m, i) => {
    const at = `${path}[${i}]`;
    const name = m.name as string | undefined;
    if (name === undefined || name === '') p.add(`${at}.name`, 'is required: the name of a volume of the pod');
    else if (!volumeNames.has(name)) p.add(`${at}.name`, `${quote(name)} is not a volume of this pod (spec.volumes)`);
    checkAbsolutePath(p, `${at}.mountPath`, m.mountPath, false);
    const first = mountPaths.get(m.mountPath);
    if (first !== undefined) p.add(`${at}.mountPath`, `${quote(m.mountPath)} is already mounted by ${path}[${first}]; mount paths must be unique in a container`);
    else if ((m.mountPath as string | undefined) !== undefined) mountPaths.set(m.mountPath, i);
    if (m.subPath !== undefined && m.subPath !== '') checkRelativePath(p, `${at}.subPath`, m.subPath);
    if (m.subPathExpr !== undefined && m.subPathExpr !== '') {
      checkRelativePath(p, `${at}.subPathExpr`, m.subPathExpr);
      if (m.subPath !== undefined && m.subPath !== '') p.add(`${at}.subPathExpr`, 'must not be set together with subPath');
    }
    checkOptionalEnum(p, `${at}.mountPropagation`, m.mountPropagation, MOUNT_PROPAGATIONS);
    checkOptionalEnum(p, `${at}.recursiveReadOnly`, m.recursiveReadOnly, RECURSIVE_READ_ONLY);
    if (m.recursiveReadOnly !== undefined && m.recursiveReadOnly !== 'Disabled' && m.readOnly !== true) {
      p.add(`${at}.recursiveReadOnly`, `${quote(m.recursiveReadOnly)} needs readOnly: true`);
    }
  });
}

export function validateContainer(p: Problems, path: string, c: Container, ctx: ContainerContext, containerNames: ReadonlySet<string>): void {
  const image = c.image ?? '';
  if (image.trim() === '') p.add(`${path}.image`, 'is required');
  else if (image.trim() !== image) p.add(`${path}.image`, `${quote(image)} must not have leading or trailing whitespace`);
  checkEnum(p, `${path}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES);
  checkEnum(p, `${path}.terminationMessagePolicy`, c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES);
  const sidecar = ctx.init && c.restartPolicy === 'Always';
  if (c.restartPolicy !== undefined) {
    if (!ctx.init) p.add(`${path}.restartPolicy`, 'must not be set for a regular container (only init containers may set it, to Always)');
    else if (!sidecar) p.add(`${path}.restartPolicy`, `${quote(c.restartPolicy)} is not supported: an init container may only set Always`);
  }
  validatePorts(p, `${path}.ports`, c.ports ?? [], ctx.hostNetwork);
  (c.env ?? []).forEach((env, i) => {
    validateEnv(p, `${path}.env[${i}]`, env, containerNames);
  });
  validateMounts(p, `${path}.volumeMounts`, c.volumeMounts ?? [], ctx.volumeNames);
  if (c.resources !== undefined) validateResources(p, `${path}.resources`, c.resources);
  const probes = [['livenessProbe', c.livenessProbe], ['readinessProbe', c.readinessProbe], ['startupProbe', c.startupProbe]] as const;
  for (const [kind, probe] of probes) {
    if (probe === undefined) continue;
    if (ctx.init && !sidecar) p.add(`${path}.${kind}`, 'must not be set for an init container (unless its restartPolicy is Always)');
    else validateProbe(p, `${path}.${kind}`, probe, kind);
  }
  if (c.lifecycle !== undefined) {
    if (ctx.init && !sidecar) p.add(`${path}.lifecycle`, 'must not be set for an init container (unless its restartPolicy is Always)');
    else validateLifecycle(p, `${path}.lifecycle`, c.lifecycle);
  }
}

/** Checks spec.containers (at least one) and spec.initContainers (ephemeral containers: validation-ephemeral.ts). */
export function validateContainers(p: Problems, spec: PodSpec, volumeNames: ReadonlySet<string>): void {
  const containers = maybe<readonly Container[]>(spec.containers);
  if (containers === undefined || containers.length === 0) p.add('spec.containers', 'is required: a pod needs at least one container');
  const lists = [
    { field: 'spec.containers', list: containers ?? [], init: false },
    { field: 'spec.initContainers', list: spec.initContainers ?? [], init: true },
  ];
  const names = new Map<string, string>();
  for (const { field, list } of lists) {
    list.forEach((c, i) => {
      const at = `${field}[${i}].name`;
      const name = c.name as string | undefined;
      if (name === undefined || name === '') {
        p.add(at, 'is required');
        return;
      }
      checkDNSLabel(p, at, name);
      const other = names.get(name);
      if (other !== undefined) p.add(at, `${quote(name)} is already the name of ${other}; container names must be unique across containers and initContainers`);
      else names.set(name, at.slice(0, -'.name'.length));
    });
  }
  const containerNames = new Set((containers ?? []).map((c) => c.name));
  const hostNetwork = spec.hostNetwork === true;
  for (const { field, list, init } of lists) {
    list.forEach((c, i) => {
      validateContainer(p, `${field}[${i}]`, c, { volumeNames, hostNetwork, init }, containerNames);
    });
  }
  validateHostPorts(p, 'spec.containers', containers ?? []);
  validateHostPorts(p, 'spec.initContainers', spec.initContainers ?? []);
}
