/**
 * The eviction manager's settings from the agent's configuration, and where its memory
 * signals are read: the cgroup v1 memory hierarchy's root, and the pods cgroup below it
 * (`<cgroupRoot>/orchpods`, with cgroupsPerQOS) for allocatableMemory.available.
 *
 * kernelMemcgNotification is refused: upstream arms a memory threshold with an eventfd
 * registered in cgroup.event_control (cgroup v1), and Node.js cannot create an eventfd without a
 * native addon. The 10 s monitoring pass sees a crossed memory threshold instead.
 */
import { join } from 'node:path';
import { durationToMs } from '../../api/duration.js';
import { OrchError } from '../../api/errors.js';
import { MEMCG_NOTIFICATION_REFUSAL } from '../config/index.js';
import { fsComponents, qosCgroupName, type CgroupConfig } from '../cm/index.js';
import { readMountInfo } from '../volumes/index.js';
import { parseThresholds, type ThresholdConfig } from './thresholds.js';
import type { Threshold } from './types.js';

/** kernelMemcgNotification is true: memory threshold notifications need an eventfd Node.js cannot make. */
export const EVICTION_MEMCG_NOTIFICATION_UNSUPPORTED = 'EVICTION_MEMCG_NOTIFICATION_UNSUPPORTED';

export { MEMCG_NOTIFICATION_REFUSAL };

export interface EvictionConfig extends ThresholdConfig {
  /** Nanoseconds (the configuration's duration). */
  readonly evictionPressureTransitionPeriod: number;
  readonly evictionMaxPodGracePeriod: number;
  readonly localStorageCapacityIsolation: boolean;
  readonly kernelMemcgNotification: boolean;
}

export interface EvictionSettings {
  readonly thresholds: readonly Threshold[];
  readonly pressureTransitionPeriodMs: number;
  readonly maxPodGracePeriodSeconds: number;
  readonly localStorageCapacityIsolation: boolean;
}

/** Throws EVICTION_MEMCG_NOTIFICATION_UNSUPPORTED or EVICTION_THRESHOLD_INVALID, naming the field. */
export function evictionSettings(c: EvictionConfig): EvictionSettings {
  if (c.kernelMemcgNotification) {
    throw new OrchError(EVICTION_MEMCG_NOTIFICATION_UNSUPPORTED, 'invalid', `kernelMemcgNotification: ${MEMCG_NOTIFICATION_REFUSAL}`, { subject: 'kernelMemcgNotification' });
  }
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
