import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { OrchError } from '../../api/errors.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { makeTempDir, removeTempDir } from './fixtures.js';
import { isAtOrBelow, parseMountInfo, readMountInfo, readMountInfoBelow, VOLUME_MOUNTINFO_INVALID } from './mountinfo.js';

const SAMPLE = [
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '36 31 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,relatime master:5 shared:9 - cgroup cgroup rw,cpu,cpuacct',
  '90 22 0:50 / /var/lib/x/with\\040space rw - tmpfs tmpfs rw,size=1024k',
  '91 22 8:1 /srv/data /mnt/bind rw - ext4 /dev/sda1 rw',
  '',
].join('\n');

void describe('parseMountInfo', () => {
  void it('reads every field, with or without optional fields', () => {
    const entries = parseMountInfo(SAMPLE);
    assert.equal(entries.length, 5);
    assert.deepEqual(entries[0], {
      id: 22, parentId: 1, device: '8:1', root: '/', mountPoint: '/', fsType: 'ext4', source: '/dev/sda1', superOptions: 'rw,errors=remount-ro',
    });
    assert.equal(entries[2]!.mountPoint, '/sys/fs/cgroup/cpu,cpuacct');
    assert.equal(entries[2]!.superOptions, 'rw,cpu,cpuacct');
    assert.equal(entries[4]?.root, '/srv/data');
  });

  void it('unescapes octal escapes in paths', () => {
    assert.equal(parseMountInfo(SAMPLE)[3]?.mountPoint, '/var/lib/x/with space');
  });

  void it('rejects a line without the separator', () => {
    assert.throws(() => parseMountInfo('1 2 3:4 / /x rw tmpfs tmpfs rw'), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, VOLUME_MOUNTINFO_INVALID);
      return true;
    });
  });

  void it('reads this process’s real mount table', async () => {
    const entries = await readMountInfo();
    assert.ok(entries.some((e) => e.mountPoint === '/'));
  });
});

void describe('isAtOrBelow', () => {
  void it('is true for the directory and paths below it only', () => {
    assert.equal(isAtOrBelow('/a/b', '/a/b'), true);
    assert.equal(isAtOrBelow('/a/b/c', '/a/b'), true);
    assert.equal(isAtOrBelow('/a/bc', '/a/b'), false);
    assert.equal(isAtOrBelow('/a', '/a/b'), false);
    assert.equal(isAtOrBelow('/x', '/'), true);
  });
});

void describe('readMountInfoBelow', () => {
  void it('parses only the mounts at or below the directory, its escaped name included', async () => {
    const dir = await makeTempDir('mountinfo');
    try {
      const file = join(dir, 'mountinfo');
      await writeFile(file, [
        SAMPLE.trimEnd(),
        '92 90 0:51 / /var/lib/x/with\\040space/pods/a rw - tmpfs tmpfs rw',
        '93 22 0:52 / /var/lib/x/with\\040spaces rw - tmpfs tmpfs rw',
        '94 22 0:53 /var/lib/x/with\\040space /elsewhere rw - none none rw',
        'not a mountinfo line that names nothing we look for',
        '',
      ].join('\n'));
      const found = await readMountInfoBelow('/var/lib/x/with space', file);
      assert.deepEqual(found.map((m) => m.mountPoint), ['/var/lib/x/with space', '/var/lib/x/with space/pods/a']);
      assert.deepEqual(await readMountInfoBelow('/nowhere', file), []);
    } finally {
      await removeTempDir(dir);
    }
  });
});
