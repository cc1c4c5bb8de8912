import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { activeDeadlineLeftMs } from './deadline.js';
import { ensureVolumeRootOwnership, setVolumeOwnership } from './fs-group.js';

void describe('active deadline', () => {
  const pod = (seconds?: number) => ({ spec: { containers: [], ...(seconds === undefined ? {} : { activeDeadlineSeconds: seconds }) } });
  void it('is the time left from the start time; undefined without a deadline or a start', () => {
    const now = new Date('2026-01-01T00:00:10Z');
    assert.equal(activeDeadlineLeftMs(pod(30), '2026-01-01T00:00:00Z', now), 20_000);
    assert.equal(activeDeadlineLeftMs(pod(5), '2026-01-01T00:00:00Z', now), -5000);
    assert.equal(activeDeadlineLeftMs(pod(), '2026-01-01T00:00:00Z', now), undefined);
    assert.equal(activeDeadlineLeftMs(pod(5), undefined, now), undefined);
  });
});

void describe('fsGroup volume ownership', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'na-fsgroup-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  void it('groups everything, adds group rw (and setgid on directories), never follows links', async () => {
    assert.equal(process.getuid?.(), 0, 'chown needs root');
    const vol = path.join(dir, 'vol');
    await mkdir(path.join(vol, 'sub'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(vol, 'sub', 'f'), 'x', { mode: 0o600 });
    await symlink('/etc/hostname', path.join(vol, 'link'));
    await setVolumeOwnership(vol, 4321);
    const sub = await lstat(path.join(vol, 'sub'));
    const file = await lstat(path.join(vol, 'sub', 'f'));
    assert.deepEqual([sub.gid, (sub.mode & 0o7777).toString(8)], [4321, '2770']);
    assert.deepEqual([file.gid, (file.mode & 0o777).toString(8)], [4321, '660']);
    assert.equal((await lstat(path.join(vol, 'link'))).gid, 4321);
    assert.notEqual((await lstat('/etc/hostname')).gid, 4321);
    assert.equal(await ensureVolumeRootOwnership(vol, 4321), false, 'nothing to do');
    await writeFile(path.join(vol, 'g'), '');
    const { chmod } = await import('node:fs/promises');
    await chmod(vol, 0o777);
    assert.equal(await ensureVolumeRootOwnership(vol, 4321), true);
    assert.equal(((await lstat(vol)).mode & 0o7777).toString(8), '2777');
  });
});
