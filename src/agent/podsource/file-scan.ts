/**
 * One scan of `--pod-manifest-path`: a single file, or a directory whose regular files
 * (not those named with a leading '.', not subdirectories) are each a manifest, read in
 * name order. Gives the static pods and the rejected manifests with their problems. Does
 * not watch, log or remember anything.
 */
import type { Stats } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { messageOf } from '../../api/errors.js';
import { podFullName } from '../../api/pod/index.js';
import { decodeManifest } from './manifest.js';
import { prepareStaticPod } from './static.js';

export interface ScanContext {
  readonly nodeName: string;
  readonly now: () => Date;
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

async function listManifests(dir: string): Promise<{ files: string[]; rejected: RejectedManifest[] }> {
  const names = (await readdir(dir)).filter((name) => !name.startsWith('.')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const files: string[] = [];
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
    if (info.isFile()) files.push(file);
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
    return isGone(err) ? { kind: 'missing' } : { kind: 'error', message: `cannot stat ${path}: ${messageOf(err)}` };
  }
  if (info.isFile()) {
    const outcome = await readManifest(path, context);
    if (outcome === 'gone') return { kind: 'missing' };
    return 'pod' in outcome
      ? { kind: 'file', pods: [outcome.pod], rejected: [] }
      : { kind: 'file', pods: [], rejected: [{ file: path, problems: outcome.problems }] };
  }
  if (!info.isDirectory()) return { kind: 'error', message: `${path} is neither a regular file nor a directory` };
  let listing: { files: string[]; rejected: RejectedManifest[] };
  try {
    listing = await listManifests(path);
  } catch (err) {
    return isGone(err) ? { kind: 'missing' } : { kind: 'error', message: `cannot list ${path}: ${messageOf(err)}` };
  }
  const pods: Pod[] = [];
  const rejected = [...listing.rejected];
  const owners = new Map<string, string>();
  for (const file of listing.files) {
    const outcome = await readManifest(file, context);
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
