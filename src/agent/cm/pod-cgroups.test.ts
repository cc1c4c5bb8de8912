import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import assert from 'node:assert/strict';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { OrchError } from '../../api/errors.js';
import { CM_INVALID, type CgroupConfig } from './cgroup-name.js';
import { FakeLogger } from '../logging/testing.js';
import { BURSTABLE, GUARANTEED, makeTempDir, podWith } from './fixtures.js';
import { CM_CGROUP_FAILED, createPodCgroups, type PodCgroups } from './pod-cgroups.js';

const A = 'aaaaaaaa-0000-0000-0000-000000000001';
const B = 'bbbbbbbb-0000-0000-0000-000000000002';
const C = 'cccccccc-0000-0000-0000-000000000003';

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

void describe('pod cgroups on plain directories', () => {
  let dir = '';
  let roots: string[] = [];
  before(async () => {
    dir = await makeTempDir('cmpod');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function fresh(name: string, config: Partial<CgroupConfig> = {}): Promise<PodCgroups> {
    roots = [join(dir, name, 'memory'), join(dir, name, 'unified')];
    for (const r of roots) await mkdir(r, { recursive: true });
    return createPodCgroups({ cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', ...config, logger: new FakeLogger(), clock: new FakeClock(), hierarchies: roots });
  }

  void it('ensure makes the pod cgroup and its QoS parents in every hierarchy, idempotently', async () => {
    const cgroups = await fresh('ensure');
    assert.equal(await cgroups.ensure(podWith(A, [BURSTABLE])), `/orchpods/burstable/pod${A}`);
    assert.equal(await cgroups.ensure(podWith(A, [BURSTABLE])), `/orchpods/burstable/pod${A}`);
    assert.equal(await cgroups.ensure(podWith(B, [GUARANTEED])), `/orchpods/pod${B}`);
    assert.equal(await cgroups.ensure(podWith(C, [undefined])), `/orchpods/besteffort/pod${C}`);
    for (const root of roots) {
      assert.ok(await exists(join(root, 'orchpods', 'burstable', `pod${A}`)));
      assert.ok(await exists(join(root, 'orchpods', `pod${B}`)));
      assert.ok(await exists(join(root, 'orchpods', 'besteffort', `pod${C}`)));
    }
    assert.deepEqual(await cgroups.listPodUIDs(), [A, B, C]);
  });

  void it('remove deletes the pod cgroup (children first) wherever its QoS class put it, and keeps the QoS cgroups', async () => {
    const cgroups = await fresh('remove');
    await cgroups.ensure(podWith(A, [BURSTABLE]));
    await cgroups.ensure(podWith(B, [GUARANTEED]));
    // Leftover container cgroups below the pod (the runtime normally removes them).
    for (const root of roots) await mkdir(join(root, 'orchpods', 'burstable', `pod${A}`, 'ctr1', 'nested'), { recursive: true });
    await cgroups.remove(A);
    await cgroups.remove(A); // idempotent
    for (const root of roots) {
      assert.deepEqual((await readdir(join(root, 'orchpods', 'burstable'))).sort(), []);
      assert.ok(await exists(join(root, 'orchpods', `pod${B}`)));
    }
    assert.deepEqual(await cgroups.listPodUIDs(), [B]);
  });

  void it('systemd driver: slice directories', async () => {
    const cgroups = await fresh('systemd', { cgroupDriver: 'systemd' });
    const escaped = A.replace(/-/g, '_');
    assert.equal(await cgroups.ensure(podWith(A, [BURSTABLE])), `orchpods-burstable-pod${escaped}.slice`);
    for (const root of roots) assert.ok(await exists(join(root, 'orchpods.slice', 'orchpods-burstable.slice', `orchpods-burstable-pod${escaped}.slice`)));
    assert.deepEqual(await cgroups.listPodUIDs(), [A]);
    await cgroups.remove(A);
    assert.deepEqual(await cgroups.listPodUIDs(), []);
  });

  void it('without cgroupsPerQOS: pods directly below the cgroup root, others left alone', async () => {
    const cgroups = await fresh('flat', { cgroupsPerQOS: false, cgroupRoot: '/nodeagent' });
    assert.equal(await cgroups.ensure(podWith(A, [BURSTABLE])), `/nodeagent/pod${A}`);
    for (const root of roots) await mkdir(join(root, 'nodeagent', 'podman'));
    assert.deepEqual(await cgroups.listPodUIDs(), [A]);
    await cgroups.remove(A);
    for (const root of roots) assert.deepEqual(await readdir(join(root, 'nodeagent')), ['podman']);
  });

  void it('finds the hierarchies in mountinfo when none are given', async () => {
    const a = join(dir, 'mounted', 'cpu');
    const b = join(dir, 'mounted', 'unified');
    for (const r of [a, b]) await mkdir(r, { recursive: true });
    const mountInfoPath = join(dir, 'mountinfo');
    await writeFile(mountInfoPath, [`30 1 0:40 / ${a} rw - cgroup cgroup rw,cpu`, `31 1 0:41 / ${b} rw - cgroup2 cgroup2 rw`, ''].join('\n'));
    const cgroups = createPodCgroups({ cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath });
    await cgroups.ensure(podWith(A, [GUARANTEED]));
    for (const r of [a, b]) assert.ok(await exists(join(r, 'orchpods', `pod${A}`)));
  });

  void it('rejects a bad UID, and reports a cgroup that cannot be removed', async () => {
    const cgroups = await fresh('errors');
    await assert.rejects(cgroups.remove('../x'), (err: unknown) => err instanceof OrchError && err.code === CM_INVALID);
    await cgroups.ensure(podWith(A, [GUARANTEED]));
    // A plain file where only cgroup directories can be: rmdir fails with ENOTEMPTY, not EBUSY.
    await writeFile(join(roots[0]!, 'orchpods', `pod${A}`, 'stray'), '');
    await assert.rejects(cgroups.remove(A), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, CM_CGROUP_FAILED);
      assert.match(err.message, new RegExp(`pod${A}`));
      return true;
    });
  });
});
