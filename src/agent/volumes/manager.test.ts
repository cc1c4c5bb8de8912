import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Volume } from 'kubernetes-types/core/v1.js';

import { createVolumeManager } from './manager.js';
import { containerDir, emptyDirPath, podDir } from './paths.js';
import { FakeLogger } from '../logging/testing.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { VOLUME_HOSTPATH_TYPE, VOLUME_INVALID, VOLUME_UNSUPPORTED, type VolumeManager } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

function pod(uid: string, volumes: Volume[]): NodePod {
  return {
    metadata: { name: `pod-${uid}`, namespace: 'default', uid },
    spec: { initContainers: [{ name: 'init' }], containers: [{ name: 'app' }, { name: 'side' }], volumes },
  };
}

void describe('volume manager (disk)', () => {
  let dir = '';
  let rootDir = '';
  let hostDir = '';
  let manager: VolumeManager;
  before(async () => {
    dir = await makeTempDir('volmgr');
    rootDir = join(dir, 'root');
    hostDir = join(dir, 'host');
    await mkdir(hostDir);
    await writeFile(join(hostDir, 'keep.txt'), 'host data');
    manager = createVolumeManager({ rootDir, logger: new FakeLogger(), clock: new FakeClock() });
  });
  after(async () => {
    await removeTempDir(dir);
  });

  void it('lays out the pod, container and emptyDir directories as upstream', async () => {
    const volumes = await manager.preparePodVolumes(
      pod('uid-1', [
        { name: 'cache', emptyDir: {} },
        { name: 'limited', emptyDir: { sizeLimit: '1Gi' } },
        { name: 'host', hostPath: { path: hostDir, type: 'Directory' } },
      ]),
    );
    assert.deepEqual(volumes.get('cache'), { kind: 'emptyDir', hostPath: join(rootDir, 'pods/uid-1/volumes/orch.io~empty-dir/cache'), readOnly: false });
    assert.deepEqual(volumes.get('limited'), { kind: 'emptyDir', hostPath: emptyDirPath(rootDir, 'uid-1', 'limited'), readOnly: false, sizeLimitBytes: 1024 ** 3 });
    assert.deepEqual(volumes.get('host'), { kind: 'hostPath', hostPath: hostDir, readOnly: false });
    assert.equal((await stat(emptyDirPath(rootDir, 'uid-1', 'cache'))).mode & 0o7777, 0o777);
    assert.deepEqual((await readdir(join(podDir(rootDir, 'uid-1'), 'containers'))).sort(), ['app', 'init', 'side']);
    assert.ok((await stat(containerDir(rootDir, 'uid-1', 'app'))).isDirectory());
  });

  void it('is idempotent: a second call returns the same paths and keeps the data', async () => {
    const p = pod('uid-2', [{ name: 'cache', emptyDir: {} }]);
    const first = await manager.preparePodVolumes(p);
    await writeFile(join(first.get('cache')!.hostPath, 'f'), 'data');
    const [second, third] = await Promise.all([manager.preparePodVolumes(p), manager.preparePodVolumes(p)]);
    assert.deepEqual(second, first);
    assert.deepEqual(third, first);
    assert.equal(await readFile(join(first.get('cache')!.hostPath, 'f'), 'utf8'), 'data');
  });

  void it('rejects, without the API server, volumes that need it before touching the disk', async () => {
    const sources: [Volume, string][] = [
      [{ name: 'cfg', configMap: { name: 'c' } }, 'configMap'],
      [{ name: 'sec', secret: { secretName: 's' } }, 'secret'],
    ];
    for (const [volume, type] of sources) {
      await assertRejectsWith(manager.preparePodVolumes(pod('uid-x', [volume])), VOLUME_UNSUPPORTED, [
        `volume "${volume.name}"`, `type ${type}`, 'needs the API server (--orchconfig)',
      ]);
    }
    await assertRejectsWith(manager.preparePodVolumes(pod('uid-x', [{ name: 'proj', projected: { sources: [{ downwardAPI: {} }, { configMap: { name: 'c' } }] } }])), VOLUME_UNSUPPORTED, [
      'projected volume "proj"', 'sources[1]', 'configMap source needs the API server (--orchconfig)',
    ]);
    await assertRejectsWith(manager.preparePodVolumes(pod('uid-x', [{ name: 'claim', persistentVolumeClaim: { claimName: 'c' } }])), VOLUME_UNSUPPORTED, [
      'volume "claim"', 'type persistentVolumeClaim', 'needs the API server (--orchconfig)',
    ]);
    await assertRejectsWith(manager.preparePodVolumes(pod('uid-x', [{ name: 'h', emptyDir: { medium: 'HugePages' } }])), VOLUME_UNSUPPORTED, ['HugePages']);
    assert.deepEqual(await manager.listPodDirs(), ['uid-1', 'uid-2']);
  });

  void it('rejects invalid pods and volumes', async () => {
    const cases: [NodePod, string][] = [
      [pod('../evil', []), 'pod UID "../evil"'],
      [pod('u', [{ name: 'a' }]), 'has no volume source'],
      [pod('u', [{ name: 'a', emptyDir: {}, hostPath: { path: '/' } }]), 'more than one volume source'],
      [pod('u', [{ name: 'a', emptyDir: {} }, { name: 'a', emptyDir: {} }]), 'used more than once'],
      [pod('u', [{ name: 'a/b', emptyDir: {} }]), 'cannot be used as a directory name'],
      [pod('u', [{ name: 'a', emptyDir: { medium: 'Disk' } }]), 'medium "Disk" is unknown'],
      [pod('u', [{ name: 'a', emptyDir: { sizeLimit: '-1Gi' } }]), 'must not be negative'],
    ];
    for (const [p, message] of cases) await assertRejectsWith(manager.preparePodVolumes(p), VOLUME_INVALID, [message]);
    await assertRejectsWith(manager.preparePodVolumes(pod('u', [{ name: 'a', emptyDir: { sizeLimit: 'lots' } }])), 'API_INVALID_QUANTITY');
  });

  void it('reports a hostPath type mismatch', async () => {
    await assertRejectsWith(
      manager.preparePodVolumes(pod('uid-3', [{ name: 'sock', hostPath: { path: join(hostDir, 'keep.txt'), type: 'Socket' } }])),
      VOLUME_HOSTPATH_TYPE,
      ['volume "sock"', 'expected Socket', 'found File'],
    );
    await manager.cleanupPodVolumes('uid-3');
  });

  void it('cleanup removes the pod directory without following symlinks out of it', async () => {
    const volumes = await manager.preparePodVolumes(pod('uid-4', [{ name: 'cache', emptyDir: {} }, { name: 'host', hostPath: { path: hostDir } }]));
    await symlink(hostDir, join(volumes.get('cache')!.hostPath, 'link-to-host'));
    await symlink(hostDir, join(podDir(rootDir, 'uid-4'), 'volumes', 'stray-link'));
    await manager.cleanupPodVolumes('uid-4');
    await assert.rejects(stat(podDir(rootDir, 'uid-4')), { code: 'ENOENT' });
    assert.equal(await readFile(join(hostDir, 'keep.txt'), 'utf8'), 'host data');
    await manager.cleanupPodVolumes('uid-4'); // idempotent
  });

  void it('cleanup of a pod directory that is a symlink removes only the link', async () => {
    await mkdir(join(rootDir, 'pods'), { recursive: true });
    await symlink(hostDir, join(rootDir, 'pods', 'uid-5'));
    assert.ok((await manager.listPodDirs()).every((uid) => uid !== 'uid-5')); // a link is not a pod directory
    await manager.cleanupPodVolumes('uid-5');
    assert.equal(await readFile(join(hostDir, 'keep.txt'), 'utf8'), 'host data');
  });

  void it('resolves a container\'s mounts against the prepared volumes, with /etc/hosts written once per sandbox', async () => {
    const p = pod('uid-6', [{ name: 'cache', emptyDir: {} }]);
    p.spec!.containers[0]!.volumeMounts = [{ name: 'cache', mountPath: '/cache' }];
    const volumes = await manager.preparePodVolumes(p);
    const app = p.spec!.containers[0]!;
    const mounts = await manager.mountsFor(p, app, { id: 'sandbox-1', podIPs: ['10.0.0.5'] });
    assert.deepEqual(mounts.map((m) => [m.containerPath, m.hostPath]), [
      ['/cache', volumes.get('cache')!.hostPath],
      ['/etc/hosts', join(podDir(rootDir, 'uid-6'), 'etc-hosts')],
    ]);
    assert.match(await readFile(join(podDir(rootDir, 'uid-6'), 'etc-hosts'), 'utf8'), /10\.0\.0\.5\s+pod-uid-6/);
    await writeFile(join(podDir(rootDir, 'uid-6'), 'etc-hosts'), 'kept');
    await manager.mountsFor(p, p.spec!.containers[1]!, { id: 'sandbox-1', podIPs: ['10.0.0.5'] });
    assert.equal(await readFile(join(podDir(rootDir, 'uid-6'), 'etc-hosts'), 'utf8'), 'kept', 'the same sandbox: not written again');
    await manager.mountsFor(p, app, { id: 'sandbox-2', podIPs: ['10.0.0.6'] });
    assert.match(await readFile(join(podDir(rootDir, 'uid-6'), 'etc-hosts'), 'utf8'), /10\.0\.0\.6\s+pod-uid-6/, 'a new sandbox: rewritten');
    const hostNetwork: NodePod = { ...p, spec: { ...p.spec!, hostNetwork: true } };
    assert.ok((await manager.mountsFor(hostNetwork, app, { id: 'sandbox-3', podIPs: [] })).every((m) => m.containerPath !== '/etc/hosts'), 'host network: the node\'s /etc/hosts');
    assert.equal(manager.containerDir(p, app), containerDir(rootDir, 'uid-6', 'app'));
    await manager.cleanupPodVolumes('uid-6');
  });

  void it('lists pod directories, and rejects a UID that is not a directory name', async () => {
    await manager.cleanupPodVolumes('uid-1');
    await manager.cleanupPodVolumes('uid-2');
    assert.deepEqual(await manager.listPodDirs(), []);
    assert.deepEqual(await createVolumeManager({ rootDir: join(dir, 'never-made'), logger: new FakeLogger(), clock: new FakeClock() }).listPodDirs(), []);
    await assertRejectsWith(manager.cleanupPodVolumes('..'), VOLUME_INVALID);
  });
});
