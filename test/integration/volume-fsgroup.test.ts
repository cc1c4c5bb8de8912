/**
 * fsGroup ownership as root (chown to a group this process is not in needs CAP_CHOWN): the
 * atomic writer's payload files (the writer's other tests are src/agent/volumes/atomic-writer.test.ts)
 * and the ownership pass over a whole volume (src/agent/podsync/fs-group.ts).
 */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { chmod, lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path, { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../src/api/fake-clock.js';

import { ensureVolumeRootOwnership, setVolumeOwnership } from '../../src/agent/podsync/index.js';
import { writeAtomically, type FileProjection } from '../../src/agent/volumes/index.js';

let tmp = '';
before(async () => {
  assert.equal(process.getuid?.(), 0, 'chown to another group needs root');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'na-fsgroup-'));
});
after(() => rm(tmp, { recursive: true, force: true }));

function file(text: string, mode = 0o644): FileProjection {
  return { data: Buffer.from(text), mode };
}

function payloadOf(entries: Record<string, string | FileProjection>): Map<string, FileProjection> {
  return new Map(Object.entries(entries).map(([k, v]) => [k, typeof v === 'string' ? file(v) : v]));
}

void describe('atomic writer with an fsGroup', () => {
  const clock = new FakeClock(Date.UTC(2024, 4, 1, 12, 0, 0));

  void it('fsGroup: group ownership, g+r on files, setgid and g+rx on directories', async () => {
    const dir = join(tmp, 'atomic');
    await mkdir(dir);
    const gid = 4321;
    await writeAtomically({ dir, payload: payloadOf({ key: file('k', 0o400), 'd/e': 'E' }), clock, fsGroup: gid, subject: 'v' });
    const key = await stat(join(dir, 'key'));
    assert.equal(key.gid, gid);
    assert.equal(key.mode & 0o777, 0o440);
    const sub = await stat(join(dir, 'd'));
    assert.equal(sub.gid, gid);
    assert.equal(sub.mode & 0o2000, 0o2000);
    assert.equal((await stat(join(dir, 'd/e'))).gid, gid);
    // Unchanged with the same fsGroup.
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ key: file('k', 0o400), 'd/e': 'E' }), clock, fsGroup: gid, subject: 'v' }), false);
  });
});

void describe('fsGroup volume ownership', () => {
  void it('groups everything, adds group rw (and setgid on directories), never follows links', async () => {
    const vol = path.join(tmp, 'vol');
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
    await chmod(vol, 0o777);
    assert.equal(await ensureVolumeRootOwnership(vol, 4321), true);
    assert.equal(((await lstat(vol)).mode & 0o7777).toString(8), '2777');
  });
});
