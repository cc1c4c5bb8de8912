/**
 * The files of one container log as rotation leaves them (upstream's layout): the log the
 * runtime writes (`<dir>/<restartCount>.log`), rotated copies `<log>.<YYYYMMDD-HHMMSS>` (the
 * newest one left uncompressed, as the runtime may still write to it until it reopened the
 * log), older ones gzipped to `<log>.<timestamp>.gz`, and `<log>.<timestamp>.tmp` while one is
 * being compressed. Timestamps are local time to the second, so names sort oldest first.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

export const COMPRESS_SUFFIX = '.gz';
export const TMP_SUFFIX = '.tmp';

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `<log>.<YYYYMMDD-HHMMSS>` for a rotation at `nowMs` (local time, as upstream's Go layout 20060102-150405). */
export function rotatedName(log: string, nowMs: number): string {
  const t = new Date(nowMs);
  const stamp = `${pad(t.getFullYear(), 4)}${pad(t.getMonth() + 1)}${pad(t.getDate())}-${pad(t.getHours())}${pad(t.getMinutes())}${pad(t.getSeconds())}`;
  return `${log}.${stamp}`;
}

/** Whether `file` (a rotated file of some log) still holds log lines nobody else holds (upstream's isInUse). */
export function isInUse(file: string, all: readonly string[]): boolean {
  if (file.endsWith(TMP_SUFFIX)) return false; // a compression that did not finish
  if (file.endsWith(COMPRESS_SUFFIX)) return true;
  return !all.includes(file + COMPRESS_SUFFIX); // compressed already: the plain copy is left over
}

function isMissing(err: unknown): boolean {
  return typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT';
}

/** The files beside `log` whose names start with `<log><separator>`, sorted by name; none when its directory is gone. */
async function siblings(log: string, separator: string): Promise<string[]> {
  const dir = path.dirname(log);
  const prefix = path.basename(log) + separator;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
  return names.filter((n) => n.startsWith(prefix)).sort().map((n) => path.join(dir, n));
}

/** Every rotated file of `log` (`<log>.*`, in use or not), oldest first. */
export function rotatedFiles(log: string): Promise<string[]> {
  return siblings(log, '.');
}

/**
 * The files that hold a container's log, oldest first: its rotated files in use, then `log`
 * itself (upstream's GetAllLogs). `log` is listed even when it does not exist (yet).
 */
export async function containerLogFiles(log: string): Promise<string[]> {
  const rotated = await rotatedFiles(log);
  return [...rotated.filter((f) => isInUse(f, rotated)), log];
}

/**
 * Removes `log` and every file rotation made of it (upstream's Clean, for a container being
 * removed). A file already gone is fine.
 */
export async function removeContainerLogFiles(log: string): Promise<void> {
  if (log === '') return;
  for (const file of [log, ...(await rotatedFiles(log))]) await rm(file, { force: true });
}
