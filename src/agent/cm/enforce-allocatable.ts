/**
 * Enforcing node allocatable in the cgroup hierarchies (upstream: enforceNodeAllocatableCgroups):
 * the pods cgroup (`<cgroupRoot>/orchpods`, or the cgroup root without cgroupsPerQOS) is made in
 * every hierarchy and given its limits, tried again every minute while a write fails (a memory
 * limit below what the pods use fails until evictions bring usage down), with a Normal
 * NodeAllocatableEnforced event once it holds and a Warning FailedNodeAllocatableEnforcement
 * event at each failure. The system- and orch-reserved cgroups listed in enforceNodeAllocatable
 * must exist already (the agent does not make them, as upstream) and get their reservations; a
 * missing or unwritable one stops the agent at start.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { Clock, Timer } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { describeHierarchy, makeCgroup, writeControl, type Hierarchy } from './cgroup-fs.js';
import type { CgroupHierarchy } from './hierarchies.js';
import { cgroupFiles, type ResourceConfig } from './pod-resources.js';

/** A reserved cgroup named in enforceNodeAllocatable does not exist or cannot take its limits. */
export const CM_NODE_ALLOCATABLE = 'CM_NODE_ALLOCATABLE';

export const NODE_ALLOCATABLE_ENFORCED = 'NodeAllocatableEnforced';
export const FAILED_NODE_ALLOCATABLE_ENFORCEMENT = 'FailedNodeAllocatableEnforcement';

export type NodeEventSink = (type: 'Normal' | 'Warning', reason: string, message: string) => void;

export interface ReservedCgroup {
  readonly level: 'system-reserved' | 'orch-reserved';
  /** The cgroup's absolute name (systemReservedCgroup, orchReservedCgroup). */
  readonly name: string;
  readonly config: ResourceConfig;
}

export interface EnforceAllocatableOptions {
  readonly hierarchies: readonly CgroupHierarchy[];
  /** The pods cgroup below each hierarchy's mount point, as path components ([] is the root: left alone). */
  readonly podsCgroup: readonly string[];
  /** The pods cgroup's name as events print it (`/<root>/orchpods`). */
  readonly podsCgroupName: string;
  readonly podsConfig: ResourceConfig;
  readonly reserved: readonly ReservedCgroup[];
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onEvent: NodeEventSink;
  /** Pause between attempts on the pods cgroup (default one minute, as upstream). */
  readonly retryMs?: number;
}

function writeAll(hierarchy: Hierarchy, dir: string, config: ResourceConfig): void {
  for (const [file, value] of cgroupFiles(config, hierarchy.version)) writeControl(join(dir, file), value);
}

/** The v1 hierarchies whose controllers `config` writes (cpu, memory, pids, hugetlb). */
function neededHierarchies(hierarchies: readonly CgroupHierarchy[], config: ResourceConfig): CgroupHierarchy[] {
  const wanted = new Set<string>();
  if (config.cpuShares !== undefined) wanted.add('cpu');
  if (config.memoryLimitBytes !== undefined) wanted.add('memory');
  if (config.pidsLimit !== undefined) wanted.add('pids');
  return hierarchies.filter((h) => h.version === 1 && h.controllers.some((c) => wanted.has(c)));
}

function enforceReserved(o: EnforceAllocatableOptions, hierarchies: readonly Hierarchy[], r: ReservedCgroup): void {
  const label = r.level === 'system-reserved' ? 'System Reserved' : 'Orch Reserved';
  try {
    for (const h of neededHierarchies(o.hierarchies, r.config)) {
      if (!existsSync(join(h.path, r.name))) throw new Error(`"${r.name}" cgroup does not exist (in ${h.path})`);
    }
    for (const h of hierarchies) if (existsSync(join(h.root, r.name))) writeAll(h, join(h.root, r.name), r.config);
  } catch (err) {
    const message = `Failed to enforce ${label} Cgroup Limits on "${r.name}": ${messageOf(err)}`;
    o.onEvent('Warning', FAILED_NODE_ALLOCATABLE_ENFORCEMENT, message);
    throw new OrchError(CM_NODE_ALLOCATABLE, 'invalid', message, { subject: r.level === 'system-reserved' ? 'systemReservedCgroup' : 'orchReservedCgroup', cause: err });
  }
  o.onEvent('Normal', NODE_ALLOCATABLE_ENFORCED, `Updated limits on ${r.level === 'system-reserved' ? 'system' : 'orch'} reserved cgroup ${r.name}`);
  o.logger.info('Enforced the reservation on its cgroup', { level: r.level, cgroup: r.name });
}

/**
 * Enforces node allocatable; resolves once the reserved cgroups hold their limits (the pods
 * cgroup is retried in the background until stop()). Throws CM_NODE_ALLOCATABLE.
 */
export async function enforceNodeAllocatable(o: EnforceAllocatableOptions): Promise<{ readonly stop: () => void }> {
  const hierarchies = await Promise.all(o.hierarchies.map((h) => describeHierarchy(h.path)));
  let timer: Timer | undefined;
  let stopped = false;
  const updatePods = (): void => {
    timer = undefined;
    if (stopped) return;
    try {
      for (const h of hierarchies) {
        for (let i = 1; i <= o.podsCgroup.length; i++) makeCgroup(h, join(h.root, ...o.podsCgroup.slice(0, i)));
        writeAll(h, join(h.root, ...o.podsCgroup), o.podsConfig);
      }
      o.onEvent('Normal', NODE_ALLOCATABLE_ENFORCED, 'Updated Node Allocatable limit across pods');
      o.logger.info('Node allocatable enforced on the pods cgroup', { cgroup: o.podsCgroupName, ...o.podsConfig });
    } catch (err) {
      o.onEvent('Warning', FAILED_NODE_ALLOCATABLE_ENFORCEMENT, `Failed to update Node Allocatable Limits "${o.podsCgroupName}": ${messageOf(err)}`);
      o.logger.warn('Cannot enforce node allocatable on the pods cgroup; trying again', { cgroup: o.podsCgroupName, err: messageOf(err) });
      timer = o.clock.setTimer(o.retryMs ?? 60_000, updatePods);
    }
  };
  if (o.podsCgroup.length > 0) updatePods();
  const stop = (): void => {
    stopped = true;
    timer?.cancel();
  };
  try {
    for (const r of o.reserved) enforceReserved(o, hierarchies, r);
  } catch (err) {
    stop();
    throw err;
  }
  return { stop };
}
