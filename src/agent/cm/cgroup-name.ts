/**
 * Cgroup names of the pod hierarchy, for both drivers. A name is a list of components
 * (`['orchpods', 'burstable', 'pod<uid>']`), printed per driver as upstream does:
 *
 * | driver   | pod cgroup parent (CRI linux.cgroup_parent)  | directory in each hierarchy                          |
 * |----------|----------------------------------------------|------------------------------------------------------|
 * | cgroupfs | /<root>/orchpods/burstable/pod<uid>          | the same path                                        |
 * | systemd  | orchpods-burstable-pod<uid, - as _>.slice    | /orchpods.slice/orchpods-burstable.slice/<the slice> |
 *
 * Guaranteed pods sit directly under `orchpods`; Burstable and BestEffort pods under the QoS
 * cgroups `orchpods/burstable` and `orchpods/besteffort` (created by `ensure`; their cpu.shares
 * are pod-cgroups.ts's, their memory limits under qosReserved qos-reserve.ts's). Without
 * cgroupsPerQOS, pods sit directly under the cgroup root (`/<root>/pod<uid>`; upstream puts the
 * containers in the root itself).
 */
import type { NodePod } from '../../api/pod/index.js';

import { OrchError } from '../../api/errors.js';
import { qosClass, type QOSClass } from '../../api/pod/index.js';

export type CgroupDriver = 'cgroupfs' | 'systemd';

export interface CgroupConfig {
  /** --cgroup-root; '' and '/' mean the root of each hierarchy. A slice name (`foo.slice`) for systemd. */
  readonly cgroupRoot: string;
  readonly cgroupsPerQOS: boolean;
  readonly cgroupDriver: CgroupDriver;
}

/** A pod without a usable UID, or a driver other than cgroupfs and systemd. */
export const CM_INVALID = 'CM_INVALID';

export const POD_CGROUPS_ROOT = 'orchpods';
export const POD_CGROUP_PREFIX = 'pod';

/** A cgroup name: its components from the root. */
export type CgroupName = readonly string[];

/** UIDs usable in a cgroup name: letters, digits and dashes (`_` is systemd's escape of `-`). */
const UID_PATTERN = /^[0-9A-Za-z][0-9A-Za-z-]*$/;
/**
 * In a cgroup shared with others (the root, without cgroupsPerQOS) only UUIDs and hashes (hex
 * digits and dashes) count as pods, so that e.g. a `podman` cgroup is never taken for pod `man`.
 */
const SHARED_ROOT_UID_PATTERN = /^[0-9a-f]{8,}(-[0-9a-f]+)*$/;

export function isCgroupDriver(value: string): value is CgroupDriver {
  return value === 'cgroupfs' || value === 'systemd';
}

/**
 * The cgroup settings of the configuration (cgroupRoot, cgroupsPerQOS, cgroupDriver): the
 * configuration's validation allows cgroupfs and systemd only; anything else reads as cgroupfs,
 * the default.
 */
export function cgroupConfigOf(c: { readonly cgroupRoot: string; readonly cgroupsPerQOS: boolean; readonly cgroupDriver: string }): CgroupConfig {
  return { cgroupRoot: c.cgroupRoot, cgroupsPerQOS: c.cgroupsPerQOS, cgroupDriver: c.cgroupDriver === 'systemd' ? 'systemd' : 'cgroupfs' };
}

export function checkPodUID(uid: string): void {
  if (!UID_PATTERN.test(uid)) {
    throw new OrchError(CM_INVALID, 'invalid', `pod UID ${JSON.stringify(uid)} cannot name a cgroup (expected letters, digits and dashes)`, {
      subject: 'metadata.uid',
    });
  }
}

/** The components of --cgroup-root: a path for cgroupfs, a slice (`/a.slice/a-b.slice` or `a-b.slice`) for systemd. */
export function rootName(config: CgroupConfig): CgroupName {
  const path = config.cgroupRoot.split('/').filter((p) => p !== '');
  if (config.cgroupDriver === 'cgroupfs') return path;
  const last = path.at(-1);
  if (last === undefined || last === '-.slice') return [];
  const base = last.endsWith('.slice') ? last.slice(0, -'.slice'.length) : last;
  return base.split('-').map((part) => part.replace(/_/g, '-'));
}

/** The QoS cgroups a pod of each class lives in (the pod cgroup's parent). */
export function qosCgroupName(qos: QOSClass, config: CgroupConfig): CgroupName {
  const root = rootName(config);
  if (!config.cgroupsPerQOS) return root;
  if (qos === 'Guaranteed') return [...root, POD_CGROUPS_ROOT];
  return [...root, POD_CGROUPS_ROOT, qos.toLowerCase()];
}

/** Every cgroup that may hold pods: the pod root and the burstable and besteffort QoS cgroups (or the root alone). */
export function podContainerNames(config: CgroupConfig): CgroupName[] {
  if (!config.cgroupsPerQOS) return [rootName(config)];
  return (['Guaranteed', 'Burstable', 'BestEffort'] as const).map((q) => qosCgroupName(q, config));
}

export function podCgroupNameFor(uid: string, qos: QOSClass, config: CgroupConfig): CgroupName {
  checkPodUID(uid);
  return [...qosCgroupName(qos, config), POD_CGROUP_PREFIX + uid];
}

function escapeSystemd(component: string): string {
  return component.replace(/-/g, '_');
}

/** The systemd slice unit of a name: `a-b_c.slice` for ['a', 'b-c']; the root is `-.slice`. */
export function systemdSliceName(name: CgroupName): string {
  return name.length === 0 ? '-.slice' : `${name.map(escapeSystemd).join('-')}.slice`;
}

/** The name as the driver prints it: a cgroupfs path, or a systemd slice unit. */
export function driverName(name: CgroupName, driver: CgroupDriver): string {
  return driver === 'cgroupfs' ? `/${name.join('/')}` : systemdSliceName(name);
}

/** The path of the name below each hierarchy's mount point, as components (systemd: one slice per level). */
export function fsComponents(name: CgroupName, driver: CgroupDriver): string[] {
  if (driver === 'cgroupfs') return [...name];
  return name.map((_component, i) => systemdSliceName(name.slice(0, i + 1)));
}

/**
 * The pod's cgroup parent for CRI's `linux.cgroup_parent`. Throws OrchError `CM_INVALID` for a
 * pod without a hex UID, and `API_INVALID_QUANTITY` for malformed resources (through qosClass).
 */
export function podCgroupParent(pod: NodePod, config: CgroupConfig): string {
  const name = podCgroupNameFor(pod.metadata.uid, qosClass(pod), config);
  return driverName(name, config.cgroupDriver);
}

/** The UID in a pod cgroup's directory name below `container`, or undefined when it is not one. */
export function podUIDFromDir(dirName: string, container: CgroupName, config: CgroupConfig): string | undefined {
  const driver = config.cgroupDriver;
  let uid: string;
  if (driver === 'cgroupfs') {
    if (!dirName.startsWith(POD_CGROUP_PREFIX)) return undefined;
    uid = dirName.slice(POD_CGROUP_PREFIX.length);
  } else {
    const prefix = (container.length === 0 ? '' : `${container.map(escapeSystemd).join('-')}-`) + POD_CGROUP_PREFIX;
    if (!dirName.startsWith(prefix) || !dirName.endsWith('.slice')) return undefined;
    uid = dirName.slice(prefix.length, -'.slice'.length).replace(/_/g, '-');
  }
  return (config.cgroupsPerQOS ? UID_PATTERN : SHARED_ROOT_UID_PATTERN).test(uid) ? uid : undefined;
}
