/**
 * The processes the agent moves into cgroups of their own (upstream: the container manager's
 * system containers), at start and then every minute:
 *
 *   | setting             | processes                                                          |
 *   |---------------------|--------------------------------------------------------------------|
 *   | nodeagentCgroups    | the agent itself                                                   |
 *   | systemCgroups       | every non-kernel process of the root cgroup except init (pid 1),  |
 *   |                     | up to 10 passes while new ones appear (`/` is refused)             |
 *   | --runtime-cgroups   | the runtime: the processes listening on the CRI endpoint's socket |
 *
 * Each cgroup is made in every mounted hierarchy (v1 controllers and the unified one) and a
 * process moves by writing its pid to cgroup.procs there; a process already in place is left
 * alone. Reading processes goes through ProcessTable so that tests run on recorded trees, never
 * on this machine's own processes.
 */
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Clock, Timer } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { describeHierarchy, makeCgroup, type Hierarchy } from './cgroup-fs.js';
import type { CgroupHierarchy } from './hierarchies.js';

/** A system cgroup setting cannot be applied (systemCgroups is `/`, a move failed). */
export const CM_SYSTEM_CGROUPS = 'CM_SYSTEM_CGROUPS';

/** The process facts the moves need (procfs and cgroup.procs; a fake in tests). */
export interface ProcessTable {
  /** The pids of a cgroup directory (its cgroup.procs). */
  pids(cgroupDir: string): number[];
  /** Moves a process into a cgroup directory (writes cgroup.procs). */
  move(cgroupDir: string, pid: number): void;
  /** A kernel thread (no executable). */
  isKernelThread(pid: number): boolean;
  /** The cgroup path of a process in each hierarchy, by hierarchy line of /proc/<pid>/cgroup (`4:memory` → `/a/b`). */
  cgroupsOf(pid: number): Map<string, string>;
  /** The processes with an open descriptor on the listening unix socket at `path`. */
  socketOwners(path: string): number[];
}

export function procProcessTable(procRoot = '/proc'): ProcessTable {
  return {
    pids: (dir) => readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l.trim() !== '').map(Number),
    move: (dir, pid) => { writeFileSync(join(dir, 'cgroup.procs'), String(pid)); },
    isKernelThread(pid) {
      try {
        readlinkSync(join(procRoot, String(pid), 'exe'));
        return false;
      } catch (err) {
        return err instanceof Error && 'code' in err && err.code === 'ENOENT';
      }
    },
    cgroupsOf(pid) {
      const result = new Map<string, string>();
      for (const line of readFileSync(join(procRoot, String(pid), 'cgroup'), 'utf8').split('\n')) {
        const m = /^(\d+):([^:]*):(.*)$/.exec(line);
        if (m !== null) result.set(`${m[1]}:${m[2]}`, m[3] ?? '');
      }
      return result;
    },
    socketOwners(path) {
      const inodes = new Set<string>();
      for (const line of readFileSync(join(procRoot, 'net/unix'), 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        // Num RefCount Protocol Flags Type St Inode Path; flags 00010000 is __SO_ACCEPTCON (listening).
        if (fields[7] === path && fields[3] === '00010000' && fields[6] !== undefined) inodes.add(fields[6]);
      }
      const owners: number[] = [];
      for (const entry of readdirSync(procRoot)) {
        if (!/^\d+$/.test(entry)) continue;
        let fds: string[];
        try {
          fds = readdirSync(join(procRoot, entry, 'fd'));
        } catch {
          continue; // the process ended meanwhile, or is not ours to look into
        }
        const holds = fds.some((fd) => {
          try {
            return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(join(procRoot, entry, 'fd', fd)))?.[1] ?? '');
          } catch {
            return false; // closed meanwhile
          }
        });
        if (holds) owners.push(Number(entry));
      }
      return owners;
    },
  };
}

export interface SystemCgroupsOptions {
  readonly hierarchies: readonly CgroupHierarchy[];
  /** nodeagentCgroups, systemCgroups, --runtime-cgroups ('' for none). */
  readonly nodeagentCgroups: string;
  readonly systemCgroups: string;
  readonly runtimeCgroups: string;
  /** The CRI endpoint's socket path, whose listeners are the runtime. */
  readonly runtimeSocket: string;
  readonly selfPid: number;
  readonly processes: ProcessTable;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Between two passes (default one minute, as upstream). */
  readonly periodMs?: number;
}

/** The v1 hierarchy systemCgroups reads the root's processes from: devices, as upstream, else the first. */
function rootHierarchy(hierarchies: readonly CgroupHierarchy[]): CgroupHierarchy | undefined {
  return hierarchies.find((h) => h.controllers.includes('devices')) ?? hierarchies.find((h) => h.version === 1) ?? hierarchies[0];
}

/** Makes the cgroups and moves the processes once now and then every period. Throws CM_SYSTEM_CGROUPS for `/`. */
export async function startSystemCgroups(o: SystemCgroupsOptions): Promise<{ readonly stop: () => void }> {
  if (o.systemCgroups === '/') throw new OrchError(CM_SYSTEM_CGROUPS, 'invalid', 'system container cannot be root ("/")', { subject: 'systemCgroups' });
  if (o.nodeagentCgroups === '' && o.systemCgroups === '' && o.runtimeCgroups === '') return { stop: () => undefined };
  const hierarchies: Hierarchy[] = await Promise.all(o.hierarchies.map((h) => describeHierarchy(h.path)));
  const log = o.logger;

  const ensure = (name: string): void => {
    const parts = name.split('/').filter((p) => p !== '');
    for (const h of hierarchies) for (let i = 1; i <= parts.length; i++) makeCgroup(h, join(h.root, ...parts.slice(0, i)));
  };
  const moveInto = (name: string, pid: number): boolean => {
    const current = o.processes.cgroupsOf(pid);
    const clean = `/${name.split('/').filter((p) => p !== '').join('/')}`;
    if (current.size > 0 && [...current.values()].every((path) => path === clean)) return false;
    for (const h of hierarchies) o.processes.move(join(h.root, clean), pid);
    return true;
  };

  const pass = (): void => {
    const steps: [string, string, () => number[]][] = [
      ['nodeagentCgroups', o.nodeagentCgroups, () => [o.selfPid]],
      ['--runtime-cgroups', o.runtimeCgroups, () => o.processes.socketOwners(o.runtimeSocket)],
    ];
    for (const [setting, name, pidsOf] of steps) {
      if (name === '') continue;
      try {
        ensure(name);
        const pids = pidsOf();
        if (setting === '--runtime-cgroups' && pids.length === 0) log.warn('No process listens on the runtime socket; nothing to move', { socket: o.runtimeSocket });
        for (const pid of pids) if (moveInto(name, pid)) log.info('Moved a process into its cgroup', { setting, cgroup: name, pid });
      } catch (err) {
        log.warn('Cannot move a process into its cgroup; trying again at the next pass', { setting, cgroup: name, err: messageOf(err) });
      }
    }
    if (o.systemCgroups !== '') {
      try {
        moveSystemProcesses();
      } catch (err) {
        log.warn('Cannot move the root cgroup processes into systemCgroups; trying again at the next pass', { cgroup: o.systemCgroups, err: messageOf(err) });
      }
    }
  };

  /** upstream ensureSystemCgroups: up to 10 passes until no non-kernel process but init is left in the root. */
  const moveSystemProcesses = (): void => {
    ensure(o.systemCgroups);
    const root = rootHierarchy(o.hierarchies);
    if (root === undefined) return;
    for (let attempt = 0; attempt <= 10; attempt++) {
      const pids = o.processes.pids(root.path).filter((pid) => pid !== 1 && !o.processes.isKernelThread(pid));
      if (pids.length === 0) return;
      log.v(3, 'Moving the root cgroup processes into systemCgroups', { pids: pids.join(','), cgroup: o.systemCgroups });
      for (const pid of pids) moveInto(o.systemCgroups, pid);
    }
  };

  let timer: Timer | undefined;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    pass();
    timer = o.clock.setTimer(o.periodMs ?? 60_000, tick);
  };
  tick();
  return {
    stop: () => {
      stopped = true;
      timer?.cancel();
    },
  };
}
