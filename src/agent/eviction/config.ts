/**
 * The eviction manager's settings from the agent's configuration, and where its memory
 * signals are read: the cgroup v1 memory hierarchy's root, and the pods cgroup below it
 * (`<cgroupRoot>/orchpods`, with cgroupsPerQOS) for allocatableMemory.available.
 *
 * kernelMemcgNotification is accepted with one warning at start (config's ineffective settings):
 * upstream arms a memory threshold with an eventfd registered in cgroup.event_control (cgroup v1),
 * which Node.js cannot create without a native addon, so the 10 s monitoring pass finds a crossed
 * memory threshold by polling whatever the setting says.
 */
import { join } from 'node:path';
import { durationToMs } from '../../api/duration.js';
import { fsComponents, qosCgroupName, type CgroupConfig } from '../cm/index.js';
import { readMountInfo } from '../volumes/index.js';
import { parseThresholds, type ThresholdConfig } from './thresholds.js';
import type { Threshold } from './types.js';

export interface EvictionConfig extends ThresholdConfig {
  /** Nanoseconds (the configuration's duration). */
  readonly evictionPressureTransitionPeriod: number;
  readonly evictionMaxPodGracePeriod: number;
  readonly localStorageCapacityIsolation: boolean;
}

export interface EvictionSettings {
  readonly thresholds: readonly Threshold[];
  readonly pressureTransitionPeriodMs: number;
  readonly maxPodGracePeriodSeconds: number;
  readonly localStorageCapacityIsolation: boolean;
}

/** Throws EVICTION_THRESHOLD_INVALID, naming the field. */
export function evictionSettings(c: EvictionConfig): EvictionSettings {
  return {
    thresholds: parseThresholds(c),
    pressureTransitionPeriodMs: durationToMs(c.evictionPressureTransitionPeriod),
    maxPodGracePeriodSeconds: c.evictionMaxPodGracePeriod,
    localStorageCapacityIsolation: c.localStorageCapacityIsolation,
  };
}

/** The memory hierarchy's root and the pods cgroup in it; undefined parts when there is no cgroup v1 memory hierarchy. */
export async function memoryCgroupDirs(config: CgroupConfig, mountInfoPath?: string): Promise<{ root?: string; pods?: string }> {
  const mounts = await readMountInfo(mountInfoPath);
  const memory = mounts.find((m) => m.fsType === 'cgroup' && m.superOptions.split(',').includes('memory'));
  if (memory === undefined) return {};
  if (!config.cgroupsPerQOS) return { root: memory.mountPoint };
  return { root: memory.mountPoint, pods: join(memory.mountPoint, ...fsComponents(qosCgroupName('Guaranteed', config), config.cgroupDriver)) };
}
