import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { FakeLogger } from '../logging/testing.js';
import { BURSTABLE, GUARANTEED, makeTempDir, podWith } from './fixtures.js';
import { createPodCgroups, type PodCgroups } from './pod-cgroups.js';
import { milliCpuToShares, sharesToWeight } from './pod-resources.js';

const A = 'aaaaaaaa-0000-0000-0000-000000000001';
const C = 'cccccccc-0000-0000-0000-000000000003';

function uid(i: number): string {
  return `dddddddd-0000-0000-0000-${String(i).padStart(12, '0')}`;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

void describe('pod cgroups: the cheap common path', () => {
  let dir = '';
  before(async () => {
    dir = await makeTempDir('cmfast');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function fresh(name: string, ...hierarchies: string[]): Promise<{ cgroups: PodCgroups; roots: string[] }> {
    const roots = hierarchies.map((h) => join(dir, name, h));
    for (const r of roots) await mkdir(r, { recursive: true });
    const cgroups = createPodCgroups({ cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger: new FakeLogger(), clock: new FakeClock(), hierarchies: roots });
    return { cgroups, roots };
  }

  void it('does nothing for a pod already made with the same settings, until they change or the pod is removed', async () => {
    const { cgroups, roots } = await fresh('memo', 'memory', 'pids');
    const podDir = (root: string): string => join(root, 'orchpods', 'burstable', `pod${A}`);
    await cgroups.ensure(podWith(A, [BURSTABLE]));
    for (const r of roots) await rmdir(podDir(r)); // behind its back
    await cgroups.ensure(podWith(A, [BURSTABLE]));
    for (const r of roots) assert.equal(await exists(podDir(r)), false, 'the same settings must not touch the file system');
    await cgroups.ensure(podWith(A, [{ requests: { cpu: '200m' } }]));
    for (const r of roots) assert.ok(await exists(podDir(r)), 'new settings make the cgroup again');
    await cgroups.remove(A);
    await cgroups.ensure(podWith(A, [{ requests: { cpu: '200m' } }]));
    for (const r of roots) assert.ok(await exists(podDir(r)), 'after remove the pod is made again');
  });

  void it('makes a QoS parent again when it went away', async () => {
    const { cgroups, roots } = await fresh('parents', 'memory', 'pids');
    await cgroups.ensure(podWith(A, [undefined]));
    await cgroups.remove(A);
    for (const r of roots) await rmdir(join(r, 'orchpods', 'besteffort'));
    await cgroups.ensure(podWith(C, [undefined]));
    for (const r of roots) assert.ok(await exists(join(r, 'orchpods', 'besteffort', `pod${C}`)));
  });

  void it('copies cpuset files only in a cpuset hierarchy', async () => {
    const { cgroups, roots } = await fresh('cpuset', 'cpuset', 'memory');
    const [cpuset, memory] = roots as [string, string];
    await writeFile(join(cpuset, 'cpuset.cpus'), '0-3\n');
    await writeFile(join(cpuset, 'cpuset.mems'), '0\n');
    // Plain directories have no control files: lay out the empty ones a new cgroup would have.
    for (const r of roots) {
      await mkdir(join(r, 'orchpods'), { recursive: true });
      for (const f of ['cpuset.cpus', 'cpuset.mems']) await writeFile(join(r, 'orchpods', f), '');
    }
    await cgroups.ensure(podWith(A, [GUARANTEED]));
    assert.equal(await readFile(join(cpuset, 'orchpods', 'cpuset.cpus'), 'utf8'), '0-3');
    assert.equal(await readFile(join(cpuset, 'orchpods', 'cpuset.mems'), 'utf8'), '0');
    assert.equal(await readFile(join(memory, 'orchpods', 'cpuset.cpus'), 'utf8'), '', 'not a cpuset hierarchy');
  });

  void it('writes v1 files in v1 hierarchies and v2 files in the unified one', async () => {
    const { cgroups, roots } = await fresh('versions', 'cpu', 'unified');
    const [cpu, unified] = roots as [string, string];
    await writeFile(join(unified, 'cgroup.controllers'), 'cpu memory pids\n');
    const rel = join('orchpods', 'burstable', `pod${A}`);
    for (const r of roots) {
      await mkdir(join(r, rel), { recursive: true });
      for (const f of ['cpu.shares', 'cpu.weight']) await writeFile(join(r, rel, f), 'unset');
    }
    await cgroups.ensure(podWith(A, [BURSTABLE]));
    const shares = milliCpuToShares(100);
    assert.equal(await readFile(join(cpu, rel, 'cpu.shares'), 'utf8'), String(shares));
    assert.equal(await readFile(join(cpu, rel, 'cpu.weight'), 'utf8'), 'unset');
    assert.equal(await readFile(join(unified, rel, 'cpu.weight'), 'utf8'), String(sharesToWeight(shares)));
    assert.equal(await readFile(join(unified, rel, 'cpu.shares'), 'utf8'), 'unset');
  });

  void it('many pods at once: every cgroup made, and the QoS shares end with all of them counted', async () => {
    const { cgroups, roots } = await fresh('burst', 'cpu', 'memory', 'pids');
    const [cpu] = roots as [string];
    // Real sibling cgroups have the same control files: both QoS cgroups get cpu.shares, and no
    // Guaranteed pod (a sibling without it in this layout) is made.
    for (const qos of ['burstable', 'besteffort']) {
      await mkdir(join(cpu, 'orchpods', qos), { recursive: true });
      await writeFile(join(cpu, 'orchpods', qos, 'cpu.shares'), '1024');
    }
    const pods = Array.from({ length: 30 }, (_, i) => podWith(uid(i), [i % 2 === 0 ? BURSTABLE : undefined]));
    await Promise.all(pods.map((p) => cgroups.ensure(p)));
    const burstable = pods.filter((_, i) => i % 2 === 0).length;
    assert.equal(await readFile(join(cpu, 'orchpods', 'burstable', 'cpu.shares'), 'utf8'), String(milliCpuToShares(100 * burstable)));
    assert.equal(await readFile(join(cpu, 'orchpods', 'besteffort', 'cpu.shares'), 'utf8'), '2');
    assert.equal((await cgroups.listPodUIDs()).length, pods.length);
    await Promise.all(pods.map((p) => cgroups.remove(p.metadata.uid)));
    assert.deepEqual(await cgroups.listPodUIDs(), []);
    assert.equal(await readFile(join(cpu, 'orchpods', 'burstable', 'cpu.shares'), 'utf8'), String(milliCpuToShares(0)));
  });
});
