import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { checkHostPath } from './host-path.js';
import { assertRejectsWith, currentUmask, makeTempDir, removeTempDir } from './fixtures.js';
import { VOLUME_HOSTPATH_TYPE, VOLUME_INVALID } from './types.js';

void describe('checkHostPath', () => {
  let dir = '';
  let server: Server | undefined;
  let socketPath = '';

  before(async () => {
    dir = await makeTempDir('hostpath');
    await mkdir(join(dir, 'a-dir'));
    await writeFile(join(dir, 'a-file'), 'x');
    await symlink(join(dir, 'a-dir'), join(dir, 'link-to-dir'));
    socketPath = join(dir, 'a.sock');
    const listening = createServer();
    server = listening;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(socketPath, resolve);
    });
  });
  after(async () => {
    const s = server;
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => { resolve(); }));
    await removeTempDir(dir);
  });

  void it('checks nothing without a type, even a missing path', async () => {
    await checkHostPath('v', { path: join(dir, 'missing') });
    await checkHostPath('v', { path: join(dir, 'missing'), type: '' });
  });

  void it('DirectoryOrCreate makes missing parents too, mode 0755 less the umask', async () => {
    const path = join(dir, 'new', 'nested');
    await checkHostPath('v', { path, type: 'DirectoryOrCreate' });
    const st = await stat(path);
    assert.ok(st.isDirectory());
    const umask = await currentUmask();
    assert.equal(st.mode & 0o777, 0o755 & ~umask);
    await checkHostPath('v', { path, type: 'DirectoryOrCreate' }); // idempotent
  });

  void it('DirectoryOrCreate on a file names the volume, path, expected and found type', async () => {
    const path = join(dir, 'a-file');
    await assertRejectsWith(checkHostPath('data', { path, type: 'DirectoryOrCreate' }), VOLUME_HOSTPATH_TYPE, [
      'volume "data"', path, 'expected DirectoryOrCreate', 'found File',
    ]);
  });

  void it('Directory accepts a directory and a symlink to one, rejects a missing path', async () => {
    await checkHostPath('v', { path: join(dir, 'a-dir'), type: 'Directory' });
    await checkHostPath('v', { path: join(dir, 'link-to-dir'), type: 'Directory' });
    await assertRejectsWith(checkHostPath('v', { path: join(dir, 'nope'), type: 'Directory' }), VOLUME_HOSTPATH_TYPE, [
      'expected Directory', 'found nothing',
    ]);
  });

  void it('FileOrCreate creates an empty file with mode 0644 less the umask', async () => {
    const path = join(dir, 'created-file');
    await checkHostPath('v', { path, type: 'FileOrCreate' });
    const st = await stat(path);
    assert.ok(st.isFile());
    assert.equal(st.size, 0);
    assert.equal(st.mode & 0o777, 0o644 & ~(await currentUmask()));
    await checkHostPath('v', { path: join(dir, 'a-file'), type: 'FileOrCreate' });
  });

  void it('FileOrCreate does not create a missing parent directory', async () => {
    const path = join(dir, 'no-parent', 'file');
    await assertRejectsWith(checkHostPath('v', { path, type: 'FileOrCreate' }), VOLUME_HOSTPATH_TYPE, [
      'expected FileOrCreate', `parent directory ${join(dir, 'no-parent')} does not exist`,
    ]);
    await assert.rejects(stat(join(dir, 'no-parent')), { code: 'ENOENT' });
  });

  void it('FileOrCreate and File reject a directory', async () => {
    await assertRejectsWith(checkHostPath('v', { path: join(dir, 'a-dir'), type: 'FileOrCreate' }), VOLUME_HOSTPATH_TYPE, ['found Directory']);
    await assertRejectsWith(checkHostPath('v', { path: join(dir, 'a-dir'), type: 'File' }), VOLUME_HOSTPATH_TYPE, ['expected File', 'found Directory']);
    await checkHostPath('v', { path: join(dir, 'a-file'), type: 'File' });
  });

  void it('Socket accepts a listening unix socket and rejects a file', async () => {
    await checkHostPath('v', { path: socketPath, type: 'Socket' });
    await assertRejectsWith(checkHostPath('v', { path: join(dir, 'a-file'), type: 'Socket' }), VOLUME_HOSTPATH_TYPE, ['expected Socket', 'found File']);
    await assertRejectsWith(checkHostPath('v', { path: socketPath, type: 'File' }), VOLUME_HOSTPATH_TYPE, ['found Socket']);
  });

  void it('CharDevice accepts /dev/null; BlockDevice rejects it', async () => {
    await checkHostPath('v', { path: '/dev/null', type: 'CharDevice' });
    await assertRejectsWith(checkHostPath('v', { path: '/dev/null', type: 'BlockDevice' }), VOLUME_HOSTPATH_TYPE, [
      '/dev/null', 'expected BlockDevice', 'found CharDevice',
    ]);
    await assertRejectsWith(checkHostPath('v', { path: join(dir, 'a-dir'), type: 'CharDevice' }), VOLUME_HOSTPATH_TYPE, ['found Directory']);
  });

  void it('rejects an unknown type, an empty path and a path with ..', async () => {
    await assertRejectsWith(checkHostPath('v', { path: dir, type: 'Dir' }), VOLUME_INVALID, ['unknown type "Dir"']);
    await assertRejectsWith(checkHostPath('v', { path: '' }), VOLUME_INVALID, ['must not be empty']);
    await assertRejectsWith(checkHostPath('v', { path: `${dir}/../etc` }), VOLUME_INVALID, ["contain '..'"]);
  });
});
