/**
 * Rotating one container log, in upstream's order (rotateLog):
 *
 *   1. remove what an interrupted rotation left (`.tmp` files, plain copies already gzipped);
 *   2. remove the oldest rotated files until `maxFiles - 2` remain (with the file rotated now
 *      and the new log the runtime opens, `maxFiles` in all);
 *   3. gzip the rotated files still plain (the newest of the last rotation, which the runtime
 *      no longer writes to);
 *   4. rename the log to `<log>.<timestamp>` and ask the runtime to reopen it (CRI
 *      ReopenContainerLog); when the runtime refuses, rename it back so that the next check
 *      tries again.
 *
 * Compression streams through zlib (it never holds a whole file).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { OrchError, messageOf } from '../../api/errors.js';
import { COMPRESS_SUFFIX, TMP_SUFFIX, isInUse, rotatedFiles, rotatedName } from './files.js';

/** Rotating a container's log failed; the message names the container, the file and the step. */
export const CONTAINERLOGS_ROTATE_FAILED = 'CONTAINERLOGS_ROTATE_FAILED';

export interface RotateDeps {
  /** CRI ReopenContainerLog. */
  reopenContainerLog(containerId: string): Promise<void>;
  readonly now: () => number;
  /** containerLogMaxFiles (2 or more). */
  readonly maxFiles: number;
}

function failed(id: string, log: string, step: string, err: unknown): OrchError {
  return new OrchError(CONTAINERLOGS_ROTATE_FAILED, 'internal', `rotating the log ${log} of container ${id}: ${step}: ${messageOf(err)}`, {
    subject: `container ${id}`,
    cause: err,
  });
}

/** Gzips `file` to `file.gz` through `file.gz.tmp`, then removes `file` (upstream's compressLog). */
export async function compressLog(file: string): Promise<void> {
  const { mode } = await stat(file);
  const tmp = `${file}${TMP_SUFFIX}`;
  try {
    await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp, { mode }));
    await rename(tmp, file + COMPRESS_SUFFIX);
  } finally {
    await rm(tmp, { force: true });
  }
  await rm(file, { force: true });
}

/** Steps 1 to 3: the rotated files of `log` cleaned up, trimmed to maxFiles - 2 and compressed. */
async function prepareRotated(log: string, maxFiles: number): Promise<void> {
  const all = await rotatedFiles(log);
  const inUse = all.filter((f) => isInUse(f, all));
  for (const f of all) if (!inUse.includes(f)) await rm(f, { force: true });
  // Oldest first, and never the ones a reader may be following: the newest stay.
  const excess = inUse.length - Math.max(0, maxFiles - 2);
  for (const f of inUse.slice(0, Math.max(0, excess))) await rm(f, { force: true });
  for (const f of inUse.slice(Math.max(0, excess))) {
    if (!f.endsWith(COMPRESS_SUFFIX)) await compressLog(f);
  }
}

/**
 * Rotates `log`, the log of the running container `id`. Rejects with
 * CONTAINERLOGS_ROTATE_FAILED (the log is then where it was, or it was lost only when putting
 * it back failed, which is logged by the caller from the message).
 */
export async function rotateLog(deps: RotateDeps, id: string, log: string): Promise<string> {
  try {
    await prepareRotated(log, deps.maxFiles);
  } catch (err) {
    throw failed(id, log, 'cleaning up the rotated files', err);
  }
  const rotated = rotatedName(log, deps.now());
  if (await stat(rotated).then(() => true, () => false)) {
    // Rotated already within this second (names are to the second): the next check does it.
    throw failed(id, log, `renaming it to ${rotated}`, new Error('the file exists'));
  }
  try {
    await rename(log, rotated);
  } catch (err) {
    throw failed(id, log, `renaming it to ${rotated}`, err);
  }
  try {
    await deps.reopenContainerLog(id);
  } catch (err) {
    try {
      await rename(rotated, log);
    } catch (back) {
      throw failed(id, log, `reopening it (and renaming ${rotated} back: ${messageOf(back)})`, err);
    }
    throw failed(id, log, 'reopening it', err);
  }
  return rotated;
}
