/**
 * hostPath volumes: the `type` check of upstream's hostPath plugin, done when the volume is set
 * up. Paths are followed through symlinks (stat, not lstat), as upstream. A hostPath is never
 * created below the pod directory and never deleted by this module.
 *
 * | type              | missing path                          | existing path must be |
 * |-------------------|---------------------------------------|-----------------------|
 * | '' (unset)        | no check                              | anything              |
 * | DirectoryOrCreate | mkdir -p, mode 0755 (less the umask)  | a directory           |
 * | Directory         | error                                 | a directory           |
 * | FileOrCreate      | empty file, mode 0644; the parent     | a regular file        |
 * |                   | directory must exist (not created)    |                       |
 * | File              | error                                 | a regular file        |
 * | Socket            | error                                 | a unix socket         |
 * | CharDevice        | error                                 | a character device    |
 * | BlockDevice       | error                                 | a block device        |
 */
import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { HostPathVolumeSource } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { VOLUME_HOSTPATH_TYPE, VOLUME_INVALID, VOLUME_MOUNT_FAILED } from './types.js';
import { quoteValue } from '../../api/quote.js';

export const HOST_PATH_TYPES = [
  '', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice',
] as const;
export type HostPathType = (typeof HOST_PATH_TYPES)[number];

function isHostPathType(value: string): value is HostPathType {
  return (HOST_PATH_TYPES as readonly string[]).includes(value);
}

/** What a path is, in the words of the hostPath types. */
export function describeFileType(st: Stats | undefined): string {
  if (st === undefined) return 'nothing (the path does not exist)';
  if (st.isDirectory()) return 'Directory';
  if (st.isFile()) return 'File';
  if (st.isSocket()) return 'Socket';
  if (st.isCharacterDevice()) return 'CharDevice';
  if (st.isBlockDevice()) return 'BlockDevice';
  if (st.isFIFO()) return 'FIFO';
  return 'an unknown file type';
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

async function statOrUndefined(path: string, volumeName: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `hostPath volume "${volumeName}": cannot stat ${path}`, {
      subject: `volume ${volumeName}`,
      cause: err,
    });
  }
}

function mismatch(volumeName: string, path: string, expected: HostPathType, found: string, extra = ''): OrchError {
  return new OrchError(
    VOLUME_HOSTPATH_TYPE,
    'invalid',
    `hostPath volume "${volumeName}": type check failed for ${path}: expected ${expected}, found ${found}${extra}`,
    { subject: `volume ${volumeName}` },
  );
}

const MATCHES: Readonly<Record<Exclude<HostPathType, ''>, (st: Stats) => boolean>> = {
  DirectoryOrCreate: (st) => st.isDirectory(),
  Directory: (st) => st.isDirectory(),
  FileOrCreate: (st) => st.isFile(),
  File: (st) => st.isFile(),
  Socket: (st) => st.isSocket(),
  CharDevice: (st) => st.isCharacterDevice(),
  BlockDevice: (st) => st.isBlockDevice(),
};

async function createMissing(volumeName: string, path: string, type: HostPathType): Promise<void> {
  try {
    if (type === 'DirectoryOrCreate') {
      await mkdir(path, { recursive: true, mode: 0o755 });
    } else {
      // O_CREAT without O_EXCL, as upstream: losing a race with another creator is fine.
      const handle = await open(path, constants.O_CREAT | constants.O_RDONLY, 0o644);
      await handle.close();
    }
  } catch (err) {
    const code = errnoOf(err);
    if (type === 'FileOrCreate' && code === 'ENOENT') {
      throw mismatch(volumeName, path, type, 'nothing', `, and its parent directory ${dirname(path)} does not exist (it is not created)`);
    }
    if (code === 'EEXIST' || code === 'ENOTDIR') return; // something appeared meanwhile: the check below reports it
    throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `hostPath volume "${volumeName}": cannot create ${path} (${type})`, {
      subject: `volume ${volumeName}`,
      cause: err,
    });
  }
}

/**
 * Checks (and for the *OrCreate types creates) a hostPath volume's path. Throws OrchError
 * `VOLUME_HOSTPATH_TYPE` (invalid) on a mismatch, naming the volume, the path, the expected and
 * the found type; `VOLUME_INVALID` for an empty path, a `..` component or an unknown type.
 */
export async function checkHostPath(volumeName: string, source: HostPathVolumeSource): Promise<void> {
  const { path } = source;
  const type = source.type ?? '';
  const subject = `volume ${volumeName}`;
  if (path === '' || path.split('/').includes('..')) {
    throw new OrchError(VOLUME_INVALID, 'invalid', `hostPath volume "${volumeName}": path ${quoteValue(path)} must not be empty or contain '..'`, { subject });
  }
  if (!isHostPathType(type)) {
    throw new OrchError(
      VOLUME_INVALID,
      'invalid',
      `hostPath volume "${volumeName}": unknown type ${quoteValue(type)}; use one of ${HOST_PATH_TYPES.filter((t) => t !== '').join(', ')} or ""`,
      { subject },
    );
  }
  if (type === '') return;
  let st = await statOrUndefined(path, volumeName);
  if (st === undefined && (type === 'DirectoryOrCreate' || type === 'FileOrCreate')) {
    await createMissing(volumeName, path, type);
    st = await statOrUndefined(path, volumeName);
  }
  if (st === undefined || !MATCHES[type](st)) throw mismatch(volumeName, path, type, describeFileType(st));
}
