/**
 * A pod's fsGroup applied to a mounted volume, as upstream's SetVolumeOwnership
 * (pkg/volume/volume_linux.go), for the plugins that own their files' permissions (CSI by the
 * driver's fsGroupPolicy, FlexVolume by its `fsGroup` capability):
 *
 * - every file and directory below the volume (symlinks are not followed; the walk does not stop
 *   at mount points) gets the group (lchown, owner unchanged) and the group's bits added to its
 *   mode: rw (r only for a read-only volume), and x plus setgid on directories; symlinks get the
 *   group but no chmod (that would change their target);
 * - with fsGroupChangePolicy `OnRootMismatch` nothing is done when the volume's root already has
 *   the group, is a directory with setgid and has at least those bits (upstream's
 *   requiresPermissionChange); `Always` (the default) walks every time it is applied.
 *
 * A file whose group or mode cannot be changed is logged and skipped, as upstream; only a root
 * that cannot be read fails.
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { messageOf } from '../../api/errors.js';

const RW = 0o660;
const RO = 0o440;
const EXEC = 0o110;
const SETGID = 0o2000;

export interface OwnershipOptions {
  readonly fsGroup: number;
  /** The pod's fsGroupChangePolicy: `OnRootMismatch` or `Always` (undefined: Always). */
  readonly changePolicy?: string;
  readonly readOnly: boolean;
  /** Told about each file that could not be changed (upstream logs and goes on). */
  readonly onError?: (path: string, err: string) => void;
}

/** True when the root lacks the group, setgid or the group's bits (OnRootMismatch walks then). */
export async function requiresPermissionChange(dir: string, fsGroup: number, readOnly: boolean): Promise<boolean> {
  let st;
  try {
    st = await lstat(dir);
  } catch {
    return true;
  }
  if (st.gid !== fsGroup || !st.isDirectory()) return true;
  const wanted = (readOnly ? RO : RW) | EXEC;
  return (st.mode & wanted) !== wanted || (st.mode & SETGID) === 0;
}

async function changeOne(path: string, o: OwnershipOptions): Promise<boolean> {
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    o.onError?.(path, messageOf(err));
    return false;
  }
  try {
    await lchown(path, -1, o.fsGroup);
  } catch (err) {
    o.onError?.(path, `lchown: ${messageOf(err)}`);
  }
  if (st.isSymbolicLink()) return false;
  let mask = o.readOnly ? RO : RW;
  if (st.isDirectory()) mask |= SETGID | EXEC;
  try {
    await chmod(path, (st.mode & 0o7777) | mask);
  } catch (err) {
    o.onError?.(path, `chmod: ${messageOf(err)}`);
  }
  return st.isDirectory();
}

async function walk(path: string, o: OwnershipOptions): Promise<void> {
  if (!(await changeOne(path, o))) return;
  let names: string[];
  try {
    names = await readdir(path);
  } catch (err) {
    o.onError?.(path, messageOf(err));
    return;
  }
  for (const name of names) await walk(join(path, name), o);
}

/** Applies the fsGroup to `dir` and everything below it; returns false when OnRootMismatch found nothing to do. Throws when `dir` cannot be read. */
export async function setVolumeOwnership(dir: string, o: OwnershipOptions): Promise<boolean> {
  await lstat(dir);
  if (o.changePolicy === 'OnRootMismatch' && !(await requiresPermissionChange(dir, o.fsGroup, o.readOnly))) return false;
  await walk(dir, o);
  return true;
}
