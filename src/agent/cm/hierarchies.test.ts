import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { OrchError } from '../../api/errors.js';
import { parseMountInfo } from '../volumes/index.js';
import { makeTempDir } from './fixtures.js';
import { CM_NO_CGROUPS, cgroupHierarchies, discoverCgroupHierarchies } from './hierarchies.js';

const MOUNTINFO = [
  '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
  '31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct',
  '35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory',
  '36 22 0:32 / /mnt/memory-again rw - cgroup cgroup rw,memory',
  '40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd',
  '41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw',
].join('\n');

void describe('cgroup hierarchies', () => {
  let dir = '';
  before(async () => {
    dir = await makeTempDir('cmhier');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('lists each v1 hierarchy once and the unified hierarchy', () => {
    assert.deepEqual(cgroupHierarchies(parseMountInfo(MOUNTINFO)), [
      { path: '/sys/fs/cgroup/cpu,cpuacct', version: 1, controllers: ['cpu', 'cpuacct'] },
      { path: '/sys/fs/cgroup/memory', version: 1, controllers: ['memory'] },
      { path: '/sys/fs/cgroup/systemd', version: 1, controllers: ['name=systemd'] },
      { path: '/sys/fs/cgroup/unified', version: 2, controllers: [] },
    ]);
  });

  void it('fails as unavailable when no cgroup is mounted', async () => {
    const path = join(dir, 'mountinfo');
    await writeFile(path, '22 1 8:1 / / rw - ext4 /dev/sda1 rw\n');
    await assert.rejects(discoverCgroupHierarchies(path), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, CM_NO_CGROUPS);
      assert.equal(err.category, 'unavailable');
      return true;
    });
  });
});
