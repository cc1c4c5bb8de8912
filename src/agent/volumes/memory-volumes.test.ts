/**
 * The node's tmpfs for secret and projected volumes, without root: a fake mountinfo says the
 * tmpfs is mounted already, so no mount(8) runs (the real mount: test/integration/volume-secret-tmpfs.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, statfsSync, statSync } from 'node:fs';
import { lstat, mkdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { FakeLogger } from '../logging/testing.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { createMemoryVolumes, MEMORY_VOLUMES_DIR, type MemoryVolumes } from './memory-volumes.js';
import { VOLUME_MOUNT_FAILED } from './types.js';

function makeDir(dir: string, mode: number): void {
  mkdirSync(dir, { recursive: true, mode });
  if ((statSync(dir).mode & 0o777) !== mode) chmodSync(dir, mode);
}

void describe('memory volumes (the node tmpfs already mounted)', () => {
  let dir = '';
  let rootDir = '';
  let memory: MemoryVolumes;
  const volumeDir = (uid: string, name: string): string => join(rootDir, 'pods', uid, 'volumes', 'orch.io~projected', name);
  before(async () => {
    dir = await makeTempDir('memvol');
    rootDir = join(dir, 'root');
    const mountInfoPath = join(dir, 'mountinfo');
    await writeFile(mountInfoPath, `22 1 8:1 / / rw - ext4 /dev/vda rw\n95 22 0:60 / ${join(rootDir, MEMORY_VOLUMES_DIR)} rw - tmpfs tmpfs rw\n`);
    memory = createMemoryVolumes({ rootDir, logger: new FakeLogger(), mountInfoPath, makeDir });
  });
  after(async () => {
    await removeTempDir(dir);
  });

  void it('links the volume directory to its own directory on the node tmpfs, once', async () => {
    const link = volumeDir('p-1', 'token');
    await memory.prepare('p-1', 'orch.io~projected', 'token', link, 0o777);
    const target = join(rootDir, MEMORY_VOLUMES_DIR, 'p-1', 'orch.io~projected', 'token');
    assert.equal(await readlink(link), target);
    assert.equal((await stat(target)).mode & 0o777, 0o777);
    assert.equal((await stat(join(rootDir, MEMORY_VOLUMES_DIR))).mode & 0o777, 0o750);
    await writeFile(join(link, 'token'), 'abc');
    await memory.prepare('p-1', 'orch.io~projected', 'token', link, 0o777);
    assert.equal((await lstat(join(target, 'token'))).isFile(), true, 'a second prepare keeps the files');
    assert.deepEqual(memory.listPods(), ['p-1']);
  });

  void it('makes the target again when the tmpfs lost it (a reboot), keeping the link', async () => {
    const link = volumeDir('p-2', 'token');
    await memory.prepare('p-2', 'orch.io~projected', 'token', link, 0o777);
    await rm(join(rootDir, MEMORY_VOLUMES_DIR, 'p-2'), { recursive: true });
    await memory.prepare('p-2', 'orch.io~projected', 'token', link, 0o777);
    assert.equal((await stat(link)).isDirectory(), true);
  });

  void it('replaces an empty directory left on disk by a link, and refuses one that holds files or a file', async (t) => {
    // On a tmpfs a directory is an earlier version's volume, kept as it is: nothing to test there.
    if (statfsSync(dir).type === 0x01021994) {
      t.skip('the temporary directory is on a tmpfs');
      return;
    }
    const emptyDir = volumeDir('p-3', 'empty');
    await mkdir(emptyDir, { recursive: true });
    await memory.prepare('p-3', 'orch.io~projected', 'empty', emptyDir, 0o777);
    assert.equal((await lstat(emptyDir)).isSymbolicLink(), true);
    const full = volumeDir('p-3', 'full');
    await mkdir(full, { recursive: true });
    await writeFile(join(full, 'x'), 'x');
    await assertRejectsWith(memory.prepare('p-3', 'orch.io~projected', 'full', full, 0o777), VOLUME_MOUNT_FAILED);
    const file = volumeDir('p-3', 'file');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, 'x');
    await assertRejectsWith(memory.prepare('p-3', 'orch.io~projected', 'file', file, 0o777), VOLUME_MOUNT_FAILED);
  });

  void it('removes a pod’s files and lists the pods left', async () => {
    await memory.prepare('p-4', 'orch.io~secret', 'db', join(rootDir, 'pods', 'p-4', 'volumes', 'orch.io~secret', 'db'), 0o777);
    await memory.removePod('p-4');
    await memory.removePod('p-4');
    assert.equal(memory.listPods().includes('p-4'), false);
  });
});
