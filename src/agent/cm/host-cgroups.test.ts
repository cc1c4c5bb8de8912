import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { OrchError } from '../../api/errors.js';
import { makeTempDir } from './fixtures.js';
import { CM_CGROUP_V2_REQUIRED, cgroupV2Problems, containerSwap, hostCgroupFacts, refuseCgroupV2Settings } from './host-cgroups.js';

void describe("what this host's cgroups honour", () => {
  let dir = '';
  let memory = '';
  before(async () => {
    dir = await makeTempDir('cmhost');
    memory = join(dir, 'memory');
    await mkdir(memory);
    await writeFile(join(memory, 'memory.memsw.limit_in_bytes'), '');
  });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  const hybrid = (): Parameters<typeof hostCgroupFacts>[0] => [
    { path: memory, version: 1, controllers: ['memory'] },
    { path: join(dir, 'systemd'), version: 1, controllers: ['name=systemd'] },
    { path: join(dir, 'unified'), version: 2, controllers: [] },
  ];

  void it('tells a hybrid host with v1 controllers from a unified one, and finds swap accounting', () => {
    assert.deepEqual(hostCgroupFacts(hybrid()), { unified: false, memoryHierarchy: memory, swapAccounting: true });
    assert.equal(hostCgroupFacts([{ path: join(dir, 'unified'), version: 2, controllers: [] }, { path: join(dir, 'systemd'), version: 1, controllers: ['name=systemd'] }]).unified, true);
    assert.equal(hostCgroupFacts([{ path: dir, version: 1, controllers: ['memory'] }]).swapAccounting, false);
  });

  void it('refuses on cgroup v1 what only cgroup v2 has, naming each field', () => {
    const facts = hostCgroupFacts(hybrid());
    const all = { nodeSwapGate: true, swapBehavior: 'LimitedSwap', memoryQoSGate: true, memoryThrottlingFactorSet: true };
    const problems = cgroupV2Problems(all, facts);
    assert.deepEqual(problems.map((p) => p.slice(0, p.indexOf(':'))), ['memorySwap.swapBehavior', 'featureGates.MemoryQoS', 'memoryThrottlingFactor']);
    assert.match(problems[0] ?? '', /memory\.swap\.max, which only cgroup v2 has; this node's memory controller is on cgroup v1/);
    assert.throws(() => { refuseCgroupV2Settings(all, facts); }, (err: unknown) => err instanceof OrchError && err.code === CM_CGROUP_V2_REQUIRED && err.subject === 'memorySwap.swapBehavior, featureGates.MemoryQoS, memoryThrottlingFactor');
    assert.deepEqual(cgroupV2Problems({ nodeSwapGate: false, swapBehavior: 'LimitedSwap', memoryQoSGate: false, memoryThrottlingFactorSet: false }, facts), [], 'without NodeSwap the behaviour is not used');
    assert.deepEqual(cgroupV2Problems(all, { unified: true, memoryHierarchy: undefined, swapAccounting: false }), []);
  });

  void it('gives containers no swap beyond their memory limit, or unlimited swap with UnlimitedSwap', () => {
    const facts = hostCgroupFacts(hybrid());
    assert.equal(containerSwap({ nodeSwapGate: false, swapBehavior: 'UnlimitedSwap' }, facts), 'no-swap');
    assert.equal(containerSwap({ nodeSwapGate: true, swapBehavior: '' }, facts), 'no-swap');
    assert.equal(containerSwap({ nodeSwapGate: true, swapBehavior: 'UnlimitedSwap' }, facts), 'unlimited');
    assert.equal(containerSwap({ nodeSwapGate: true, swapBehavior: 'UnlimitedSwap' }, { ...facts, swapAccounting: false }), undefined);
    assert.match(cgroupV2Problems({ nodeSwapGate: true, swapBehavior: 'UnlimitedSwap', memoryQoSGate: false, memoryThrottlingFactorSet: false }, { ...facts, swapAccounting: false })[0] ?? '', /swapaccount=0/);
  });
});
