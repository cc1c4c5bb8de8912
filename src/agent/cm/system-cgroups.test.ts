import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { makeTempDir } from './fixtures.js';
import type { CgroupHierarchy } from './hierarchies.js';
import { CM_SYSTEM_CGROUPS, startSystemCgroups, type ProcessTable, type SystemCgroupsOptions } from './system-cgroups.js';

/** A recorded process table: cgroup.procs of each directory, kernel threads, socket listeners; moves are kept in memory. */
class RecordedProcesses implements ProcessTable {
  readonly procs = new Map<string, Set<number>>();
  constructor(private readonly roots: readonly string[], private readonly kernel: ReadonlySet<number>, private readonly listeners: Readonly<Record<string, number[]>>) {}
  place(dir: string, pid: number): void {
    const root = this.roots.find((r) => dir.startsWith(r)) ?? dir;
    for (const [d, set] of this.procs) if (d.startsWith(root)) set.delete(pid);
    this.procs.set(dir, (this.procs.get(dir) ?? new Set()).add(pid));
  }
  pids(dir: string): number[] { return [...(this.procs.get(dir) ?? [])]; }
  move(dir: string, pid: number): void { this.place(dir, pid); }
  isKernelThread(pid: number): boolean { return this.kernel.has(pid); }
  cgroupsOf(pid: number): Map<string, string> {
    const result = new Map<string, string>();
    this.roots.forEach((root, i) => {
      const dir = [...this.procs].find(([d, set]) => d.startsWith(root) && set.has(pid))?.[0];
      result.set(`${i + 1}:x`, dir === undefined ? '/' : `/${dir.slice(root.length + 1)}`.replace(/\/$/, '') || '/');
    });
    return result;
  }
  socketOwners(path: string): number[] { return this.listeners[path] ?? []; }
}

void describe('system cgroups', () => {
  let dir = '';
  before(async () => { dir = await makeTempDir('cmsystem'); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  async function setup(name: string): Promise<{ hierarchies: CgroupHierarchy[]; processes: RecordedProcesses; base: Omit<SystemCgroupsOptions, 'processes'> }> {
    const hierarchies: CgroupHierarchy[] = [];
    for (const c of ['devices', 'memory']) {
      await mkdir(join(dir, name, c), { recursive: true });
      hierarchies.push({ path: join(dir, name, c), version: 1, controllers: [c] });
    }
    const processes = new RecordedProcesses(hierarchies.map((h) => h.path), new Set([2, 3]), { '/run/ctrd.sock': [40] });
    for (const h of hierarchies) for (const pid of [1, 2, 3, 10, 11, 40, 99]) processes.place(h.path, pid);
    return {
      hierarchies, processes,
      base: { hierarchies, nodeagentCgroups: '', systemCgroups: '', runtimeCgroups: '', runtimeSocket: '/run/ctrd.sock', selfPid: 99, clock: new FakeClock(), logger: new FakeLogger() },
    };
  }

  void it('moves the agent and the runtime into their cgroups in every hierarchy', async () => {
    const { hierarchies, processes, base } = await setup('agent');
    const { stop } = await startSystemCgroups({ ...base, processes, nodeagentCgroups: '/na/agent', runtimeCgroups: '/na/runtime' });
    stop();
    for (const h of hierarchies) {
      assert.deepEqual(processes.pids(join(h.path, 'na/agent')), [99]);
      assert.deepEqual(processes.pids(join(h.path, 'na/runtime')), [40]);
      assert.deepEqual(processes.pids(h.path).sort((a, b) => a - b), [1, 2, 3, 10, 11], 'no other process moved');
    }
  });

  void it('moves every non-kernel process of the root but init into systemCgroups, again at each pass', async () => {
    const { hierarchies, processes, base } = await setup('system');
    const clock = new FakeClock();
    const { stop } = await startSystemCgroups({ ...base, processes, clock, systemCgroups: '/system' });
    const [devices] = hierarchies;
    assert.ok(devices !== undefined);
    assert.deepEqual(processes.pids(join(devices.path, 'system')).sort((a, b) => a - b), [10, 11, 40, 99]);
    assert.deepEqual(processes.pids(devices.path).sort((a, b) => a - b), [1, 2, 3]);
    processes.place(devices.path, 12);
    await clock.advance(60_000);
    assert.ok(processes.pids(join(devices.path, 'system')).includes(12), 'a new process is moved at the next pass');
    stop();
  });

  void it('refuses the root cgroup as systemCgroups', async () => {
    const { processes, base } = await setup('root');
    await assert.rejects(startSystemCgroups({ ...base, processes, systemCgroups: '/' }), (err: unknown) => err instanceof OrchError && err.code === CM_SYSTEM_CGROUPS
      && err.message === 'system container cannot be root ("/")');
  });
});
