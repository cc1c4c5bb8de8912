import assert from 'node:assert/strict';
import { mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { CM_NODE_ALLOCATABLE, FAILED_NODE_ALLOCATABLE_ENFORCEMENT, NODE_ALLOCATABLE_ENFORCED, enforceNodeAllocatable, type EnforceAllocatableOptions } from './enforce-allocatable.js';
import { makeTempDir } from './fixtures.js';
import type { CgroupHierarchy } from './hierarchies.js';

const FILES: Readonly<Record<string, readonly string[]>> = { cpu: ['cpu.shares'], memory: ['memory.limit_in_bytes'], pids: ['pids.max'] };

void describe('node allocatable enforcement', () => {
  let dir = '';
  before(async () => { dir = await makeTempDir('cmenforce'); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  /** Three v1 hierarchies below `name` where the given cgroups exist with their control files (a stand-in for cgroupfs). */
  async function tree(name: string, cgroups: readonly string[]): Promise<CgroupHierarchy[]> {
    const hierarchies: CgroupHierarchy[] = [];
    for (const [controller, files] of Object.entries(FILES)) {
      const root = join(dir, name, controller);
      for (const cgroup of ['', ...cgroups]) {
        await mkdir(join(root, cgroup), { recursive: true });
        for (const f of files) await writeFile(join(root, cgroup, f), '');
      }
      hierarchies.push({ path: root, version: 1, controllers: [controller] });
    }
    return hierarchies;
  }

  function options(hierarchies: CgroupHierarchy[], extra: Partial<EnforceAllocatableOptions> = {}): EnforceAllocatableOptions & { events: string[] } {
    const events: string[] = [];
    return {
      hierarchies, podsCgroup: ['root', 'orchpods'], podsCgroupName: '/root/orchpods',
      podsConfig: { cpuShares: 1536, memoryLimitBytes: 1000, pidsLimit: 500 }, reserved: [],
      clock: new FakeClock(), logger: new FakeLogger(), onEvent: (type, reason, message) => { events.push(`${type} ${reason} ${message}`); },
      events, ...extra,
    };
  }

  void it('writes the pods cgroup limits in every hierarchy and the reservations on the reserved cgroups', async () => {
    const hierarchies = await tree('ok', ['root/orchpods', 'system.slice']);
    const o = options(hierarchies, { reserved: [{ level: 'system-reserved', name: '/system.slice', config: { cpuShares: 512, memoryLimitBytes: 200 } }] });
    const { stop } = await enforceNodeAllocatable(o);
    stop();
    const read = (h: number, cgroup: string, file: string): Promise<string> => readFile(join(hierarchies[h]?.path ?? '', cgroup, file), 'utf8');
    assert.equal(await read(0, 'root/orchpods', 'cpu.shares'), '1536');
    assert.equal(await read(1, 'root/orchpods', 'memory.limit_in_bytes'), '1000');
    assert.equal(await read(2, 'root/orchpods', 'pids.max'), '500');
    assert.equal(await read(1, 'system.slice', 'memory.limit_in_bytes'), '200');
    assert.deepEqual(o.events, [
      `Normal ${NODE_ALLOCATABLE_ENFORCED} Updated Node Allocatable limit across pods`,
      `Normal ${NODE_ALLOCATABLE_ENFORCED} Updated limits on system reserved cgroup /system.slice`,
    ]);
  });

  void it('refuses a reserved cgroup that does not exist', async () => {
    const o = options(await tree('missing', ['root/orchpods']), { reserved: [{ level: 'orch-reserved', name: '/orch.slice', config: { memoryLimitBytes: 200 } }] });
    await assert.rejects(enforceNodeAllocatable(o), (err: unknown) => err instanceof OrchError && err.code === CM_NODE_ALLOCATABLE && err.subject === 'orchReservedCgroup'
      && /Failed to enforce Orch Reserved Cgroup Limits on "\/orch.slice": "\/orch.slice" cgroup does not exist/.test(err.message));
    assert.match(o.events.at(-1) ?? '', new RegExp(`^Warning ${FAILED_NODE_ALLOCATABLE_ENFORCEMENT}`));
  });

  void it('tries the pods cgroup again every minute while a write fails', async () => {
    const hierarchies = await tree('retry', ['root/orchpods']);
    const memoryFile = join(hierarchies[1]?.path ?? '', 'root/orchpods/memory.limit_in_bytes');
    await rm(memoryFile);
    await mkdir(memoryFile); // a write fails (as a limit below the usage does)
    const clock = new FakeClock();
    const o = options(hierarchies, { clock });
    const { stop } = await enforceNodeAllocatable(o);
    assert.match(o.events[0] ?? '', /^Warning FailedNodeAllocatableEnforcement Failed to update Node Allocatable Limits "\/root\/orchpods"/);
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [60_000]);
    await rmdir(memoryFile);
    await writeFile(memoryFile, '');
    await clock.advance(60_000);
    assert.equal(await readFile(memoryFile, 'utf8'), '1000');
    assert.equal(o.events.at(-1), `Normal ${NODE_ALLOCATABLE_ENFORCED} Updated Node Allocatable limit across pods`);
    assert.deepEqual(clock.pending(), []);
    stop();
  });
});
