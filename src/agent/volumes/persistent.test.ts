import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PersistentVolume, PersistentVolumeClaim, PersistentVolumeSpec } from 'kubernetes-types/core/v1.js';

import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { createVolumeManager } from './manager.js';
import { setUpClaimVolume, type ClaimVolumeSpec } from './persistent.js';
import {
  VOLUME_CLAIM_NOT_BOUND,
  VOLUME_CLAIM_UNAVAILABLE,
  VOLUME_HOSTPATH_TYPE,
  VOLUME_MOUNT_FAILED,
  VOLUME_UNSUPPORTED,
  type PersistentVolumeSource,
  type VolumeObjectSource,
} from './types.js';

function claim(name: string, over: Partial<PersistentVolumeClaim> = {}): PersistentVolumeClaim {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { accessModes: ['ReadWriteOnce'], volumeName: `pv-${name}`, resources: { requests: { storage: '1Gi' } } },
    status: { phase: 'Bound' },
    ...over,
  };
}

function volume(claimName: string, spec: PersistentVolumeSpec, uid = `uid-${claimName}`): PersistentVolume {
  return {
    metadata: { name: `pv-${claimName}` },
    spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, claimRef: { namespace: 'default', name: claimName, uid }, ...spec },
  };
}

class FakeClaims implements PersistentVolumeSource {
  readonly claims = new Map<string, PersistentVolumeClaim>();
  readonly volumes = new Map<string, PersistentVolume>();
  failing = false;
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
    if (this.failing) return Promise.reject(new Error('connection refused'));
    return Promise.resolve(this.claims.get(`${namespace}/${name}`));
  }
  volume(name: string): Promise<PersistentVolume | undefined> {
    return Promise.resolve(this.volumes.get(name));
  }
  add(c: PersistentVolumeClaim, v?: PersistentVolume): void {
    this.claims.set(`default/${c.metadata?.name ?? ''}`, c);
    if (v !== undefined) this.volumes.set(v.metadata?.name ?? '', v);
  }
}

const POD = { metadata: { name: 'p', namespace: 'default', uid: 'pod-1' } };

const spec = (claimName: string, readOnly?: boolean): ClaimVolumeSpec => ({
  kind: 'persistentVolumeClaim', name: 'data', index: 2, source: { claimName, ...(readOnly === undefined ? {} : { readOnly }) },
});

void describe('persistentVolumeClaim volumes', () => {
  let dir = '';
  let local = '';
  before(async () => {
    dir = await makeTempDir('pvc');
    local = join(dir, 'disk');
    await mkdir(local);
    await writeFile(join(dir, 'file'), 'x');
  });
  after(async () => {
    await removeTempDir(dir);
  });

  void it('uses a bound local volume in place, read-only when the pod or a ReadOnlyMany claim says so', async () => {
    const claims = new FakeClaims();
    claims.add(claim('a'), volume('a', { local: { path: local } }));
    assert.deepEqual(await setUpClaimVolume(claims, POD, spec('a')), { kind: 'persistentVolumeClaim', hostPath: local, readOnly: false });
    assert.equal((await setUpClaimVolume(claims, POD, spec('a', true))).readOnly, true);
    claims.add(claim('rox', { spec: { accessModes: ['ReadOnlyMany'], volumeName: 'pv-rox' } }), volume('rox', { local: { path: local } }));
    assert.equal((await setUpClaimVolume(claims, POD, spec('rox'))).readOnly, true);
  });

  void it('checks a hostPath volume with the hostPath type rules', async () => {
    const claims = new FakeClaims();
    claims.add(claim('h'), volume('h', { hostPath: { path: join(dir, 'made'), type: 'DirectoryOrCreate' } }));
    assert.equal((await setUpClaimVolume(claims, POD, spec('h'))).hostPath, join(dir, 'made'));
    claims.add(claim('f'), volume('f', { hostPath: { path: join(dir, 'file'), type: 'Directory' } }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('f')), VOLUME_HOSTPATH_TYPE, ['"data"']);
  });

  void it('refuses a missing, terminating or unbound claim, and a volume bound to another claim, naming the volume', async () => {
    const claims = new FakeClaims();
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('none')), VOLUME_CLAIM_NOT_BOUND, ['volume "data"', 'persistentvolumeclaim default/none not found']);
    claims.add(claim('gone', { metadata: { name: 'gone', namespace: 'default', uid: 'u', deletionTimestamp: '2026-01-01T00:00:00Z' } }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('gone')), VOLUME_CLAIM_NOT_BOUND, ['default/gone is being deleted']);
    claims.add(claim('pending', { status: { phase: 'Pending' }, spec: { accessModes: ['ReadWriteOnce'] } }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('pending')), VOLUME_CLAIM_NOT_BOUND, ['default/pending is not bound (phase Pending)']);
    claims.add(claim('nopv'));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('nopv')), VOLUME_CLAIM_NOT_BOUND, ['persistentvolume pv-nopv (bound to persistentvolumeclaim default/nopv) not found']);
    claims.add(claim('stolen'), volume('stolen', { local: { path: local } }, 'uid-other'));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('stolen')), VOLUME_CLAIM_NOT_BOUND, ['persistentvolume pv-stolen is bound to default/stolen (uid uid-other), not to persistentvolumeclaim default/stolen (uid uid-stolen)']);
    claims.failing = true;
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('a')), VOLUME_CLAIM_UNAVAILABLE, ['cannot read persistentvolumeclaim default/a: connection refused']);
  });

  void it('uses a generic ephemeral volume\'s claim only when the pod controls it', async () => {
    const claims = new FakeClaims();
    const owner = (uid: string, controller: boolean) => ({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid, controller }] });
    const ephemeral: ClaimVolumeSpec = { kind: 'ephemeral', name: 'data', index: 0, source: { claimName: 'p-data' } };
    claims.add(claim('p-data', { metadata: { name: 'p-data', namespace: 'default', uid: 'uid-p-data', ...owner('pod-1', true) } }), volume('p-data', { local: { path: local } }));
    assert.deepEqual(await setUpClaimVolume(claims, POD, ephemeral), { kind: 'ephemeral', hostPath: local, readOnly: false });
    for (const meta of [owner('pod-0', true), owner('pod-1', false), {}]) {
      claims.add(claim('p-data', { metadata: { name: 'p-data', namespace: 'default', uid: 'uid-p-data', ...meta } }));
      await assertRejectsWith(setUpClaimVolume(claims, POD, ephemeral), VOLUME_CLAIM_NOT_BOUND, ['volume "data": PVC default/p-data was not created for pod default/p (pod is not owner)']);
    }
  });

  void it('refuses other sources, block mode, a missing local path and a standalone agent', async () => {
    const claims = new FakeClaims();
    claims.add(claim('csi'), volume('csi', { csi: { driver: 'd.example.com', volumeHandle: 'h' } }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('csi')), VOLUME_UNSUPPORTED, ['persistentvolume pv-csi has source csi', 'supported: local, hostPath']);
    claims.add(claim('blk'), volume('blk', { local: { path: local }, volumeMode: 'Block' }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('blk')), VOLUME_UNSUPPORTED, ['volumeMode Block']);
    claims.add(claim('miss'), volume('miss', { local: { path: join(dir, 'absent') } }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('miss')), VOLUME_MOUNT_FAILED, [`local path ${join(dir, 'absent')} of persistentvolume pv-miss cannot be used`]);
    claims.add(claim('notdir'), volume('notdir', { local: { path: join(dir, 'file') } }));
    await assertRejectsWith(setUpClaimVolume(claims, POD, spec('notdir')), VOLUME_MOUNT_FAILED, ['is not a directory']);
    await assertRejectsWith(setUpClaimVolume(undefined, POD, spec('a')), VOLUME_UNSUPPORTED, ['needs the API server']);
  });

  void it('reaches the containers through the volume manager', async () => {
    const claims = new FakeClaims();
    claims.add(claim('a'), volume('a', { local: { path: local } }));
    const objects: VolumeObjectSource = { configMap: () => Promise.resolve(undefined), secret: () => Promise.resolve(undefined) };
    const manager = createVolumeManager({ rootDir: join(dir, 'root'), logger: new FakeLogger(), clock: new FakeClock(), objects, claims });
    const pod = {
      metadata: { name: 'p', namespace: 'default', uid: 'pod-1' },
      spec: { containers: [{ name: 'app', volumeMounts: [{ name: 'data', mountPath: '/data' }] }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'a', readOnly: true } }] },
    };
    await manager.preparePodVolumes(pod);
    const mounts = await manager.mountsFor(pod, pod.spec.containers[0]!, { id: 's', podIPs: ['10.0.0.2'] });
    assert.deepEqual(mounts.find((m) => m.containerPath === '/data'), { containerPath: '/data', hostPath: local, readonly: true });
    await manager.cleanupPodVolumes('pod-1');
  });
});
