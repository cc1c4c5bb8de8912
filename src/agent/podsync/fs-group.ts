/**
 * fsGroup ownership of a pod's emptyDir volumes (upstream: volume.SetVolumeOwnership, applied
 * when the volume is set up): every file and directory below the volume gets the group
 * fsGroup; files gain group read-write (0660), directories also group search and setgid
 * (02070 added), so that files created later inherit the group. Symbolic links are re-grouped
 * but never followed or chmod-ed.
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

const RW = 0o660;
const EXEC = 0o110;
const SETGID = 0o2000;

/**
 * Re-applies fsGroup to the volume's own directory only (cheap: a stat, and a chown or chmod
 * when something reset them). Resolves to true when it had to change something.
 */
export async function ensureVolumeRootOwnership(dir: string, fsGroup: number): Promise<boolean> {
  const info = await lstat(dir);
  const wanted = (info.mode & 0o7777) | RW | EXEC | SETGID;
  if (info.gid === fsGroup && (info.mode & 0o7777) === wanted) return false;
  await lchown(dir, -1, fsGroup);
  await chmod(dir, wanted);
  return true;
}

/** Applies fsGroup to `dir` and everything below it. Rejects with the file system's error. */
export async function setVolumeOwnership(dir: string, fsGroup: number): Promise<void> {
  const info = await lstat(dir);
  await lchown(dir, -1, fsGroup);
  if (info.isSymbolicLink()) return;
  const mode = info.mode & 0o7777;
  if (!info.isDirectory()) {
    await chmod(dir, mode | RW);
    return;
  }
  await chmod(dir, mode | RW | EXEC | SETGID);
  for (const entry of await readdir(dir)) await setVolumeOwnership(path.join(dir, entry), fsGroup);
}
