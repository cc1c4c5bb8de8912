/**
 * The pod cgroups: one `pod<uid>` directory per pod in every mounted hierarchy, below its QoS
 * cgroup (see cgroup-name.ts). The runtime (runc) creates each container's cgroup below it and
 * removes only that one again, so the pod directory is ours to remove.
 *
 * Cgroup directories are made with mkdir and removed with rmdir only (a cgroup's control files
 * cannot be deleted; rmdir of a cgroup succeeds once it has no tasks and no children). In a
 * cgroup v1 cpuset hierarchy a new cgroup starts with empty cpuset.cpus and cpuset.mems and
 * cannot take tasks, so `ensure` copies them from the parent (as runc does for the parents it makes).
 *
 * `ensure` also writes the pod's limits (pod-resources.ts: cpu.shares, CFS quota and period,
 * memory limit, pids.max; cgroup v2's cpu.weight, cpu.max, memory.max where that hierarchy has
 * the controllers) into every hierarchy that has the control file, when they changed, and
 * keeps the burstable and besteffort QoS cgroups' cpu.shares in step with the pods it holds.
 *
 * With the systemd driver the directories are the expanded slices (`orchpods.slice/...`), made
 * directly on the file system: upstream asks systemd to create the slice units instead (there is
 * no systemd on these hosts; a later issue may add the D-Bus path).
 */
import { constants } from 'node:fs';
import { mkdir, open, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Pod } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import {
  checkPodUID,
  driverName,
  fsComponents,
  podCgroupNameFor,
  podContainerNames,
  podUIDFromDir,
  qosCgroupName,
  type CgroupConfig,
} from './cgroup-name.js';
import { discoverCgroupHierarchies } from './hierarchies.js';
import { cgroupFiles, podResourceConfig, qosCpuShares, type PodResourceSettings, type ResourceConfig } from './pod-resources.js';
import { qosClass, type QOSClass } from './qos.js';

/** A pod cgroup stayed busy (tasks or children left) until the deadline. */
export const CM_CGROUP_BUSY = 'CM_CGROUP_BUSY';
/** A cgroup directory could not be created, read or removed. */
export const CM_CGROUP_FAILED = 'CM_CGROUP_FAILED';

export interface PodCgroups {
  /**
   * Creates the pod's cgroup, and its QoS parents, in every hierarchy; returns the cgroup parent
   * for CRI (`linux.cgroup_parent`). Idempotent. Throws `CM_INVALID`, `CM_NO_CGROUPS` or `CM_CGROUP_FAILED`.
   */
  ensure(pod: Pod): Promise<string>;
  /**
   * Removes the pod's cgroup (whatever QoS class it was made under) in every hierarchy, children
   * first, retrying while busy until the deadline. A missing cgroup is fine (idempotent). Throws
   * `CM_CGROUP_BUSY` (timeout) at the deadline, `CM_CGROUP_FAILED` on other errors.
   */
  remove(podUID: string): Promise<void>;
  /** The UIDs that have a pod cgroup in any hierarchy (for orphan cleanup), sorted. */
  listPodUIDs(): Promise<string[]>;
}

export interface PodCgroupsOptions extends CgroupConfig, PodResourceSettings {
  readonly logger: Logger;
  /** Mount points of the hierarchies to use; default: every cgroup and cgroup2 mount in mountinfo. */
  readonly hierarchies?: readonly string[];
  /** Where to read the mount table when `hierarchies` is not given (default /proc/self/mountinfo). */
  readonly mountInfoPath?: string;
  /** How long `remove` retries a busy cgroup (default 10 s). */
  readonly removeTimeoutMs?: number;
  /** Pause between attempts (default 100 ms). */
  readonly retryIntervalMs?: number;
  readonly now?: () => number;
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function failed(message: string, subject: string, cause: unknown): OrchError {
  return new OrchError(CM_CGROUP_FAILED, 'internal', message, { subject, cause });
}

const QOS_CLASSES: readonly QOSClass[] = ['Guaranteed', 'Burstable', 'BestEffort'];

class FsPodCgroups implements PodCgroups {
  private readonly options: PodCgroupsOptions;
  private readonly now: () => number;
  private hierarchies: Promise<readonly string[]> | undefined;
  /** The pods ensured and not removed, by UID (the QoS cgroups' shares follow them). */
  private readonly active = new Map<string, Pod>();
  /** What was last written, by relative cgroup path. */
  private readonly written = new Map<string, string>();

  constructor(options: PodCgroupsOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  private roots(): Promise<readonly string[]> {
    if (this.options.hierarchies !== undefined) return Promise.resolve(this.options.hierarchies);
    this.hierarchies ??= discoverCgroupHierarchies(this.options.mountInfoPath).then((hs) => hs.map((h) => h.path));
    const pending = this.hierarchies;
    pending.catch(() => {
      // Not cached: the next call looks again (the caller of this one gets the error).
      if (this.hierarchies === pending) this.hierarchies = undefined;
    });
    return pending;
  }

  async ensure(pod: Pod): Promise<string> {
    const name = podCgroupNameFor(pod.metadata?.uid ?? '', qosClass(pod), this.options);
    const components = fsComponents(name, this.options.cgroupDriver);
    for (const root of await this.roots()) {
      let dir = root;
      for (const component of components) {
        dir = join(dir, component);
        await this.makeCgroup(dir);
      }
    }
    await this.apply(components.join('/'), podResourceConfig(pod, this.options));
    this.active.set(pod.metadata?.uid ?? '', pod);
    await this.applyQos();
    const parent = driverName(name, this.options.cgroupDriver);
    this.options.logger.v(3, 'pod cgroup ensured', { podUID: pod.metadata?.uid, cgroupParent: parent });
    return parent;
  }

  /** Writes the settings of a cgroup (relative path) in every hierarchy that has the files, when they changed. */
  private async apply(relative: string, config: ResourceConfig): Promise<void> {
    const key = JSON.stringify(config);
    if (this.written.get(relative) === key) return;
    const files = [...cgroupFiles(config, 1), ...cgroupFiles(config, 2)];
    for (const root of await this.roots()) {
      for (const [file, value] of files) await this.writeControl(join(root, relative, file), value);
    }
    this.written.set(relative, key);
  }

  /** Writes a control file that exists (a hierarchy without that controller has none). */
  private async writeControl(path: string, value: string): Promise<void> {
    let handle;
    try {
      handle = await open(path, constants.O_WRONLY | constants.O_TRUNC); // never O_CREAT: a missing file means no such controller
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return;
      throw failed(`cannot open ${path}`, path, err);
    }
    try {
      await handle.writeFile(value);
    } catch (err) {
      throw failed(`cannot write ${value} to ${path}`, path, err);
    } finally {
      await handle.close();
    }
  }

  /** The burstable and besteffort QoS cgroups' cpu.shares (with cgroupsPerQOS). */
  private async applyQos(): Promise<void> {
    if (!this.options.cgroupsPerQOS) return;
    const shares = qosCpuShares(this.active.values());
    for (const qos of ['Burstable', 'BestEffort'] as const) {
      await this.apply(fsComponents(qosCgroupName(qos, this.options), this.options.cgroupDriver).join('/'), { cpuShares: shares[qos] });
    }
  }

  private async makeCgroup(dir: string): Promise<void> {
    try {
      await mkdir(dir);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw failed(`cannot create cgroup ${dir}`, dir, err);
    }
    for (const file of ['cpuset.cpus', 'cpuset.mems']) await this.inheritIfEmpty(dir, file);
  }

  /** Copies a cpuset file from the parent when the cgroup's own is empty; nothing when the file does not exist. */
  private async inheritIfEmpty(dir: string, file: string): Promise<void> {
    let own: string;
    try {
      own = await readFile(join(dir, file), 'utf8');
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return; // not a cpuset hierarchy
      throw failed(`cannot read ${join(dir, file)}`, dir, err);
    }
    if (own.trim() !== '') return;
    try {
      const inherited = (await readFile(join(dirname(dir), file), 'utf8')).trim();
      await writeFile(join(dir, file), inherited);
    } catch (err) {
      throw failed(`cannot copy ${file} from the parent of ${dir}`, dir, err);
    }
  }

  async remove(podUID: string): Promise<void> {
    checkPodUID(podUID);
    const deadline = this.now() + (this.options.removeTimeoutMs ?? 10_000);
    const candidates = new Set(
      QOS_CLASSES.map((qos) => fsComponents(podCgroupNameFor(podUID, qos, this.options), this.options.cgroupDriver).join('/')),
    );
    for (const root of await this.roots()) {
      for (const relative of candidates) await this.removeTree(join(root, relative), deadline);
    }
    for (const relative of candidates) this.written.delete(relative);
    if (this.active.delete(podUID)) await this.applyQos();
    this.options.logger.v(3, 'pod cgroup removed', { podUID });
  }

  /** rmdir of `dir` after its child cgroups, depth first. */
  private async removeTree(dir: string, deadline: number): Promise<void> {
    let children: string[];
    try {
      children = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return;
      throw failed(`cannot list cgroup ${dir}`, dir, err);
    }
    for (const child of children) await this.removeTree(join(dir, child), deadline);
    for (let attempt = 1; ; attempt++) {
      try {
        await rmdir(dir);
        return;
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT') return;
        if (code !== 'EBUSY') throw failed(`cannot remove cgroup ${dir}`, dir, err);
        if (this.now() >= deadline) {
          throw new OrchError(CM_CGROUP_BUSY, 'timeout', `cgroup ${dir} is still busy (tasks or child cgroups left) after ${attempt} attempts`, {
            subject: dir,
            cause: err,
          });
        }
        this.options.logger.warn('pod cgroup busy; retrying rmdir', { path: dir, attempt });
        await delay(this.options.retryIntervalMs ?? 100);
      }
    }
  }

  async listPodUIDs(): Promise<string[]> {
    const uids = new Set<string>();
    const roots = await this.roots();
    for (const container of podContainerNames(this.options)) {
      const relative = fsComponents(container, this.options.cgroupDriver);
      for (const root of roots) {
        const dir = join(root, ...relative);
        let entries;
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch (err) {
          if (errnoOf(err) === 'ENOENT') continue;
          throw failed(`cannot list cgroup ${dir}`, dir, err);
        }
        for (const e of entries) {
          const uid = e.isDirectory() ? podUIDFromDir(e.name, container, this.options) : undefined;
          if (uid !== undefined) uids.add(uid);
        }
      }
    }
    return [...uids].sort();
  }
}

/** Pod cgroups over the given (or discovered) hierarchies. Touches nothing until called. */
export function createPodCgroups(options: PodCgroupsOptions): PodCgroups {
  return new FsPodCgroups(options);
}
