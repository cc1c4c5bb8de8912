/**
 * Secret and projected volumes through the volume manager as root: their files on the node's
 * tmpfs (mounted once, at <rootDir>/memory-volumes), linked from the pod's volume directories,
 * fsGroup applied, removed by cleanup; a volume an earlier version mounted a tmpfs of its own
 * for is kept and unmounted by cleanup (the other API-backed volume tests are
 * src/agent/volumes/api-volumes.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { mkdir, readFile, readlink, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { ConfigMap, Secret, Volume } from 'kubernetes-types/core/v1.js';

import { FakeLogger } from '../../src/agent/logging/testing.js';
import { makeTempDir, removeTempDir, requireRoot } from '../../src/agent/volumes/fixtures.js';
import { createVolumeManager } from '../../src/agent/volumes/index.js';
import { isAtOrBelow, readMountInfo } from '../../src/agent/volumes/index.js';
import { podDir, volumeDir } from '../../src/agent/volumes/index.js';
import type { VolumeObjectSource } from '../../src/agent/volumes/index.js';
import type { NodePod } from '../../src/api/pod/index.js';

const TMPFS_MAGIC = 0x01021994;
const execFileP = promisify(execFile);

void describe('secret and projected volumes (tmpfs, as root)', () => {
  let rootDir = '';
  const objects = { configMaps: new Map<string, ConfigMap>(), secrets: new Map<string, Secret>() };
  const source: VolumeObjectSource = {
    configMap: (namespace, name) => Promise.resolve(objects.configMaps.get(`${namespace}/${name}`)),
    secret: (namespace, name) => Promise.resolve(objects.secrets.get(`${namespace}/${name}`)),
  };
  before(async () => {
    requireRoot('the secret volume tests');
    rootDir = await makeTempDir('apivol-mnt');
  });
  after(async () => {
    if (rootDir !== '') await removeTempDir(rootDir);
  });

  void it('secret and projected: decoded files on the node tmpfs mounted once, fsGroup applied, removed by cleanup', async () => {
    objects.secrets.set('ns/db', { metadata: { name: 'db' }, data: { password: Buffer.from('s3cret').toString('base64') } });
    objects.configMaps.set('ns/app', { metadata: { name: 'app' }, data: { mode: 'prod' } });
    const manager = createVolumeManager({ rootDir, clock: realClock, logger: new FakeLogger(), objects: source });
    const volumes: Volume[] = [
      { name: 'db', secret: { secretName: 'db', defaultMode: 0o400 } },
      { name: 'all', projected: { sources: [{ secret: { name: 'db' } }, { configMap: { name: 'app' } }] } },
    ];
    const p: NodePod = {
      metadata: { name: 'p', namespace: 'ns', uid: 's-1' },
      spec: {
        containers: [{ name: 'app', volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/mnt/${v.name}` })) }],
        volumes,
        securityContext: { fsGroup: 2345 },
      },
    };
    const first = await manager.preparePodVolumes(p);
    await manager.preparePodVolumes(p);
    const secretDir = volumeDir(rootDir, 's-1', 'orch.io~secret', 'db');
    const projectedDir = volumeDir(rootDir, 's-1', 'orch.io~projected', 'all');
    assert.deepEqual(first.get('db'), { kind: 'secret', hostPath: secretDir, readOnly: true });
    assert.equal(await readFile(join(secretDir, 'password'), 'utf8'), 's3cret');
    const st = await stat(join(secretDir, 'password'));
    assert.equal(st.mode & 0o777, 0o440); // 0400 plus g+r for the fsGroup, as upstream
    assert.equal(st.gid, 2345);
    assert.deepEqual([await readFile(join(projectedDir, 'password'), 'utf8'), await readFile(join(projectedDir, 'mode'), 'utf8')], ['s3cret', 'prod']);
    const memoryDir = join(rootDir, 'memory-volumes');
    assert.equal(await readlink(secretDir), join(memoryDir, 's-1', 'orch.io~secret', 'db'));
    assert.equal(await readlink(projectedDir), join(memoryDir, 's-1', 'orch.io~projected', 'all'));
    assert.equal(statfsSync(join(secretDir, 'password')).type, TMPFS_MAGIC, 'the secret is on a tmpfs');
    const mounts = (await readMountInfo()).filter((m) => isAtOrBelow(m.mountPoint, rootDir));
    assert.deepEqual(mounts.map((m) => [m.mountPoint, m.fsType]), [[memoryDir, 'tmpfs']], 'one tmpfs for the node, none per volume');
    await manager.cleanupPodVolumes('s-1');
    await assert.rejects(stat(podDir(rootDir, 's-1')), { code: 'ENOENT' });
    await assert.rejects(stat(join(memoryDir, 's-1')), { code: 'ENOENT' });
    assert.deepEqual(await manager.listPodDirs(), []);
  });

  void it('keeps a tmpfs an earlier version mounted on the volume directory, and unmounts it at cleanup', async () => {
    objects.secrets.set('ns/db', { metadata: { name: 'db' }, data: { password: Buffer.from('old').toString('base64') } });
    const manager = createVolumeManager({ rootDir, clock: realClock, logger: new FakeLogger(), objects: source });
    const secretDir = volumeDir(rootDir, 's-2', 'orch.io~secret', 'db');
    await mkdir(secretDir, { recursive: true });
    await execFileP('mount', ['-t', 'tmpfs', 'tmpfs', secretDir]);
    const p: NodePod = {
      metadata: { name: 'p2', namespace: 'ns', uid: 's-2' },
      spec: { containers: [{ name: 'app', volumeMounts: [{ name: 'db', mountPath: '/db' }] }], volumes: [{ name: 'db', secret: { secretName: 'db' } }] },
    };
    await manager.preparePodVolumes(p);
    assert.equal((await stat(secretDir)).isDirectory(), true);
    assert.equal(await readFile(join(secretDir, 'password'), 'utf8'), 'old');
    assert.deepEqual((await readMountInfo()).filter((m) => isAtOrBelow(m.mountPoint, podDir(rootDir, 's-2'))).map((m) => m.mountPoint), [secretDir]);
    await manager.cleanupPodVolumes('s-2');
    assert.deepEqual((await readMountInfo()).filter((m) => isAtOrBelow(m.mountPoint, podDir(rootDir, 's-2'))), []);
    await assert.rejects(stat(podDir(rootDir, 's-2')), { code: 'ENOENT' });
  });
});
