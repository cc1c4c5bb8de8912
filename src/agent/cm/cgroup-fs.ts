/**
 * File-system steps on cgroup directories, for pod-cgroups.ts: what a hierarchy is (version,
 * whether it has the cpuset controller, a v2 hierarchy's controllers), mkdir of a cgroup with the
 * cpuset files a v1 cpuset cgroup needs, or in v2 with its parent's cgroup.subtree_control
 * enabling the controllers (without that a v2 cgroup has no cpu.max, memory.max, ... to write;
 * upstream's runc CreateCgroupPath does the same for every cgroup it makes), writing an existing
 * control file (never creating one), and rmdir of a cgroup tree, children first, retrying while busy.
 *
 * mkdir and control-file writes are synchronous calls: each is a single system call on the
 * in-memory cgroup file system, microseconds long, where an asynchronous call queues in libuv's
 * four-thread pool behind every other file operation of the agent (during a burst of pod starts
 * that wait was most of the time to a pod's cgroup, paid before its sandbox could be asked for).
 */
import { closeSync, constants, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { access, readdir, readFile, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';

/** A pod cgroup stayed busy (tasks or children left) until the deadline. */
export const CM_CGROUP_BUSY = 'CM_CGROUP_BUSY';
/** A cgroup directory could not be created, read or removed. */
export const CM_CGROUP_FAILED = 'CM_CGROUP_FAILED';

export function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

export function failed(message: string, subject: string, cause: unknown): OrchError {
  return new OrchError(CM_CGROUP_FAILED, 'internal', message, { subject, cause });
}

/** One mounted hierarchy as the pod cgroups use it. */
export interface Hierarchy {
  readonly root: string;
  /** 2: the unified hierarchy (its cgroups have cgroup.controllers). */
  readonly version: 1 | 2;
  /** A cgroup v1 cpuset hierarchy: new cgroups need cpuset.cpus and cpuset.mems filled in. */
  readonly cpuset: boolean;
  /** v2: the controllers of the root (its cgroup.controllers), enabled down to every cgroup made; [] for v1. */
  readonly controllers: readonly string[];
}

async function present(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw failed(`cannot look at ${path}`, path, err);
  }
}

/** What the hierarchy mounted at `root` is (two or three lookups in its root). */
export async function describeHierarchy(root: string): Promise<Hierarchy> {
  const [unified, cpusetFile] = await Promise.all([present(join(root, 'cgroup.controllers')), present(join(root, 'cpuset.cpus'))]);
  // A v2 cgroup with empty cpuset.cpus uses its parent's: only v1 needs the copy.
  if (!unified) return { root, version: 1, cpuset: cpusetFile, controllers: [] };
  let controllers: string[];
  try {
    controllers = (await readFile(join(root, 'cgroup.controllers'), 'utf8')).split(/\s+/).filter((c) => c !== '');
  } catch (err) {
    throw failed(`cannot read ${join(root, 'cgroup.controllers')}`, root, err);
  }
  return { root, version: 2, cpuset: false, controllers };
}

/**
 * mkdir of a cgroup (an existing one is fine); in a cpuset hierarchy, cpuset.cpus and
 * cpuset.mems are copied from the parent when empty (as runc does for the parents it makes); in
 * v2, the parent (the root included) is made to enable the hierarchy's controllers for its children.
 */
export function makeCgroup(h: Hierarchy, dir: string): void {
  if (h.controllers.length > 0) enableControllers(h, dirname(dir));
  try {
    mkdirSync(dir);
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw failed(`cannot create cgroup ${dir}`, dir, err);
  }
  if (!h.cpuset) return;
  for (const file of ['cpuset.cpus', 'cpuset.mems']) inheritIfEmpty(dir, file);
}

/**
 * Writes `+cpu +memory ...` to a v2 cgroup's cgroup.subtree_control, and one controller at a
 * time when the kernel refuses the whole (one not available there), as runc does; what it still
 * refuses is left (a control file then missing is skipped by the writers). The hierarchy's root
 * is written too, as runc does (where systemd already enabled them this changes nothing).
 */
function enableControllers(h: Hierarchy, parent: string): void {
  if (parent !== h.root && !parent.startsWith(`${h.root}/`)) return;
  const path = join(parent, 'cgroup.subtree_control');
  const all = h.controllers.map((c) => `+${c}`);
  try {
    if (writeControl(path, all.join(' '))) return;
  } catch {
    for (const one of all) {
      try {
        writeControl(path, one);
      } catch {
        // Not available below this parent: its children go without it, as with runc.
      }
    }
  }
}

/** Copies a cpuset file from the parent when the cgroup's own is empty; nothing when the file does not exist. */
function inheritIfEmpty(dir: string, file: string): void {
  let own: string;
  try {
    own = readFileSync(join(dir, file), 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return; // no such controller here after all
    throw failed(`cannot read ${join(dir, file)}`, dir, err);
  }
  if (own.trim() !== '') return;
  try {
    const inherited = readFileSync(join(dirname(dir), file), 'utf8').trim();
    writeFileSync(join(dir, file), inherited);
  } catch (err) {
    throw failed(`cannot copy ${file} from the parent of ${dir}`, dir, err);
  }
}

/** Writes a control file that exists; false when it does not (a cgroup without that controller has none). */
export function writeControl(path: string, value: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_TRUNC); // never O_CREAT: a missing file means no such controller
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw failed(`cannot open ${path}`, path, err);
  }
  try {
    writeSync(fd, value);
  } catch (err) {
    throw failed(`cannot write ${value} to ${path}`, path, err);
  } finally {
    closeSync(fd);
  }
  return true;
}

export interface RemoveSettings {
  readonly deadline: number;
  /** The deadline's clock and the pauses between attempts. */
  readonly clock: Clock;
  readonly retryIntervalMs: number;
  readonly logger: Logger;
}

/** rmdir of `dir` after its child cgroups, depth first; a missing `dir` is fine. */
export async function removeTree(dir: string, settings: RemoveSettings): Promise<void> {
  let children: string[];
  try {
    children = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw failed(`cannot list cgroup ${dir}`, dir, err);
  }
  for (const child of children) await removeTree(join(dir, child), settings);
  for (let attempt = 1; ; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY') throw failed(`cannot remove cgroup ${dir}`, dir, err);
      if (settings.clock.now() >= settings.deadline) {
        throw new OrchError(CM_CGROUP_BUSY, 'timeout', `cgroup ${dir} is still busy (tasks or child cgroups left) after ${attempt} attempts`, {
          subject: dir,
          cause: err,
        });
      }
      settings.logger.warn('pod cgroup busy; retrying rmdir', { path: dir, attempt });
      await sleepKeepingAlive(settings.clock, settings.retryIntervalMs);
    }
  }
}

/** Waits for every task (none is left running) and throws the first failure, if any. */
export async function allOrFirstError(tasks: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(tasks);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}
