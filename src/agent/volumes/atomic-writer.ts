/**
 * The atomic writer of configMap, secret, projected and downwardAPI volumes (upstream's
 * AtomicWriter, written anew). A reader in a container sees either the old or the new set of
 * files, never a mix:
 *
 *   <dir>/..2024_05_01_12_00_00.Ab12Cd/   the payload, written in full first (hidden: `..` names are reserved)
 *   <dir>/..data -> ..2024_05_01_12_00_00.Ab12Cd   swapped in one rename(2) of a temporary link `..data_tmp`
 *   <dir>/<top-level entry> -> ..data/<top-level entry>   what users open (one link per top-level name)
 *
 * After the swap, links of top-level entries no longer in the payload and the previous
 * timestamped directory are removed. Nothing is written when every file already has the
 * payload's content and mode. Calls for one directory must be serialized by the caller.
 *
 * Deciding "nothing to write" reads every file back and compares it with the payload, as
 * upstream's writer does on each sync of the pod. With a `cache` (one per pod, kept by the
 * volume manager) the writer remembers what it last wrote or found in place: the payload, the
 * `..data` target and each file's inode, size and ctime (which any write, chmod or chown moves).
 * When the next payload is the same, a readlink and one stat per file through its user-visible
 * path stand for the read back (synchronous: local calls on the node's tmpfs or disk); anything
 * different falls back to the full comparison.
 */
import { Buffer } from 'node:buffer';
import { readlinkSync, statSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';

import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import { VOLUME_INVALID, VOLUME_WRITE_FAILED } from './types.js';
import { compareKeys } from '../../api/order.js';
import { quoteValue } from '../../api/quote.js';

export const DATA_DIR_NAME = '..data';
const DATA_TMP_NAME = '..data_tmp';
const MAX_PATH_LENGTH = 4096;
const MAX_NAME_LENGTH = 255;
const PAYLOAD_DIR_MODE = 0o755;
/** fsGroup, as upstream's volume ownership for read-only volumes: the group may read, and enter directories. */
const GROUP_READ = 0o440;
const GROUP_EXEC = 0o110;
const SETGID = 0o2000;

/** One file of a payload: its bytes and its permission bits. */
export interface FileProjection {
  readonly data: Buffer;
  readonly mode: number;
}

/** Relative path (as given by the volume's items or keys) → file. */
export type Payload = ReadonlyMap<string, FileProjection>;

/** One file as the writer left it: the payload's bytes, its final mode, and its identity on disk. */
export interface WrittenFile {
  readonly data: Buffer;
  readonly mode: number;
  readonly ino: bigint;
  readonly size: bigint;
  readonly ctimeNs: bigint;
}

/** What the writer last wrote or verified in one directory. */
export interface WrittenPayload {
  /** The target of `..data`. */
  readonly dataDir: string;
  readonly fsGroup: number | undefined;
  /** Normalized path → file. */
  readonly files: ReadonlyMap<string, WrittenFile>;
}

/** Volume directory → what was last written or verified there. */
export type AtomicWriterCache = Map<string, WrittenPayload>;

export interface AtomicWriteOptions {
  /** The volume's directory; it must exist. */
  readonly dir: string;
  readonly payload: Payload;
  /** The clock that names the timestamped directory. */
  readonly clock: Pick<Clock, 'now'>;
  /** The pod's fsGroup: every file and directory gets this group, g+r (and g+x, setgid on directories). */
  readonly fsGroup?: number;
  /** What the errors name, e.g. `volume "config"`. */
  readonly subject: string;
  /** Lets an unchanged payload be confirmed by stat instead of reading the files back (see the file comment). */
  readonly cache?: AtomicWriterCache;
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Throws `VOLUME_INVALID` unless `path` can be a file of a payload: not empty, relative, no `..`
 * component, not starting with `..` (reserved for the writer), components of at most 255 bytes
 * and the whole of at most 4096. Returns the path normalized (`a//b/./c` → `a/b/c`).
 */
export function checkPayloadPath(path: string, subject: string): string {
  const bad = (why: string): OrchError =>
    new OrchError(VOLUME_INVALID, 'invalid', `${subject}: invalid path ${quoteValue(path)}: ${why}`, { subject });
  if (path === '') throw bad('must not be empty');
  if (path.includes('\0')) throw bad('must not contain NUL');
  if (posix.isAbsolute(path)) throw bad('must be relative');
  if (Buffer.byteLength(path) > MAX_PATH_LENGTH) throw bad(`must not be longer than ${MAX_PATH_LENGTH} bytes`);
  const parts = path.split('/');
  if (parts.includes('..')) throw bad("must not contain '..'");
  if (parts.some((p) => Buffer.byteLength(p) > MAX_NAME_LENGTH)) throw bad(`a component must not be longer than ${MAX_NAME_LENGTH} bytes`);
  if (parts[0]?.startsWith('..') === true) throw bad("must not start with '..'");
  const normalized = posix.normalize(path).replace(/\/+$/, '');
  if (normalized === '.' || normalized === '') throw bad('names no file');
  return normalized;
}

/** Normalizes every path and rejects a path that is also a directory of another one (`a` and `a/b`). */
function normalizePayload(payload: Payload, subject: string): Map<string, FileProjection> {
  const result = new Map<string, FileProjection>();
  for (const [path, file] of payload) result.set(checkPayloadPath(path, subject), file);
  for (const path of result.keys()) {
    for (let parent = posix.dirname(path); parent !== '.'; parent = posix.dirname(parent)) {
      if (result.has(parent)) {
        throw new OrchError(VOLUME_INVALID, 'invalid', `${subject}: path ${quoteValue(parent)} is both a file and a directory of ${quoteValue(path)}`, { subject });
      }
    }
  }
  return result;
}

function topLevel(path: string): string {
  return path.split('/')[0] ?? path;
}

/** The mode a file of the payload ends up with on disk. */
function finalMode(mode: number, fsGroup: number | undefined): number {
  return (mode & 0o777) | (fsGroup === undefined ? 0 : GROUP_READ);
}

/** `..2006_01_02_15_04_05.` in UTC, the prefix of a timestamped directory (mkdtemp appends 6 random characters). */
export function timestampedPrefix(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `..${d.getUTCFullYear()}_${two(d.getUTCMonth() + 1)}_${two(d.getUTCDate())}_${two(d.getUTCHours())}_${two(d.getUTCMinutes())}_${two(d.getUTCSeconds())}.`;
}

/** The current payload directory's name (the target of `..data`), or undefined before the first write. */
async function currentDataDir(dir: string): Promise<string | undefined> {
  try {
    return await readlink(join(dir, DATA_DIR_NAME));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** Every regular file below `root`, relative path → content and permission bits. */
async function readTree(root: string): Promise<Map<string, FileProjection>> {
  const files = new Map<string, FileProjection>();
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const full = join(root, path);
        files.set(path, { data: await readFile(full), mode: (await stat(full)).mode & 0o777 });
      } else files.set(path, { data: Buffer.alloc(0), mode: -1 }); // never equal to a payload file
    }
  };
  await walk('');
  return files;
}

function unchanged(current: ReadonlyMap<string, FileProjection>, payload: ReadonlyMap<string, FileProjection>, fsGroup: number | undefined): boolean {
  if (current.size !== payload.size) return false;
  for (const [path, file] of payload) {
    const old = current.get(path);
    if (old?.mode !== finalMode(file.mode, fsGroup) || !old.data.equals(file.data)) return false;
  }
  return true;
}

/** True when `cached` holds this payload and the files on disk are still the ones it recorded. */
function stillWritten(dir: string, cached: WrittenPayload, payload: ReadonlyMap<string, FileProjection>, fsGroup: number | undefined): boolean {
  if (cached.fsGroup !== fsGroup || cached.files.size !== payload.size) return false;
  for (const [path, file] of payload) {
    const known = cached.files.get(path);
    if (known?.mode !== finalMode(file.mode, fsGroup) || !known.data.equals(file.data)) return false;
  }
  try {
    if (readlinkSync(join(dir, DATA_DIR_NAME)) !== cached.dataDir) return false;
  } catch {
    return false; // gone or not a link: the full path finds out what
  }
  for (const [path, known] of cached.files) {
    const st = statSync(join(dir, path), { bigint: true, throwIfNoEntry: false });
    if (st?.ino !== known.ino || st.size !== known.size || st.ctimeNs !== known.ctimeNs) return false;
  }
  return true;
}

/** Records the payload as it now is on disk (each file stat'ed through its user-visible path). */
function remember(cache: AtomicWriterCache, dir: string, dataDir: string, payload: ReadonlyMap<string, FileProjection>, fsGroup: number | undefined): void {
  const files = new Map<string, WrittenFile>();
  for (const [path, file] of payload) {
    const st = statSync(join(dir, path), { bigint: true });
    files.set(path, { data: file.data, mode: finalMode(file.mode, fsGroup), ino: st.ino, size: st.size, ctimeNs: st.ctimeNs });
  }
  cache.set(dir, { dataDir, fsGroup, files });
}

async function applyGroup(path: string, fsGroup: number, isDir: boolean): Promise<void> {
  await chown(path, -1, fsGroup);
  if (isDir) await chmod(path, ((await stat(path)).mode & 0o7777) | GROUP_READ | GROUP_EXEC | SETGID);
}

/** Writes the payload into a new directory below `dir`; returns its name. */
async function writePayloadDir(dir: string, payload: ReadonlyMap<string, FileProjection>, now: number, fsGroup: number | undefined): Promise<string> {
  const tsDir = await mkdtemp(join(dir, timestampedPrefix(now)));
  await chmod(tsDir, PAYLOAD_DIR_MODE);
  if (fsGroup !== undefined) await applyGroup(tsDir, fsGroup, true);
  for (const [path, file] of [...payload].sort(compareKeys)) {
    const full = join(tsDir, path);
    const parent = dirname(full);
    if (parent !== tsDir) {
      const made = await mkdir(parent, { recursive: true, mode: PAYLOAD_DIR_MODE });
      if (made !== undefined && fsGroup !== undefined) {
        for (let d = parent; d.length >= made.length && d !== tsDir; d = dirname(d)) await applyGroup(d, fsGroup, true);
      }
    }
    await writeFile(full, file.data, { mode: file.mode & 0o777 });
    if (fsGroup !== undefined) await chown(full, -1, fsGroup);
    await chmod(full, finalMode(file.mode, fsGroup)); // the umask must not narrow the mode
  }
  return basename(tsDir);
}

/** Makes `<dir>/<name>` → `..data/<name>` for every top-level name that has no entry yet. */
async function linkUserVisible(dir: string, names: ReadonlySet<string>): Promise<void> {
  for (const name of names) {
    const link = join(dir, name);
    try {
      await lstat(link);
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
      await symlink(join(DATA_DIR_NAME, name), link);
    }
  }
}

async function swapDataLink(dir: string, target: string): Promise<void> {
  const tmp = join(dir, DATA_TMP_NAME);
  await rm(tmp, { force: true });
  await symlink(target, tmp);
  await rename(tmp, join(dir, DATA_DIR_NAME));
}

/** Removes every hidden payload directory but `keep` (the previous one, and any left by a crash). */
async function removeStaleDirs(dir: string, keep: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('..') && entry.isDirectory() && entry.name !== keep) await rm(join(dir, entry.name), { recursive: true, force: true });
  }
}

/**
 * Makes the files below `options.dir` exactly the payload (see the file comment). Returns true
 * when it wrote, false when everything was already up to date (the user-visible links are
 * still checked). Throws `VOLUME_INVALID` for a bad path and `VOLUME_WRITE_FAILED` when the
 * file system fails.
 */
export async function writeAtomically(options: AtomicWriteOptions): Promise<boolean> {
  const { dir, subject, fsGroup, cache } = options;
  const payload = normalizePayload(options.payload, subject);
  const names = new Set([...payload.keys()].map(topLevel));
  const cached = cache?.get(dir);
  if (cached !== undefined && stillWritten(dir, cached, payload, fsGroup)) return false;
  cache?.delete(dir);
  try {
    const oldName = await currentDataDir(dir);
    // A dangling ..data (its directory removed by hand) counts as no previous payload.
    const old = oldName === undefined ? undefined : await readTree(join(dir, oldName)).catch((err: unknown) => {
      if (errnoOf(err) === 'ENOENT') return undefined;
      throw err;
    });
    if (oldName !== undefined && old !== undefined && unchanged(old, payload, fsGroup)) {
      await linkUserVisible(dir, names);
      if (cache !== undefined) remember(cache, dir, oldName, payload, fsGroup);
      return false;
    }
    const newName = await writePayloadDir(dir, payload, options.clock.now(), fsGroup);
    if (fsGroup !== undefined) await applyGroup(dir, fsGroup, true);
    await swapDataLink(dir, newName);
    await linkUserVisible(dir, names);
    for (const name of new Set([...(old?.keys() ?? [])].map(topLevel))) {
      if (names.has(name)) continue;
      const link = join(dir, name);
      const st = await lstat(link).catch((err: unknown) => {
        if (errnoOf(err) === 'ENOENT') return undefined;
        throw err;
      });
      if (st?.isSymbolicLink() === true) await unlink(link);
    }
    await removeStaleDirs(dir, newName);
    if (cache !== undefined) remember(cache, dir, newName, payload, fsGroup);
    return true;
  } catch (err) {
    throw new OrchError(VOLUME_WRITE_FAILED, 'internal', `${subject}: cannot write its files in ${dir}: ${err instanceof Error ? err.message : String(err)}`, {
      subject,
      cause: err,
    });
  }
}
