/**
 * Test fixtures of the startup module (used by its *.test.ts only): temporary directories that
 * stand in for /proc, a log that records, running code without root's privileges, and a view of
 * the kernel's flock waiters.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import type { StartupLog } from './types.js';

/** A StartupLog that keeps every message. */
export class RecordingLog implements StartupLog {
  readonly warnings: string[] = [];
  readonly infos: string[] = [];

  warn(message: string): void {
    this.warnings.push(message);
  }

  info(message: string): void {
    this.infos.push(message);
  }
}

/** A fresh temporary directory; `remove()` deletes it with its contents. */
export interface TempDir {
  readonly path: string;
  /** Writes `content` to `relative` (parents created) and returns its absolute path. */
  write(relative: string, content: string): Promise<string>;
  remove(): Promise<void>;
}

export async function makeTempDir(prefix = 'nodeagent-startup-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return {
    path,
    async write(relative: string, content: string): Promise<string> {
      const file = join(path, relative);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

/** The uid of nobody, used to drop root's privileges for a moment. */
const NOBODY = 65534;

/**
 * Runs `fn` with an unprivileged effective uid, so that the kernel refuses writes to files that
 * are read-only by mode (root ignores modes) - the way a read-only /proc/sys or a missing
 * capability refuses the agent. As root, switches the effective uid (seteuid applies to every
 * thread, the fs thread pool included) and restores it afterwards; otherwise just runs `fn`.
 * Directories `fn` uses must be searchable by others (mode 0755).
 */
export async function asUnprivileged<T>(fn: () => Promise<T>): Promise<T> {
  const { geteuid, seteuid } = process;
  if (geteuid === undefined || seteuid === undefined) throw new Error('asUnprivileged needs POSIX uids');
  if (geteuid() !== 0) return fn();
  seteuid(NOBODY);
  try {
    return await fn();
  } finally {
    seteuid(0);
  }
}

/** The pids holding and the pids waiting for a flock(2) on a file, as the kernel shows them. */
export interface FlockState {
  readonly holders: readonly number[];
  readonly waiters: readonly number[];
}

/**
 * The flock(2) locks on the file at `path`, from /proc/locks: lines like
 * `1: FLOCK ADVISORY WRITE <pid> <major>:<minor>:<inode> 0 EOF` (device numbers in hex), with `->`
 * before FLOCK for a waiter. Matches device and inode, as other file systems reuse inode numbers.
 */
export async function flockState(path: string): Promise<FlockState> {
  const { dev, ino } = await stat(path, { bigint: true });
  // Linux's encoding of dev_t (glibc major()/minor()).
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  const text = await readFile('/proc/locks', 'utf8');
  // Sets: the kernel builds the file chunk by chunk, so a list changing meanwhile can repeat a line.
  const holders = new Set<number>();
  const waiters = new Set<number>();
  for (const line of text.split('\n')) {
    const match = /^\d+:\s+(->\s+)?FLOCK\s+\S+\s+\S+\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (match === null || BigInt(`0x${match[3]}`) !== major || BigInt(`0x${match[4]}`) !== minor || match[5] !== String(ino)) continue;
    (match[1] === undefined ? holders : waiters).add(Number(match[2]));
  }
  return { holders: [...holders], waiters: [...waiters] };
}
