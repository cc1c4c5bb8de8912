/**
 * Scanning `--pod-manifest-path`: a single file, or a directory whose regular files (not
 * those named with a leading '.', not subdirectories) are each a manifest, taken in name
 * order. Gives the static pods and the rejected manifests with their problems. Does not
 * watch or log. A full scan of a directory (lookAtPath, scanManifestPath) lists it, then
 * stats and reads its files concurrently, FILE_CONCURRENCY at a time; lookAtFiles does the
 * same for some of its files only (manifest-dir.ts, for the files that notifications name).
 *
 * It remembers one thing: each manifest's outcome (its pod, or its problems), by file and node
 * name, under the file's identity and change stamps (device, inode, size, mtime, ctime from the
 * stat a scan makes anyway). A file whose stamps are unchanged is neither read nor parsed again.
 * Outcomes are shared (between this memory and a directory's entries), never handed out:
 * assembleDirectory and resultOf give copies (callers may change what they get). Entries of
 * files no longer found are dropped. A file that was being written while it was read is read
 * again at the next scan: its stamps then differ from those recorded before the read. A file
 * changed less than RACY_WINDOW_MS before its stat is not remembered: file times are coarse (a
 * clock tick), so a second same-size write within the same tick would leave the stamps as they
 * were.
 */
import type { Stats } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { Semaphore } from '../../api/semaphore.js';
import { podFullName, type NodePod } from '../../api/pod/index.js';
import { DEFAULT_YAML_LIMITS, formatBytes } from '../../api/yaml-limits.js';
import { decodeManifest } from './manifest.js';
import { prepareStaticPod } from './static.js';
import { compareCodeUnits, compareKeys } from '../../api/order.js';
import { quoteValue } from '../../api/quote.js';

export interface ScanContext {
  readonly nodeName: string;
  /** The time of the first-seen annotation of the pods read. */
  readonly clock: Pick<Clock, 'now'>;
  /**
   * The host's clock (ms) that file times are compared with, to not remember files changed just
   * now (default Date.now): the kernel stamps the files from it, so no other clock will do.
   */
  readonly fileClockMs?: () => number;
  /** The remembered outcomes of this source's manifests (createManifestCache); none: every file is read. */
  readonly cache?: ManifestCache;
}

export interface RejectedManifest {
  readonly file: string;
  /** Each line names the file. */
  readonly problems: readonly string[];
}

export type ScanResult =
  /** The path does not exist (or a parent is not a directory). */
  | { readonly kind: 'missing' }
  /** The path could not be read for another reason (permissions, I/O); the message says why. */
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'file' | 'dir'; readonly pods: readonly NodePod[]; readonly rejected: readonly RejectedManifest[] };

/** A manifest's pod, or the problems that reject it. Shared: never handed out as is (see the header). */
export type ManifestOutcome = { readonly pod: NodePod } | { readonly problems: readonly string[] };

/** The outcomes of the manifests of a directory, by file path (`join(dir, name)`). */
export type DirectoryEntries = Map<string, ManifestOutcome>;

/** A full scan of the path: like ScanResult, but with the outcomes not yet assembled (resultOf). */
export type PathLook =
  | { readonly kind: 'missing' }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'file'; readonly file: string; readonly outcome: ManifestOutcome }
  | { readonly kind: 'dir'; readonly entries: DirectoryEntries };

export interface FileLook {
  /** Undefined: not a manifest of the directory (gone, a dangling link, a subdirectory). */
  readonly outcome: ManifestOutcome | undefined;
  /** The file was read less than RACY_WINDOW_MS after its last change: a writer may not be done with it. */
  readonly justChanged: boolean;
}

export interface CachedManifest {
  readonly stamp: string;
  readonly nodeName: string;
  readonly outcome: ManifestOutcome;
}

/** Outcomes of the manifests read, by file path as scanned (see the header); one per file source. */
export type ManifestCache = Map<string, CachedManifest>;

export function createManifestCache(): ManifestCache {
  return new Map<string, CachedManifest>();
}

/** How long after a file's last change its outcome is still read again at each scan. */
export const RACY_WINDOW_MS = 100;

/**
 * Files stat'ed and read at once in a scan. libuv runs file operations on a pool of 4 threads
 * by default: a few more than that in flight keep the pool busy while the main thread parses
 * what was read, and a bound keeps a large directory from queueing all its files ahead of the
 * pool's other users.
 */
export const FILE_CONCURRENCY = 16;

const NOT_A_MANIFEST: FileLook = { outcome: undefined, justChanged: false };

/** What changes when a file is replaced or written (the inode and ctime catch a same-size rewrite within one mtime tick). */
function stampOf(info: Stats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

/** Drops the entries of files directly in `dir` that are not in `keep`. */
function forgetMissing(cache: ManifestCache | undefined, dir: string, keep: ReadonlySet<string> = new Set()): void {
  if (cache === undefined) return;
  const absolute = resolve(dir);
  for (const file of cache.keys()) {
    if (!keep.has(file) && dirname(resolve(file)) === absolute) cache.delete(file);
  }
}

/** A copy to hand out: outcomes are shared with the cache and the directory's entries. */
function copyOutcome(outcome: ManifestOutcome): ManifestOutcome {
  return 'pod' in outcome ? { pod: structuredClone(outcome.pod) } : outcome;
}

/** The file's outcome: remembered when its stamps did not change since it was read, else read now (and remembered). */
async function manifestOutcome(file: string, info: Stats, context: ScanContext): Promise<FileLook> {
  const stamp = stampOf(info);
  const cache = context.cache;
  const cached = cache?.get(file);
  if (cached !== undefined && cached.stamp === stamp && cached.nodeName === context.nodeName) return { outcome: cached.outcome, justChanged: false };
  const changedMsAgo = (context.fileClockMs ?? Date.now)() - Math.max(info.mtimeMs, info.ctimeMs);
  const outcome = await readManifest(file, info.size, context);
  if (outcome === 'gone' || changedMsAgo < RACY_WINDOW_MS) {
    cache?.delete(file);
    // A change time ahead of the clock (skew) says nothing about a writer at work.
    return outcome === 'gone' ? NOT_A_MANIFEST : { outcome, justChanged: changedMsAgo >= 0 };
  }
  cache?.set(file, { stamp, nodeName: context.nodeName, outcome });
  return { outcome, justChanged: false };
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

function isGone(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function readManifest(file: string, size: number, context: ScanContext): Promise<ManifestOutcome | 'gone'> {
  // Refused before it is read: a huge file would take the agent's memory with it.
  if (size > DEFAULT_YAML_LIMITS.maxBytes) {
    return { problems: [`${file}: is ${formatBytes(size)}, larger than the limit of ${formatBytes(DEFAULT_YAML_LIMITS.maxBytes)} for a manifest`] };
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isGone(err)) return 'gone'; // removed since it was listed: simply not part of this scan
    return { problems: [`${file}: cannot read: ${messageOf(err)}`] };
  }
  if (text.length === 0) return { problems: [`${file}: the file is empty`] };
  const decoded = decodeManifest(text, { origin: file, allowList: false });
  if (!decoded.ok) return { problems: decoded.problems };
  const [pod] = decoded.pods;
  if (pod === undefined) return { problems: [`${file}: holds no pod`] };
  const prepared = prepareStaticPod(pod, { nodeName: context.nodeName, origin: { kind: 'file', path: file }, clock: context.clock });
  return prepared.ok ? { pod: prepared.pod } : { problems: prepared.problems.map((p) => `${file}: ${p}`) };
}

/** One file of a directory: stat'ed (following symbolic links, as upstream does), then its outcome. */
async function lookAtFile(file: string, context: ScanContext): Promise<FileLook> {
  let info: Stats;
  try {
    info = await stat(file);
  } catch (err) {
    context.cache?.delete(file);
    // A dangling link or a file removed since the listing (or the notification) is not a manifest.
    return isGone(err) ? NOT_A_MANIFEST : { outcome: { problems: [`${file}: cannot stat: ${messageOf(err)}`] }, justChanged: false };
  }
  if (info.isFile()) return manifestOutcome(file, info, context);
  context.cache?.delete(file); // it may have been a regular file
  if (info.isDirectory()) return NOT_A_MANIFEST; // not recursive
  return { outcome: { problems: [`${file}: is not a regular file (sockets, pipes and devices are not manifests)`] }, justChanged: false };
}

/** Looks at the given files of a directory (full paths), concurrently; one look per file, in order. Never throws. */
export function lookAtFiles(files: readonly string[], context: ScanContext): Promise<FileLook[]> {
  const slots = new Semaphore(FILE_CONCURRENCY);
  return Promise.all(files.map((file) => slots.run(() => lookAtFile(file, context))));
}

/** Lists and looks at every manifest of `dir`. */
async function lookAtDirectory(dir: string, context: ScanContext): Promise<PathLook> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => !name.startsWith('.'));
  } catch (err) {
    if (isGone(err)) forgetMissing(context.cache, dir);
    return isGone(err) ? { kind: 'missing' } : { kind: 'error', message: `cannot list ${dir}: ${messageOf(err)}` };
  }
  const files = names.sort(compareCodeUnits).map((name) => join(dir, name));
  forgetMissing(context.cache, dir, new Set(files));
  const looks = await lookAtFiles(files, context);
  const entries: DirectoryEntries = new Map();
  files.forEach((file, i) => {
    const outcome = looks[i]?.outcome;
    if (outcome !== undefined) entries.set(file, outcome);
  });
  return { kind: 'dir', entries };
}

/** Scans the whole of `path` once (stat, then the file, or the directory's listing and files). Never throws. */
export async function lookAtPath(path: string, context: ScanContext): Promise<PathLook> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (err) {
    if (isGone(err)) {
      context.cache?.delete(path);
      forgetMissing(context.cache, path);
    }
    return isGone(err) ? { kind: 'missing' } : { kind: 'error', message: `cannot stat ${path}: ${messageOf(err)}` };
  }
  if (info.isFile()) {
    forgetMissing(context.cache, path); // it may have been a directory
    const { outcome } = await manifestOutcome(path, info, context);
    return outcome === undefined ? { kind: 'missing' } : { kind: 'file', file: path, outcome };
  }
  if (!info.isDirectory()) return { kind: 'error', message: `${path} is neither a regular file nor a directory` };
  context.cache?.delete(path); // no longer a file
  return lookAtDirectory(path, context);
}

/**
 * The pods (copies) and rejected manifests of a directory's entries, in file name order. A pod
 * whose full name (name_namespace, after the node suffix) is taken by a file earlier in name
 * order is rejected, naming both files.
 */
export function assembleDirectory(entries: ReadonlyMap<string, ManifestOutcome>): { pods: NodePod[]; rejected: RejectedManifest[] } {
  const pods: NodePod[] = [];
  const rejected: RejectedManifest[] = [];
  const owners = new Map<string, string>();
  for (const [file, outcome] of [...entries].sort(compareKeys)) {
    if (!('pod' in outcome)) {
      rejected.push({ file, problems: outcome.problems });
      continue;
    }
    const fullName = podFullName(outcome.pod);
    const owner = owners.get(fullName);
    if (owner !== undefined) {
      const meta = outcome.pod.metadata;
      rejected.push({
        file,
        problems: [`${file}: pod ${quoteValue(meta.name)} in namespace ${quoteValue(meta.namespace)} is already defined by ${owner}; this one is ignored`],
      });
      continue;
    }
    owners.set(fullName, file);
    pods.push(structuredClone(outcome.pod));
  }
  return { pods, rejected };
}

/** The result of a full scan, with copies of its pods. */
export function resultOf(look: PathLook): ScanResult {
  switch (look.kind) {
    case 'missing':
    case 'error':
      return look;
    case 'file': {
      const outcome = copyOutcome(look.outcome);
      return 'pod' in outcome
        ? { kind: 'file', pods: [outcome.pod], rejected: [] }
        : { kind: 'file', pods: [], rejected: [{ file: look.file, problems: outcome.problems }] };
    }
    case 'dir':
      return { kind: 'dir', ...assembleDirectory(look.entries) };
  }
}

/** Scans `path` once and assembles the result (see assembleDirectory). Never throws. */
export async function scanManifestPath(path: string, context: ScanContext): Promise<ScanResult> {
  return resultOf(await lookAtPath(path, context));
}
