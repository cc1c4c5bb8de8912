import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile, lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getgid } from 'node:process';

import { requiresPermissionChange, setVolumeOwnership } from './ownership.js';

void describe('setVolumeOwnership (fsGroup)', () => {
  let dir = '';
  // Without root a process may only give files one of its own groups: its primary group is one.
  const gid = getgid?.() ?? 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ownership-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const volume = async (name: string): Promise<string> => {
    const root = join(dir, name);
    await mkdir(join(root, 'sub'), { recursive: true });
    await writeFile(join(root, 'sub', 'file'), 'x');
    await writeFile(join(root, 'outside-target'), 'y');
    await chmod(join(root, 'outside-target'), 0o600);
    await symlink(join(root, 'outside-target'), join(root, 'link'));
    await chmod(join(root, 'sub', 'file'), 0o600);
    await chmod(join(root, 'sub'), 0o700);
    await chmod(root, 0o700);
    return root;
  };

  void it('adds the group bits to files, x and setgid to directories, and leaves symlinks\' targets alone', async () => {
    const root = await volume('rw');
    assert.equal(await setVolumeOwnership(root, { fsGroup: gid, readOnly: false }), true);
    assert.equal((await stat(join(root, 'sub', 'file'))).mode & 0o7777, 0o660);
    assert.equal((await stat(join(root, 'sub'))).mode & 0o7777, 0o2770);
    assert.equal((await stat(root)).mode & 0o7777, 0o2770);
    // The target is changed as a file of the volume itself, never through the link (no chmod of a symlink).
    assert.equal((await stat(join(root, 'outside-target'))).mode & 0o7777, 0o660);
    assert.equal((await lstat(join(root, 'link'))).isSymbolicLink(), true);
    assert.equal((await stat(join(root, 'sub', 'file'))).gid, gid);
  });

  void it('gives read-only volumes r (not w) to the group', async () => {
    const root = await volume('ro');
    await setVolumeOwnership(root, { fsGroup: gid, readOnly: true });
    assert.equal((await stat(join(root, 'sub', 'file'))).mode & 0o7777, 0o640);
    assert.equal((await stat(join(root, 'sub'))).mode & 0o7777, 0o2750);
  });

  void it('OnRootMismatch skips a volume whose root is already right, and walks one whose root is not', async () => {
    const root = await volume('mismatch');
    assert.equal(await requiresPermissionChange(root, gid, false), true, 'no setgid, no group bits');
    assert.equal(await setVolumeOwnership(root, { fsGroup: gid, readOnly: false, changePolicy: 'OnRootMismatch' }), true);
    assert.equal(await requiresPermissionChange(root, gid, false), false);
    await chmod(join(root, 'sub', 'file'), 0o600);
    assert.equal(await setVolumeOwnership(root, { fsGroup: gid, readOnly: false, changePolicy: 'OnRootMismatch' }), false, 'root matches: nothing done');
    assert.equal((await stat(join(root, 'sub', 'file'))).mode & 0o777, 0o600);
    assert.equal(await setVolumeOwnership(root, { fsGroup: gid, readOnly: false, changePolicy: 'Always' }), true);
    assert.equal((await stat(join(root, 'sub', 'file'))).mode & 0o777, 0o660);
    assert.equal(await requiresPermissionChange(root, gid + 1, false), true, 'another group');
  });

  void it('fails for a root that cannot be read', async () => {
    await assert.rejects(setVolumeOwnership(join(dir, 'missing'), { fsGroup: gid, readOnly: false }), /ENOENT/);
  });
});
