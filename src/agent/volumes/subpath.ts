/**
 * subPath and subPathExpr of a volume mount: the directory inside the volume that is mounted
 * instead of the volume's root.
 *
 * As upstream, a missing subPath is created as a directory (with the volume root's mode) before
 * the container starts, so a later auto-creation by the runtime cannot land somewhere else. Every
 * component is walked from the volume root: an existing symlink is resolved and must stay inside
 * the volume (its real path), a missing component is created. The returned path is the fully
 * resolved real path, which the runtime bind-mounts.
 *
 * Divergence: upstream closes the remaining time-of-check/time-of-use window by bind-mounting
 * the checked directory under `<podDir>/volume-subpaths/` first; here the resolved path goes to
 * the runtime directly.
 */
import { chmod, lstat, mkdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';

import { OrchError } from '../../api/errors.js';
import { isAtOrBelow } from './mountinfo.js';
import { VOLUME_SUBPATH_INVALID } from './types.js';
import { quoteValue } from '../../api/quote.js';

export interface SubPathSubject {
  readonly container: string;
  readonly volume: string;
  readonly subPath: string;
}

function invalid(s: SubPathSubject, why: string, cause?: unknown): OrchError {
  return new OrchError(
    VOLUME_SUBPATH_INVALID,
    'invalid',
    `container "${s.container}", volume "${s.volume}": subPath ${quoteValue(s.subPath)} ${why}`,
    cause === undefined ? { subject: `container ${s.container} volume ${s.volume}` } : { subject: `container ${s.container} volume ${s.volume}`, cause },
  );
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Expands `$(NAME)` in a subPathExpr from `env` (the container's resolved environment); `$$` is a
 * literal `$`; a reference to an unknown name is kept as written, as upstream's expansion does.
 */
export function expandSubPathExpr(expr: string, env: ReadonlyMap<string, string>): string {
  return expr.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (name === undefined) return '$';
    return env.get(name) ?? match;
  });
}

/**
 * Resolves `subject.subPath` inside `volumeRoot`, creating missing directories. Throws OrchError
 * `VOLUME_SUBPATH_INVALID` (naming the container, volume and subPath) for an absolute path, a
 * `..` component, or a symlink leading outside the volume.
 */
export async function resolveSubPath(volumeRoot: string, subject: SubPathSubject): Promise<string> {
  const { subPath } = subject;
  if (isAbsolute(subPath)) throw invalid(subject, 'must be a relative path');
  const parts = subPath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw invalid(subject, "must not contain '..'");
  let root: string;
  try {
    root = await realpath(volumeRoot);
  } catch (err) {
    throw invalid(subject, `cannot be resolved: the volume path ${volumeRoot} is not accessible`, err);
  }
  const mode = (await stat(root)).mode & 0o7777;
  let current = root;
  for (const part of parts) {
    const next = join(current, part);
    let isLink: boolean;
    try {
      isLink = (await lstat(next)).isSymbolicLink();
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw invalid(subject, `cannot be checked at ${next}`, err);
      await makeDir(next, mode, subject);
      current = next;
      continue;
    }
    if (isLink) {
      let target: string;
      try {
        target = await realpath(next);
      } catch (err) {
        throw invalid(subject, `has a symlink ${next} that cannot be resolved`, err);
      }
      if (!isAtOrBelow(target, root)) throw invalid(subject, `has a symlink ${next} pointing outside the volume (to ${target})`);
      current = target;
    } else {
      current = next;
    }
  }
  // Once more on the whole path: a component may have changed while the walk created others.
  let resolved: string;
  try {
    resolved = await realpath(current);
  } catch (err) {
    throw invalid(subject, `cannot be resolved at ${current}`, err);
  }
  if (!isAtOrBelow(resolved, root)) throw invalid(subject, `resolves outside the volume (to ${resolved})`);
  return resolved;
}

async function makeDir(path: string, mode: number, subject: SubPathSubject): Promise<void> {
  try {
    await mkdir(path, { mode });
    // The umask must not narrow the mode the volume root has (upstream does the same).
    await chmod(path, mode);
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return;
    throw invalid(subject, `cannot be created at ${path}`, err);
  }
}
