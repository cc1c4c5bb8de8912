import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container } from 'kubernetes-types/core/v1.js';

import { mountsFor } from './mounts.js';
import { expandSubPathExpr, resolveSubPath } from './subpath.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { VOLUME_INVALID, VOLUME_SUBPATH_INVALID, type PodVolume } from './types.js';

void describe('subPath', () => {
  let dir = '';
  let volume = '';
  let outside = '';
  before(async () => {
    dir = await makeTempDir('subpath');
    volume = join(dir, 'vol');
    outside = join(dir, 'outside');
    await mkdir(volume);
    await chmod(volume, 0o777);
    await mkdir(outside);
    await mkdir(join(volume, 'inner'));
    await symlink(outside, join(volume, 'escape'));
    await symlink('../../outside', join(volume, 'inner', 'relative-escape'));
    await symlink('inner', join(volume, 'inside-link'));
  });
  after(async () => {
    await removeTempDir(dir);
  });
  const subject = (subPath: string): { container: string; volume: string; subPath: string } => ({ container: 'app', volume: 'data', subPath });

  void it('creates a missing subPath with the volume root’s mode, whatever the umask', async () => {
    const resolved = await resolveSubPath(volume, subject('a/b/c'));
    assert.equal(resolved, join(volume, 'a', 'b', 'c'));
    for (const p of ['a', 'a/b', 'a/b/c']) assert.equal((await stat(join(volume, p))).mode & 0o7777, 0o777);
    assert.equal(await resolveSubPath(volume, subject('a/b/c')), resolved); // idempotent
  });

  void it('follows a symlink that stays inside the volume', async () => {
    assert.equal(await resolveSubPath(volume, subject('inside-link/x')), join(volume, 'inner', 'x'));
  });

  void it('rejects .., absolute paths and symlinks out of the volume, naming container, volume and subPath', async () => {
    const cases: [string, string][] = [
      ['../outside', "must not contain '..'"],
      ['a/../../outside', "must not contain '..'"],
      ['/etc', 'must be a relative path'],
      ['escape', 'pointing outside the volume'],
      ['escape/sub', 'pointing outside the volume'],
      ['inner/relative-escape', 'pointing outside the volume'],
    ];
    for (const [subPath, why] of cases) {
      await assertRejectsWith(resolveSubPath(volume, subject(subPath)), VOLUME_SUBPATH_INVALID, [
        'container "app"', 'volume "data"', JSON.stringify(subPath), why,
      ]);
    }
    await assert.rejects(stat(join(outside, 'sub')), { code: 'ENOENT' }); // nothing made outside
  });

  void it('expands subPathExpr from the environment', () => {
    const env = new Map([['POD_NAME', 'web-0'], ['NS', 'prod']]);
    assert.equal(expandSubPathExpr('logs/$(NS)/$(POD_NAME)', env), 'logs/prod/web-0');
    assert.equal(expandSubPathExpr('$$(NS)-$(MISSING)', env), '$(NS)-$(MISSING)');
  });
});

void describe('mountsFor', () => {
  let dir = '';
  let volumes = new Map<string, PodVolume>();
  before(async () => {
    dir = await makeTempDir('mounts');
    await mkdir(join(dir, 'empty'));
    volumes = new Map<string, PodVolume>([
      ['cache', { kind: 'emptyDir', hostPath: join(dir, 'empty'), readOnly: false }],
      ['host', { kind: 'hostPath', hostPath: '/dev/null', readOnly: false }],
      ['ro', { kind: 'emptyDir', hostPath: join(dir, 'empty'), readOnly: true }],
    ]);
  });
  after(async () => {
    await removeTempDir(dir);
  });

  void it('resolves readOnly, propagation and subPathExpr, and adds /etc/hosts', async () => {
    const container: Container = {
      name: 'app',
      volumeMounts: [
        { name: 'cache', mountPath: '/cache' },
        { name: 'host', mountPath: '/dev/null2', readOnly: true, mountPropagation: 'HostToContainer' },
        { name: 'ro', mountPath: '/ro' },
        { name: 'cache', mountPath: '/per-pod', subPathExpr: 'p/$(POD)' },
      ],
    };
    const mounts = await mountsFor(container, volumes, { env: new Map([['POD', 'web-0']]), etcHostsPath: '/x/etc-hosts' });
    assert.deepEqual(mounts, [
      { containerPath: '/cache', hostPath: join(dir, 'empty'), readonly: false },
      { containerPath: '/dev/null2', hostPath: '/dev/null', readonly: true, propagation: 'HostToContainer' },
      { containerPath: '/ro', hostPath: join(dir, 'empty'), readonly: true },
      { containerPath: '/per-pod', hostPath: join(dir, 'empty', 'p', 'web-0'), readonly: false },
      { containerPath: '/etc/hosts', hostPath: '/x/etc-hosts', readonly: false },
    ]);
  });

  void it('keeps a container’s own /etc/hosts mount and adds none without a hosts file', async () => {
    const own = await mountsFor({ name: 'a', volumeMounts: [{ name: 'cache', mountPath: '/etc/hosts', subPath: 'hosts' }] }, volumes, {
      etcHostsPath: '/x/etc-hosts',
    });
    assert.deepEqual(own.map((m) => m.containerPath), ['/etc/hosts']);
    assert.equal(own[0]?.hostPath, join(dir, 'empty', 'hosts'));
    assert.deepEqual(await mountsFor({ name: 'a' }, volumes), []);
  });

  void it('rejects what it cannot mount, naming the container', async () => {
    const cases: [Container, string][] = [
      [{ name: 'c', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }, 'cannot find volume "nope"'],
      [{ name: 'c', volumeMounts: [{ name: 'cache', mountPath: '/x' }, { name: 'ro', mountPath: '/x' }] }, 'used more than once'],
      [{ name: 'c', volumeMounts: [{ name: 'cache', mountPath: '/x', mountPropagation: 'Bidirectional' }] }, 'only to privileged'],
      [{ name: 'c', volumeMounts: [{ name: 'cache', mountPath: '/x', mountPropagation: 'Shared' }] }, 'unknown mountPropagation'],
      [{ name: 'c', volumeMounts: [{ name: 'cache', mountPath: '/x', subPath: 'a', subPathExpr: 'b' }] }, 'mutually exclusive'],
      [{ name: 'c', volumeMounts: [{ name: 'cache', mountPath: '/x', recursiveReadOnly: 'Enabled' }] }, 'recursiveReadOnly'],
    ];
    for (const [container, message] of cases) {
      await assertRejectsWith(mountsFor(container, volumes), VOLUME_INVALID, ['container "c"', message]);
    }
    await assertRejectsWith(mountsFor({ name: 'c', volumeMounts: [{ name: 'cache', mountPath: '/x', subPath: '../..' }] }, volumes), VOLUME_SUBPATH_INVALID, [
      'container "c"', 'volume "cache"',
    ]);
  });

  void it('allows Bidirectional in a privileged container', async () => {
    const mounts = await mountsFor(
      { name: 'p', securityContext: { privileged: true }, volumeMounts: [{ name: 'cache', mountPath: '/x', mountPropagation: 'Bidirectional' }] },
      volumes,
    );
    assert.equal(mounts[0]?.propagation, 'Bidirectional');
  });
});
