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
 * the controllers, which makeCgroup enables in every parent's cgroup.subtree_control) into every hierarchy that has the control file, when they changed, and
 * keeps the burstable and besteffort QoS cgroups' cpu.shares in step with the pods it holds, and
 * with qosReserved their memory limits (qos-reserve.ts; a limit below what a QoS cgroup already
 * uses is set to that usage instead, as upstream's retry does, so that it holds growth).
 *
 * The common call is cheap: a pod whose cgroup was made with the same resource settings (and
 * not removed since) costs no file-system call and no QoS update; the QoS and root parents are
 * made once per hierarchy (again only after a failure); the directories and files are made and
 * written with synchronous calls (cgroup-fs.ts), one pod's whole in one go; the cpuset
 * files are only looked at in a v1 cpuset hierarchy, v1 control files only written in v1
 * hierarchies and v2 ones in v2; a control file found missing below a parent cgroup is not
 * tried again below that parent. A cgroup removed behind the agent's back is therefore not made
 * again until the pod's settings change or the pod is removed.
 *
 * With the systemd driver the directories are the expanded slices (`orchpods.slice/...`), made
 * directly on the file system: upstream asks systemd to create the slice units instead, over
 * D-Bus, which these hosts (no systemd) do not have.
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { NodePod } from '../../api/pod/index.js';

import type { Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import { Semaphore } from '../../api/semaphore.js';
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
import { allOrFirstError, describeHierarchy, errnoOf, failed, makeCgroup, removeTree, writeControl, type Hierarchy } from './cgroup-fs.js';
import { discoverCgroupHierarchies } from './hierarchies.js';
import { cgroupFiles, podResourceConfig, qosCpuShares, type PodResourceSettings, type ResourceConfig } from './pod-resources.js';
import { qosClass, type QOSClass } from '../../api/pod/index.js';
import { qosMemoryLimits, type QosMemoryReserve } from './qos-reserve.js';

export { CM_CGROUP_BUSY, CM_CGROUP_FAILED } from './cgroup-fs.js';

export interface PodCgroups {
  /**
   * Creates the pod's cgroup, and its QoS parents, in every hierarchy; returns the cgroup parent
   * for CRI (`linux.cgroup_parent`). Idempotent. Throws `CM_INVALID`, `CM_NO_CGROUPS` or `CM_CGROUP_FAILED`.
   */
  ensure(pod: NodePod): Promise<string>;
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
  /** The removal deadline and the pauses between attempts. */
  readonly clock: Clock;
  /** qosReserved memory (QOSReserved gate): the Burstable and BestEffort QoS cgroups' memory limits. */
  readonly qosMemoryReserve?: QosMemoryReserve;
}

const QOS_CLASSES: readonly QOSClass[] = ['Guaranteed', 'Burstable', 'BestEffort'];

/** The parent cgroups of `components` (relative paths), outermost first. */
function parentsOf(components: readonly string[]): string[] {
  return components.slice(0, -1).map((_, i) => components.slice(0, i + 1).join('/'));
}

function parentOf(relative: string): string {
  const slash = relative.lastIndexOf('/');
  return slash < 0 ? '' : relative.slice(0, slash);
}

class FsPodCgroups implements PodCgroups {
  private readonly options: PodCgroupsOptions;
  private hierarchies: Promise<readonly Hierarchy[]> | undefined;
  /** The pods ensured and not removed, by UID (the QoS cgroups' shares follow them). */
  private readonly active = new Map<string, NodePod>();
  /** What was last written, by relative cgroup path. */
  private readonly written = new Map<string, string>();
  /** The pods whose cgroup is made, by UID: their cgroup path and settings. */
  private readonly ensured = new Map<string, string>();
  /** Parent cgroups made, by hierarchy root and relative path. */
  private readonly parents = new Set<string>();
  /** Control files found missing in the children of a cgroup, by hierarchy root and the parent's relative path. */
  private readonly absent = new Map<string, Set<string>>();
  /** Pod cgroups are made one pod at a time (see ensure). */
  private readonly making = new Semaphore(1);
  /** Counts removals: an ensure that overlapped one does not remember its pod. */
  private removals = 0;
  /** The QoS shares are written one update at a time, each with the pods active when it runs. */
  private qosQueue: Promise<void> = Promise.resolve();

  constructor(options: PodCgroupsOptions) {
    this.options = options;
  }

  private layout(): Promise<readonly Hierarchy[]> {
    if (this.hierarchies !== undefined) return this.hierarchies;
    const roots = this.options.hierarchies !== undefined
      ? Promise.resolve(this.options.hierarchies)
      : discoverCgroupHierarchies(this.options.mountInfoPath).then((hs) => hs.map((h) => h.path));
    const pending = roots.then((rs) => Promise.all(rs.map((r) => describeHierarchy(r))));
    this.hierarchies = pending;
    pending.catch(() => {
      // Not cached: the next call looks again (the caller of this one gets the error).
      if (this.hierarchies === pending) this.hierarchies = undefined;
    });
    return pending;
  }

  async ensure(pod: NodePod): Promise<string> {
    const { uid } = pod.metadata;
    const name = podCgroupNameFor(uid, qosClass(pod), this.options);
    const components = fsComponents(name, this.options.cgroupDriver);
    const relative = components.join('/');
    const config = podResourceConfig(pod, this.options);
    const key = `${relative}\n${JSON.stringify(config)}`;
    const parent = driverName(name, this.options.cgroupDriver);
    // The periodic resync of a pod whose cgroup, settings and QoS shares are done: nothing to do.
    if (this.ensured.get(uid) === key) return parent;
    const removals = this.removals;
    const hierarchies = await this.layout();
    // Synchronous file-system calls (cgroup-fs.ts), one pod per turn of the event loop, in
    // arrival order: a pod's next steps (its sandbox) go ahead while the next pod waits its turn.
    // Back to back, a burst's 110 cgroups held the event loop for about 0.7 s before the first
    // sandbox was asked for (a cgroup mkdir takes the kernel up to a millisecond while runc
    // makes its own).
    await this.making.run(async () => {
      await nextTurn();
      for (const h of hierarchies) this.makePodCgroup(h, components);
      this.apply(hierarchies, relative, config);
    });
    this.options.logger.v(3, 'pod cgroup ensured', { podUID: uid, cgroupParent: parent });
    this.active.set(uid, pod);
    await this.applyQos();
    // Remembered once the QoS shares are written too (a failed write is tried again at the next
    // sync), unless a removal overlapped this call.
    if (removals === this.removals) this.ensured.set(uid, key);
    return parent;
  }

  /** The pod's cgroup in one hierarchy; when that fails, its parents are looked at again (once). */
  private makePodCgroup(h: Hierarchy, components: readonly string[]): void {
    const dir = join(h.root, ...components);
    const parents = parentsOf(components);
    try {
      for (const p of parents) this.makeParent(h, p);
      makeCgroup(h, dir);
    } catch (err) {
      if (parents.length === 0) throw err;
      this.options.logger.v(2, 'making a pod cgroup failed; making its parents again', { path: dir, err: messageOf(err) });
      for (const p of parents) this.parents.delete(`${h.root}\0${p}`);
      for (const p of parents) this.makeParent(h, p);
      makeCgroup(h, dir);
    }
  }

  /** A parent cgroup, made once per hierarchy (a failed attempt is not remembered: the next call tries again). */
  private makeParent(h: Hierarchy, relative: string): void {
    const key = `${h.root}\0${relative}`;
    if (this.parents.has(key)) return;
    makeCgroup(h, join(h.root, relative));
    this.parents.add(key);
  }

  /** Writes the settings of a cgroup (relative path) in every hierarchy that has the files, when they changed. */
  private apply(hierarchies: readonly Hierarchy[], relative: string, config: ResourceConfig): void {
    const key = JSON.stringify(config);
    if (this.written.get(relative) === key) return;
    for (const h of hierarchies) this.writeControls(h, relative, cgroupFiles(config, h.version));
    this.written.set(relative, key);
  }

  /** The files of one cgroup in one hierarchy, one after another, skipping those known to be missing there. */
  private writeControls(h: Hierarchy, relative: string, files: readonly [string, string][]): void {
    const absentKey = `${h.root}\0${parentOf(relative)}`;
    const absent = this.absent.get(absentKey);
    for (const [file, value] of files) {
      if (absent?.has(file) === true) continue;
      if (writeControl(join(h.root, relative, file), value)) continue;
      const known = this.absent.get(absentKey) ?? new Set<string>();
      known.add(file);
      this.absent.set(absentKey, known);
    }
  }

  /** The burstable and besteffort QoS cgroups' cpu.shares (with cgroupsPerQOS), one update at a time. */
  private applyQos(): Promise<void> {
    if (!this.options.cgroupsPerQOS) return Promise.resolve();
    const run = this.qosQueue.then(() => this.writeQos());
    // The queue only orders the updates: each caller gets its own update's error from `run`.
    this.qosQueue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async writeQos(): Promise<void> {
    const shares = qosCpuShares(this.active.values());
    const reserve = this.options.qosMemoryReserve;
    const memory = reserve === undefined ? undefined : qosMemoryLimits(this.active.values(), reserve);
    const hierarchies = await this.layout();
    for (const qos of ['Burstable', 'BestEffort'] as const) {
      const components = fsComponents(qosCgroupName(qos, this.options), this.options.cgroupDriver);
      // Both QoS cgroups exist whatever pods there are, as upstream's QoS container manager
      // makes them: a share written before a class's first pod would otherwise find no file,
      // and the file would be taken for one that cgroups of that level lack.
      for (const h of hierarchies) for (const p of [...parentsOf(components), components.join('/')]) this.makeParent(h, p);
      const relative = components.join('/');
      if (memory === undefined) {
        this.apply(hierarchies, relative, { cpuShares: shares[qos] });
        continue;
      }
      try {
        this.apply(hierarchies, relative, { cpuShares: shares[qos], memoryLimitBytes: memory[qos] });
      } catch (err) {
        const usage = this.memoryUsage(hierarchies, relative);
        if (usage === undefined || usage <= memory[qos]) throw err;
        this.options.logger.warn('QoS cgroup uses more memory than qosReserved leaves it; limiting it to its usage', { qos, limit: memory[qos], usage });
        this.apply(hierarchies, relative, { cpuShares: shares[qos], memoryLimitBytes: usage });
      }
    }
  }

  /** memory.usage_in_bytes of a cgroup in the v1 memory hierarchy (memory.current in v2), if readable. */
  private memoryUsage(hierarchies: readonly Hierarchy[], relative: string): number | undefined {
    for (const h of hierarchies) {
      for (const file of h.version === 1 ? ['memory.usage_in_bytes'] : ['memory.current']) {
        try {
          return Number(readFileSync(join(h.root, relative, file), 'utf8').trim());
        } catch (err) {
          // Not this hierarchy: the memory controller is mounted elsewhere.
          this.options.logger.v(6, 'no memory usage file here', { hierarchy: h.root, err: messageOf(err) });
        }
      }
    }
    return undefined;
  }

  async remove(podUID: string): Promise<void> {
    checkPodUID(podUID);
    this.removals++;
    this.ensured.delete(podUID);
    const settings = {
      deadline: this.options.clock.now() + (this.options.removeTimeoutMs ?? 10_000),
      clock: this.options.clock,
      retryIntervalMs: this.options.retryIntervalMs ?? 100,
      logger: this.options.logger,
    };
    const candidates = new Set(
      QOS_CLASSES.map((qos) => fsComponents(podCgroupNameFor(podUID, qos, this.options), this.options.cgroupDriver).join('/')),
    );
    const hierarchies = await this.layout();
    await allOrFirstError(
      hierarchies.map(async (h) => {
        for (const relative of candidates) await removeTree(join(h.root, relative), settings);
      }),
    );
    for (const relative of candidates) this.written.delete(relative);
    if (this.active.delete(podUID)) await this.applyQos();
    this.options.logger.v(3, 'pod cgroup removed', { podUID });
  }

  async listPodUIDs(): Promise<string[]> {
    const uids = new Set<string>();
    const hierarchies = await this.layout();
    for (const container of podContainerNames(this.options)) {
      const relative = fsComponents(container, this.options.cgroupDriver);
      for (const { root } of hierarchies) {
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
