import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';

import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { createVolumeManager } from './manager.js';
import { VOLUME_UNSUPPORTED, type FlexVolumePlugin, type FlexVolumeRequest, type PersistentVolumeSource, type VolumeObjectSource } from './types.js';

/** Records what it is asked; its "mount" is a directory under the pod's. */
class FakeFlexPlugin implements FlexVolumePlugin {
  readonly setUps: FlexVolumeRequest[] = [];
  readonly tearDowns: string[] = [];
  constructor(private readonly rootDir: string) {}
  async setUp(_pod: NodePod, podUID: string, request: FlexVolumeRequest): Promise<string> {
    this.setUps.push(request);
    const dir = join(this.rootDir, 'pods', podUID, 'volumes', request.driver.replace('/', '~'), request.specName);
    await mkdir(dir, { recursive: true });
    return dir;
  }
  tearDown(podUID: string): Promise<void> {
    this.tearDowns.push(podUID);
    return Promise.resolve();
  }
}

const objects: VolumeObjectSource = { configMap: () => Promise.resolve(undefined), secret: () => Promise.resolve(undefined) };

void describe('flexVolume volumes', () => {
  let dir = '';
  before(async () => { dir = await makeTempDir('volumes-flex'); });
  after(async () => { await removeTempDir(dir); });

  void it('mount through the FlexVolume plugin with the volume\'s source, read-only when it says so; cleanup tears them down', async () => {
    const rootDir = join(dir, 'root');
    const flex = new FakeFlexPlugin(rootDir);
    const manager = createVolumeManager({ rootDir, logger: new FakeLogger(), clock: new FakeClock(), flex });
    const pod = {
      metadata: { name: 'p', namespace: 'default', uid: 'pod-1' },
      spec: {
        containers: [{ name: 'app', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', flexVolume: { driver: 'example.com/lvm', fsType: 'ext4', readOnly: true, options: { size: '1G' }, secretRef: { name: 's' } } }],
      },
    };
    const volumes = await manager.preparePodVolumes(pod);
    const hostPath = join(rootDir, 'pods', 'pod-1', 'volumes', 'example.com~lvm', 'data');
    assert.deepEqual(volumes.get('data'), { kind: 'flexVolume', hostPath, readOnly: true });
    assert.deepEqual(flex.setUps, [{
      specName: 'data', volumeName: 'data', driver: 'example.com/lvm', fsType: 'ext4', options: { size: '1G' }, secretRef: { name: 's' }, readOnly: true, subject: 'spec.volumes[0].flexVolume',
    }]);
    const mounts = await manager.mountsFor(pod, pod.spec.containers[0]!, { id: 's', podIPs: ['10.0.0.2'] });
    assert.deepEqual(mounts.find((m) => m.containerPath === '/data'), { containerPath: '/data', hostPath, readonly: true });
    await manager.cleanupPodVolumes('pod-1');
    assert.deepEqual(flex.tearDowns, ['pod-1']);
  });

  void it('mount a claim\'s PersistentVolume with a flexVolume source, named by the PV, its secret in the PV\'s namespace', async () => {
    const rootDir = join(dir, 'root-pv');
    const flex = new FakeFlexPlugin(rootDir);
    const claim: PersistentVolumeClaim = { metadata: { name: 'c', namespace: 'default', uid: 'uid-c' }, spec: { accessModes: ['ReadOnlyMany'], volumeName: 'pv-1' }, status: { phase: 'Bound' } };
    const pv: PersistentVolume = {
      metadata: { name: 'pv-1' },
      spec: { accessModes: ['ReadOnlyMany'], claimRef: { namespace: 'default', name: 'c', uid: 'uid-c' }, flexVolume: { driver: 'example.com/lvm', secretRef: { name: 's', namespace: 'creds' } } },
    };
    const claims: PersistentVolumeSource = { claim: () => Promise.resolve(claim), volume: () => Promise.resolve(pv) };
    const manager = createVolumeManager({ rootDir, logger: new FakeLogger(), clock: new FakeClock(), objects, claims, flex });
    const pod = { metadata: { name: 'p', namespace: 'default', uid: 'pod-2' }, spec: { containers: [], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }] } };
    const volumes = await manager.preparePodVolumes(pod);
    assert.deepEqual(volumes.get('data'), { kind: 'persistentVolumeClaim', hostPath: join(rootDir, 'pods', 'pod-2', 'volumes', 'example.com~lvm', 'pv-1'), readOnly: true });
    assert.deepEqual(flex.setUps, [{
      specName: 'pv-1', volumeName: 'data', driver: 'example.com/lvm', fsType: '', options: {}, secretRef: { name: 's', namespace: 'creds' }, readOnly: true, subject: 'spec.volumes[0].persistentVolumeClaim',
    }]);
  });

  void it('are refused without the plugin', async () => {
    const manager = createVolumeManager({ rootDir: join(dir, 'root-none'), logger: new FakeLogger(), clock: new FakeClock() });
    const pod = { metadata: { name: 'p', namespace: 'default', uid: 'pod-3' }, spec: { containers: [], volumes: [{ name: 'f', flexVolume: { driver: 'example.com/lvm' } }] } };
    await assertRejectsWith(manager.preparePodVolumes(pod), VOLUME_UNSUPPORTED, ['volume "f" of type flexVolume', 'no FlexVolume plugin']);
  });
});
