/**
 * The mounted cgroup hierarchies: one directory per cgroup v1 hierarchy (cpu, memory, pids,
 * name=systemd, ...; co-mounted controllers are one hierarchy) plus the cgroup2 (unified)
 * hierarchy when mounted, e.g. at /sys/fs/cgroup/unified on a hybrid host. A hierarchy mounted
 * twice (same superblock) is listed once, at its first mount point.
 */
import { OrchError } from '../../api/errors.js';
import { readMountInfo, type MountInfoEntry } from '../volumes/index.js';

/** No cgroup hierarchy is mounted. */
export const CM_NO_CGROUPS = 'CM_NO_CGROUPS';

export interface CgroupHierarchy {
  /** The mount point: cgroup paths are joined below it. */
  readonly path: string;
  readonly version: 1 | 2;
  /** The controllers of a v1 hierarchy (`cpu`, `memory`, `name=systemd`, ...) from its mount options; [] for v2. */
  readonly controllers: readonly string[];
}

const MOUNT_FLAGS = new Set(['rw', 'ro', 'relatime', 'noatime', 'nosuid', 'nodev', 'noexec', 'clone_children', 'noprefix', 'xattr', 'nsdelegate', 'memory_recursiveprot']);

/** The hierarchies in mount order; empty when there are none. */
export function cgroupHierarchies(mounts: readonly MountInfoEntry[]): CgroupHierarchy[] {
  const seen = new Set<string>();
  const result: CgroupHierarchy[] = [];
  for (const m of mounts) {
    if (m.fsType !== 'cgroup' && m.fsType !== 'cgroup2') continue;
    if (seen.has(m.device)) continue;
    seen.add(m.device);
    const controllers = m.fsType === 'cgroup'
      ? m.superOptions.split(',').filter((o) => o !== '' && !MOUNT_FLAGS.has(o) && !o.startsWith('release_agent='))
      : [];
    result.push({ path: m.mountPoint, version: m.fsType === 'cgroup' ? 1 : 2, controllers });
  }
  return result;
}

/** Reads mountinfo and returns the hierarchies. Throws `CM_NO_CGROUPS` (unavailable) when none is mounted. */
export async function discoverCgroupHierarchies(mountInfoPath?: string): Promise<CgroupHierarchy[]> {
  const found = cgroupHierarchies(await readMountInfo(mountInfoPath));
  if (found.length === 0) {
    throw new OrchError(CM_NO_CGROUPS, 'unavailable', 'no cgroup hierarchy is mounted (looked for cgroup and cgroup2 in mountinfo)', {
      subject: mountInfoPath ?? '/proc/self/mountinfo',
    });
  }
  return found;
}
