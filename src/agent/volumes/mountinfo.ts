/**
 * Reading /proc/self/mountinfo: which filesystems are mounted where. The volume manager uses it
 * to keep tmpfs mounts idempotent and to find every mount below a pod directory (also after a
 * crash); the container manager uses it to find the cgroup hierarchies.
 *
 * Format (proc(5)): `id parent major:minor root mount-point options [optional...] - fstype source
 * super-options`, with space, tab, newline and backslash in paths escaped as octal (`\040`).
 */
import { readFile } from 'node:fs/promises';
import { sep } from 'node:path';

import { OrchError } from '../../api/errors.js';
import { quoteValue } from '../../api/quote.js';

export const MOUNTINFO_PATH = '/proc/self/mountinfo';
/** A line of mountinfo that does not follow the format. */
export const VOLUME_MOUNTINFO_INVALID = 'VOLUME_MOUNTINFO_INVALID';

export interface MountInfoEntry {
  readonly id: number;
  readonly parentId: number;
  /** `major:minor` of the filesystem: one value per superblock (a cgroup hierarchy, a tmpfs). */
  readonly device: string;
  /** The directory of the filesystem that is mounted (not `/` for bind mounts). */
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly source: string;
  /** Per-superblock options, e.g. `rw,memory` for a cgroup v1 hierarchy. */
  readonly superOptions: string;
}

function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Parses mountinfo text. Throws `VOLUME_MOUNTINFO_INVALID` (internal) on a malformed line. */
export function parseMountInfo(text: string, subject = MOUNTINFO_PATH): MountInfoEntry[] {
  const entries: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    const [id, parentId, device, root, mountPoint] = fields;
    const [fsType, source, superOptions] = dash < 0 ? [] : fields.slice(dash + 1);
    if (
      id === undefined || parentId === undefined || device === undefined || root === undefined ||
      mountPoint === undefined || fsType === undefined || source === undefined || superOptions === undefined
    ) {
      throw new OrchError(VOLUME_MOUNTINFO_INVALID, 'internal', `malformed mountinfo line: ${quoteValue(line)}`, { subject });
    }
    entries.push({
      id: Number(id),
      parentId: Number(parentId),
      device,
      root: unescapeOctal(root),
      mountPoint: unescapeOctal(mountPoint),
      fsType,
      source: unescapeOctal(source),
      superOptions,
    });
  }
  return entries;
}

/** Reads and parses mountinfo (default /proc/self/mountinfo). Does not block on anything but the read. */
export async function readMountInfo(path: string = MOUNTINFO_PATH): Promise<MountInfoEntry[]> {
  return parseMountInfo(await readFile(path, 'utf8'), path);
}

function escapeOctal(text: string): string {
  return text.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The mounts at or below `dir` (absolute and normalized): reads mountinfo and parses only the
 * lines that name `dir` (as mountinfo escapes it), not the node's whole table of container
 * root filesystems and sandbox mounts.
 */
export async function readMountInfoBelow(dir: string, path: string = MOUNTINFO_PATH): Promise<MountInfoEntry[]> {
  const text = await readFile(path, 'utf8');
  const escaped = escapeOctal(dir);
  const lines = text.split('\n').filter((line) => line.includes(escaped));
  return parseMountInfo(lines.join('\n'), path).filter((m) => isAtOrBelow(m.mountPoint, dir));
}

/** True when `path` is `dir` itself or lies below it (both absolute and normalized). */
export function isAtOrBelow(path: string, dir: string): boolean {
  if (path === dir) return true;
  const prefix = dir.endsWith(sep) ? dir : dir + sep;
  return path.startsWith(prefix);
}
