/**
 * One scan of `--pod-manifest-path`: a single file, or a directory whose regular files
 * (not those named with a leading '.', not subdirectories) are each a manifest, read in
 * name order. Gives the static pods and the rejected manifests with their problems. Does
 * not watch or log.
 *
 * It remembers one thing: each manifest's outcome (its pod, or its problems), by file and node
 * name, under the file's identity and change stamps (device, inode, size, mtime, ctime from the
 * stat a scan makes anyway). A file whose stamps are unchanged is neither read nor parsed again;
 * its pod is handed out as a copy (callers may change what they get). Entries of files a scan no
 * longer finds are dropped. A file that was being written while it was read is read again at the
 * next scan: its stamps then differ from those recorded before the read. A file changed less than
 * RACY_WINDOW_MS before its stat is not remembered: file times are coarse (a clock tick), so a
 * second same-size write within the same tick would leave the stamps as they were.
 */
import type { Stats } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { messageOf } from '../../api/errors.js';
import { podFullName } from '../../api/pod/index.js';
import { decodeManifest } from './manifest.js';
import { prepareStaticPod } from './static.js';

export interface ScanContext {
  readonly nodeName: string;
  readonly now: () => Date;
  /** The wall clock (ms) that file times are compared with, to not remember files changed just now (default Date.now). */
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
  | { readonly kind: 'file' | 'dir'; readonly pods: readonly Pod[]; readonly rejected: readonly RejectedManifest[] };

type FileOutcome = { readonly pod: Pod } | { readonly problems: readonly string[] } | 'gone';
type KnownOutcome = Exclude<FileOutcome, 'gone'>;

export interface CachedManifest {
  readonly stamp: string;
  readonly nodeName: string;
  readonly outcome: KnownOutcome;
}

/** Outcomes of the manifests read, by file path as scanned (see the header); one per file source. */
export type ManifestCache = Map<string, CachedManifest>;

export function createManifestCache(): ManifestCache {
  return new Map<string, CachedManifest>();
}

/** How long after a file's last change its outcome is still read again at each scan. */
export const RACY_WINDOW_MS = 100;

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

function copyOutcome(outcome: KnownOutcome): KnownOutcome {
  return 'pod' in outcome ? { pod: structuredClone(outcome.pod) } : outcome;
}

/** The file's outcome: remembered when its stamps did not change since it was read, else read now (and remembered). */
async function manifestOutcome(file: string, info: Stats, context: ScanContext): Promise<FileOutcome> {
  const stamp = stampOf(info);
  const cache = context.cache;
  const cached = cache?.get(file);
  if (cached !== undefined && cached.stamp === stamp && cached.nodeName === context.nodeName) return copyOutcome(cached.outcome);
  const changedMsAgo = (context.fileClockMs ?? Date.now)() - Math.max(info.mtimeMs, info.ctimeMs);
  const outcome = await readManifest(file, context);
  if (outcome === 'gone' || changedMsAgo < RACY_WINDOW_MS) {
    cache?.delete(file);
    return outcome;
  }
  cache?.set(file, { stamp, nodeName: context.nodeName, outcome });
  return copyOutcome(outcome);
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

function isGone(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function readManifest(file: string, context: ScanContext): Promise<FileOutcome> {
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
  const prepared = prepareStaticPod(pod, { nodeName: context.nodeName, origin: { kind: 'file', path: file }, now: context.now });
  return prepared.ok ? { pod: prepared.pod } : { problems: prepared.problems.map((p) => `${file}: ${p}`) };
}

interface ListedManifest {
  readonly file: string;
  readonly info: Stats;
}

async function listManifests(dir: string): Promise<{ files: ListedManifest[]; rejected: RejectedManifest[] }> {
  const names = (await readdir(dir)).filter((name) => !name.startsWith('.')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const files: ListedManifest[] = [];
  const rejected: RejectedManifest[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let info: Stats;
    try {
      info = await stat(file); // follows symbolic links, as upstream does
    } catch (err) {
      if (!isGone(err)) rejected.push({ file, problems: [`${file}: cannot stat: ${messageOf(err)}`] });
      continue; // a dangling link or a file removed since the listing is not a manifest
    }
    if (info.isDirectory()) continue; // not recursive
    if (info.isFile()) files.push({ file, info });
    else rejected.push({ file, problems: [`${file}: is not a regular file (sockets, pipes and devices are not manifests)`] });
  }
  return { files, rejected };
}

/**
 * Scans `path` once. In a directory, a pod whose full name (name_namespace, after the node
 * suffix) is taken by a file earlier in name order is rejected, naming both files. Never
 * throws.
 */
export async function scanManifestPath(path: string, context: ScanContext): Promise<ScanResult> {
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
    const outcome = await manifestOutcome(path, info, context);
    if (outcome === 'gone') return { kind: 'missing' };
    return 'pod' in outcome
      ? { kind: 'file', pods: [outcome.pod], rejected: [] }
      : { kind: 'file', pods: [], rejected: [{ file: path, problems: outcome.problems }] };
  }
  if (!info.isDirectory()) return { kind: 'error', message: `${path} is neither a regular file nor a directory` };
  context.cache?.delete(path); // no longer a file
  let listing: { files: ListedManifest[]; rejected: RejectedManifest[] };
  try {
    listing = await listManifests(path);
  } catch (err) {
    if (isGone(err)) forgetMissing(context.cache, path);
    return isGone(err) ? { kind: 'missing' } : { kind: 'error', message: `cannot list ${path}: ${messageOf(err)}` };
  }
  forgetMissing(context.cache, path, new Set(listing.files.map((f) => f.file)));
  const pods: Pod[] = [];
  const rejected = [...listing.rejected];
  const owners = new Map<string, string>();
  for (const { file, info: fileInfo } of listing.files) {
    const outcome = await manifestOutcome(file, fileInfo, context);
    if (outcome === 'gone') continue;
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
        problems: [`${file}: pod ${JSON.stringify(meta?.name ?? '')} in namespace ${JSON.stringify(meta?.namespace ?? '')} is already defined by ${owner}; this one is ignored`],
      });
      continue;
    }
    owners.set(fullName, file);
    pods.push(outcome.pod);
  }
  rejected.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { kind: 'dir', pods, rejected };
}
