/**
 * Where secret and projected volumes keep their files: one tmpfs for the whole node, mounted at
 * `<rootDir>/memory-volumes` the first time a pod needs it, with a directory per pod and volume
 * (`<podUID>/<pluginDir>/<volumeName>`). The volume's directory below the pod
 * (`<rootDir>/pods/<uid>/volumes/<pluginDir>/<name>`) is a symlink to it, so the layout every
 * other part reads stays upstream's, and containerd resolves the link when it bind-mounts the
 * volume. Upstream mounts a tmpfs per volume: the files are never written to disk, and that is
 * what this keeps, without a mount(8) and an umount(8) process per pod (see docs/storage.md,
 * "Secret and projected volumes").
 *
 * A volume directory an earlier version left as a tmpfs mount point of its own is kept as it is
 * (cleanup unmounts it as before).
 */
import { lstatSync, readdirSync, rmdirSync, statfsSync, symlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { mountTmpfs } from './mounter.js';
import { readMountInfoBelow } from './mountinfo.js';
import { checkPathComponent } from './paths.js';
import { VOLUME_CLEANUP_FAILED, VOLUME_MOUNT_FAILED } from './types.js';

/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** Only root reaches below it; containers see their own volume through a bind mount. */
const ROOT_MODE = 0o750;

export const MEMORY_VOLUMES_DIR = 'memory-volumes';

export interface MemoryVolumesOptions {
  readonly rootDir: string;
  readonly logger: Logger;
  readonly mountInfoPath: string;
  /** mkdir -p with the exact mode (the manager's). */
  readonly makeDir: (dir: string, mode: number, subject: string) => void;
}

export interface MemoryVolumes {
  /**
   * Makes `volumeDir` (the volume's directory below the pod) a directory on a tmpfs: a link to
   * `<rootDir>/memory-volumes/<uid>/<pluginDir>/<name>` (made with `mode`), mounting the node's
   * tmpfs first when it is not. Throws `VOLUME_MOUNT_FAILED` naming the path.
   */
  prepare(uid: string, pluginDir: string, name: string, volumeDir: string, mode: number): Promise<void>;
  /** Removes the pod's directory on the node's tmpfs (nothing when there is none). Throws `VOLUME_CLEANUP_FAILED`. */
  removePod(uid: string): Promise<void>;
  /** The pods that have a directory on the node's tmpfs. */
  listPods(): string[];
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

export function createMemoryVolumes(o: MemoryVolumesOptions): MemoryVolumes {
  const root = join(o.rootDir, MEMORY_VOLUMES_DIR);
  let mounted: Promise<void> | undefined;

  async function mountOnce(): Promise<void> {
    o.makeDir(root, ROOT_MODE, `directory ${root}`);
    const existing = await readMountInfoBelow(root, o.mountInfoPath);
    if (existing.some((m) => m.mountPoint === root && m.fsType === 'tmpfs')) return;
    await mountTmpfs(root, undefined, `directory ${root}`, [`mode=${ROOT_MODE.toString(8).padStart(4, '0')}`]);
    o.logger.v(2, 'mounted the node tmpfs for secret and projected volumes', { path: root });
  }

  function ensureMounted(): Promise<void> {
    mounted ??= mountOnce().catch((err: unknown) => {
      mounted = undefined; // the next volume tries again
      throw err;
    });
    return mounted;
  }

  return {
    async prepare(uid, pluginDir, name, volumeDir, mode) {
      await ensureMounted();
      const target = join(root, uid, pluginDir, name);
      const subject = `volume ${name}`;
      const found = lstatSync(volumeDir, { throwIfNoEntry: false });
      if (found?.isDirectory() === true) {
        // An earlier version's tmpfs of its own: keep it.
        if (statfsSync(volumeDir).type === TMPFS_MAGIC) return;
        // A directory on disk (a mount that failed halfway): never written to, so empty.
        try {
          rmdirSync(volumeDir);
        } catch (err) {
          throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `cannot replace ${volumeDir} (a directory not on a tmpfs) by a link to ${target}`, { subject, cause: err });
        }
      } else if (found !== undefined && !found.isSymbolicLink()) {
        throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `${volumeDir} is neither a directory nor a link to ${target}`, { subject });
      }
      // After a reboot the link is there and its target is gone with the old tmpfs: made again.
      o.makeDir(join(root, uid), ROOT_MODE, `volumes of pod ${uid}`);
      o.makeDir(target, mode, subject);
      if (found?.isSymbolicLink() === true) return;
      o.makeDir(dirname(volumeDir), ROOT_MODE, `volumes of pod ${uid}`);
      try {
        symlinkSync(target, volumeDir);
      } catch (err) {
        throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `cannot link ${volumeDir} to ${target}`, { subject, cause: err });
      }
    },

    async removePod(uid) {
      checkPathComponent(uid, 'pod UID');
      try {
        await rm(join(root, uid), { recursive: true, force: true });
      } catch (err) {
        throw new OrchError(VOLUME_CLEANUP_FAILED, 'internal', `cannot remove ${join(root, uid)}`, { subject: `pod ${uid}`, cause: err });
      }
    },

    listPods() {
      try {
        return readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') return [];
        throw err;
      }
    },
  };
}
