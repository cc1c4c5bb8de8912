/**
 * configMap, secret, projected and downwardAPI volumes through the volume manager: layout,
 * refresh on every call, the refresh-failure rule, read-only mounts (tmpfs for secrets, which
 * needs root, is test/integration/volume-secret-tmpfs.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import assert from 'node:assert/strict';
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigMap, Secret, Volume } from 'kubernetes-types/core/v1.js';

import { DATA_DIR_NAME } from './atomic-writer.js';
import { FakeLogger } from '../logging/testing.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { createVolumeManager } from './manager.js';
import { mountsFor } from './mounts.js';
import { volumeDir } from './paths.js';
import { VOLUME_KEY_NOT_FOUND, VOLUME_OBJECT_NOT_FOUND, VOLUME_OBJECT_UNAVAILABLE, type VolumeObjectSource } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

/** An in-memory API: maps to edit between calls, and a switch to make reads fail. */
class FakeObjects implements VolumeObjectSource {
  readonly configMaps = new Map<string, ConfigMap>();
  readonly secrets = new Map<string, Secret>();
  failing = false;
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    if (this.failing) return Promise.reject(new Error('apiserver unreachable'));
    return Promise.resolve(this.configMaps.get(`${namespace}/${name}`));
  }
  secret(namespace: string, name: string): Promise<Secret | undefined> {
    if (this.failing) return Promise.reject(new Error('apiserver unreachable'));
    return Promise.resolve(this.secrets.get(`${namespace}/${name}`));
  }
}

function pod(uid: string, volumes: Volume[], labels: Record<string, string> = {}, fsGroup?: number): NodePod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid, labels },
    spec: {
      containers: [{ name: 'app', volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/mnt/${v.name}` })) }],
      volumes,
      ...(fsGroup === undefined ? {} : { securityContext: { fsGroup } }),
    },
  };
}

async function payloadDirs(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith('..') && n !== DATA_DIR_NAME);
}

void describe('API-backed volumes through the manager', () => {
  let rootDir = '';
  const objects = new FakeObjects();
  const logger = new FakeLogger();
  const clock = new FakeClock(Date.UTC(2024, 0, 1));
  const make = (withObjects = true): ReturnType<typeof createVolumeManager> =>
    createVolumeManager({
      rootDir,
      logger,
      clock,
      nodeCapacity: () => ({ cpuMilli: 3000, memoryBytes: 1 << 30 }),
      ...(withObjects ? { objects } : {}),
    });
  before(async () => {
    rootDir = await makeTempDir('apivol');
  });
  after(async () => {
    if (rootDir !== '') await removeTempDir(rootDir);
  });

  void it('configMap: written under orch.io~configmap, read-only, refreshed only when it changes', async () => {
    objects.configMaps.set('ns/app', { metadata: { name: 'app' }, data: { 'a.conf': 'v1', keep: 'k', drop: 'd' } });
    const manager = make();
    const p = pod('c-1', [{ name: 'cfg', configMap: { name: 'app', defaultMode: 0o444 } }]);
    const volumes = await manager.preparePodVolumes(p);
    const dir = volumeDir(rootDir, 'c-1', 'orch.io~configmap', 'cfg');
    assert.deepEqual(volumes.get('cfg'), { kind: 'configMap', hostPath: dir, readOnly: true });
    assert.equal(await readFile(join(dir, 'a.conf'), 'utf8'), 'v1');
    assert.equal((await stat(join(dir, 'a.conf'))).mode & 0o777, 0o444);
    const mounts = await mountsFor(p.spec!.containers[0]!, volumes);
    assert.deepEqual(mounts, [{ containerPath: '/mnt/cfg', hostPath: dir, readonly: true }]);

    const first = await readlink(join(dir, DATA_DIR_NAME));
    await manager.preparePodVolumes(p);
    assert.equal(await readlink(join(dir, DATA_DIR_NAME)), first, 'unchanged: not rewritten');

    objects.configMaps.set('ns/app', { metadata: { name: 'app' }, data: { 'a.conf': 'v2', keep: 'k' } });
    await manager.preparePodVolumes(p);
    assert.notEqual(await readlink(join(dir, DATA_DIR_NAME)), first);
    assert.equal(await readFile(join(dir, 'a.conf'), 'utf8'), 'v2');
    await assert.rejects(lstat(join(dir, 'drop')), { code: 'ENOENT' });
    assert.equal((await payloadDirs(dir)).length, 1);
  });

  void it('a failed refresh keeps the files written before; a failed first setup writes nothing', async () => {
    const manager = make();
    const p = pod('c-2', [{ name: 'cfg', configMap: { name: 'app', items: [{ key: 'keep', path: 'k' }] } }]);
    await manager.preparePodVolumes(p);
    objects.failing = true;
    await manager.preparePodVolumes(p);
    objects.failing = false;
    objects.configMaps.delete('ns/app');
    await manager.preparePodVolumes(p);
    assert.equal(await readFile(join(volumeDir(rootDir, 'c-2', 'orch.io~configmap', 'cfg'), 'k'), 'utf8'), 'k');
    assert.ok(logger.lines.some((e) => e.level === 'warn' && e.msg.includes('keeping its previous content') && String(e.fields.err).includes('not found')));

    await assertRejectsWith(manager.preparePodVolumes(pod('c-3', [{ name: 'cfg', configMap: { name: 'app' } }])), VOLUME_OBJECT_NOT_FOUND, ['volume "cfg"', 'configMap "app" not found']);
    await assert.rejects(stat(volumeDir(rootDir, 'c-3', 'orch.io~configmap', 'cfg')), { code: 'ENOENT' });
    objects.failing = true;
    await assertRejectsWith(manager.preparePodVolumes(pod('c-4', [{ name: 'cfg', configMap: { name: 'app' } }])), VOLUME_OBJECT_UNAVAILABLE, ['apiserver unreachable']);
    objects.failing = false;
    objects.configMaps.set('ns/app', { metadata: { name: 'app' }, data: { x: 'y' } });
    await assertRejectsWith(
      manager.preparePodVolumes(pod('c-5', [{ name: 'cfg', configMap: { name: 'app', items: [{ key: 'nope', path: 'n' }] } }])),
      VOLUME_KEY_NOT_FOUND,
      ['has no key "nope"'],
    );
  });

  void it('an optional configMap that does not exist gives an empty volume', async () => {
    const volumes = await make().preparePodVolumes(pod('c-6', [{ name: 'cfg', configMap: { name: 'ghost', optional: true } }]));
    const dir = volumes.get('cfg')!.hostPath;
    assert.deepEqual((await readdir(dir)).filter((n) => !n.startsWith('..')), []);
  });

  void it('downwardAPI works standalone, and follows label changes', async () => {
    const manager = make(false);
    const volume: Volume = {
      name: 'info',
      downwardAPI: {
        items: [
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'cpu', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu' } },
        ],
      },
    };
    const volumes = await manager.preparePodVolumes(pod('d-1', [volume], { b: '2', a: '1' }));
    const dir = volumeDir(rootDir, 'd-1', 'orch.io~downward-api', 'info');
    assert.deepEqual(volumes.get('info'), { kind: 'downwardAPI', hostPath: dir, readOnly: true });
    assert.equal(await readFile(join(dir, 'labels'), 'utf8'), 'a="1"\nb="2"');
    assert.equal(await readFile(join(dir, 'cpu'), 'utf8'), '3');
    await manager.preparePodVolumes(pod('d-1', [volume], { a: 'changed' }));
    assert.equal(await readFile(join(dir, 'labels'), 'utf8'), 'a="changed"');
  });
});
