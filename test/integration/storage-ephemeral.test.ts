/**
 * Ephemeral volumes on the node: orch-apiserver (its controllers making generic ephemeral
 * volumes' claims and binding them), a real containerd, the nodeagent binary and the sample CSI
 * driver, through kubectl:
 *
 * - an inline `csi` volume of a driver whose CSIDriver lists Ephemeral: published (never staged)
 *   with upstream's handle `csi-<sha256>` and `csi.storage.orch.io/ephemeral: "true"`, a file
 *   written through it lands in the driver's volume, its nodePublishSecretRef secret (in the
 *   pod's namespace) passed, unpublished when the pod goes;
 * - an inline volume of a driver whose CSIDriver lists only Persistent, or that has no
 *   CSIDriver: a FailedMount event with upstream's message;
 * - a generic `ephemeral` volume: the claim `<pod>-<volume>` the API server made, bound to a CSI
 *   PersistentVolume, staged and published for the pod, with the driver's NodeGetVolumeStats in
 *   /stats/summary;
 * - a generic ephemeral volume whose claim exists but was not made for the pod: a FailedMount
 *   event (the pod is not the claim's owner).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { runKubectl } from '../helpers/apiserver.js';
import { NODE } from '../helpers/pods.js';
import { CSI_DRIVER, claim, csiDriverObject, csiVolume, podWith, startStorageStack, type StorageStack } from '../helpers/storage.js';
import { waitFor } from '../helpers/wait.js';

let s: StorageStack;

before(async () => {
  s = await startStorageStack({
    objects: [
      csiDriverObject({ attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] }),
      csiDriverObject({ attachRequired: false, volumeLifecycleModes: ['Persistent'] }, 'persistent-only.csi.example.com'),
    ],
  });
  await s.driver.waitFor('registration-status');
});

after(async () => {
  await s.stop();
});

const template = { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } } };

void describe('ephemeral volumes on the node', () => {
  void it('publishes an inline CSI volume of an Ephemeral driver without staging it, with its secret, and unpublishes it with the pod', async () => {
    await s.create([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'inline-creds' }, stringData: { token: 't' } },
      podWith('inline', { csi: { driver: CSI_DRIVER, volumeAttributes: { size: 'small' }, nodePublishSecretRef: { name: 'inline-creds' } } }, 'echo inline > /data/file && sleep 3600'),
    ]);
    const pod = await s.waitForPhase('inline', 'Running');
    const uid = pod.metadata?.uid ?? '';
    const publish = s.driver.calls('NodePublishVolume').find((c) => String(c.request?.['targetPath']).includes(uid));
    assert.ok(publish !== undefined, 'published');
    const request = publish.request ?? {};
    assert.match(String(request['volumeId']), /^csi-[0-9a-f]{64}$/);
    assert.equal(request['stagingTargetPath'], '');
    assert.equal(request['targetPath'], join(s.rootDir, 'pods', uid, 'volumes', 'orch.io~csi', 'data', 'mount'));
    assert.deepEqual(request['volumeContext'], {
      size: 'small', 'csi.storage.orch.io/pod.name': 'inline', 'csi.storage.orch.io/pod.namespace': 'default',
      'csi.storage.orch.io/pod.uid': uid, 'csi.storage.orch.io/serviceAccount.name': 'default', 'csi.storage.orch.io/ephemeral': 'true',
    });
    assert.deepEqual(request['secrets'], { token: '<redacted>' }, 'the nodePublishSecretRef secret, from the pod\'s namespace');
    assert.equal(s.driver.calls('NodeStageVolume').length, 0, 'never staged');
    const volData = JSON.parse(await readFile(join(s.rootDir, 'pods', uid, 'volumes', 'orch.io~csi', 'data', 'vol_data.json'), 'utf8')) as Record<string, string>;
    assert.deepEqual([volData['specVolID'], volData['volumeLifecycleMode'], volData['volumeHandle']], ['data', 'Ephemeral', request['volumeId']]);
    await waitFor('the file on the driver\'s volume', async () => (await readFile(join(s.driver.dataDir, String(request['volumeId']), 'file'), 'utf8').catch(() => '')) === 'inline\n');
    await runKubectl(s.server, ['delete', 'pod', 'inline', '--wait=true']);
    await waitFor('unpublished', () => s.driver.calls('NodeUnpublishVolume').some((c) => c.request?.['volumeId'] === request['volumeId']), { timeoutMs: 60_000 });
    assert.equal(s.driver.calls('NodeUnstageVolume').length, 0);
  });

  void it('refuses an inline volume of a driver that does not list Ephemeral, with upstream\'s message', async () => {
    await s.create([
      podWith('persistent-only', { csi: { driver: 'persistent-only.csi.example.com' } }, 'true', 'Never'),
      podWith('no-driver-object', { csi: { driver: 'unknown.csi.example.com' } }, 'true', 'Never'),
    ]);
    await s.waitForEvent('persistent-only', 'FailedMount', /volume "data": volume mode "Ephemeral" not supported by driver persistent-only\.csi\.example\.com \(only supports \["Persistent"\]\)/);
    await s.waitForEvent('no-driver-object', 'FailedMount', /volume "data": volume mode "Ephemeral" not supported by driver unknown\.csi\.example\.com \(no CSIDriver object\)/);
    assert.equal((await s.pod('persistent-only'))?.status?.phase, 'Pending');
    await runKubectl(s.server, ['delete', 'pod', 'persistent-only', 'no-driver-object', '--wait=true']);
  });

  void it('mounts a generic ephemeral volume through the claim made for the pod', async () => {
    await s.create([csiVolume('eph', 'vol-eph')]);
    await s.create([podWith('generic', { ephemeral: template }, 'echo generic > /data/file && sleep 3600')]);
    const pod = await s.waitForPhase('generic', 'Running', 120_000);
    const made = await s.getJson<PersistentVolumeClaim>('/api/v1/namespaces/default/persistentvolumeclaims/generic-data');
    assert.equal(made?.metadata?.ownerReferences?.[0]?.uid, pod.metadata?.uid);
    assert.equal(made?.spec?.volumeName, 'eph');
    const target = join(s.rootDir, 'pods', pod.metadata?.uid ?? '', 'volumes', 'orch.io~csi', 'eph', 'mount');
    assert.ok(s.driver.calls('NodePublishVolume').some((c) => c.request?.['targetPath'] === target));
    assert.ok(s.driver.calls('NodeStageVolume').some((c) => c.request?.['volumeId'] === 'vol-eph'));
    await waitFor('the file on the volume', async () => (await readFile(join(s.driver.dataDir, 'vol-eph', 'file'), 'utf8').catch(() => '')) === 'generic\n');
    // The driver's NodeGetVolumeStats in the summary API, through the API server's node proxy.
    const stats = await waitFor('the volume\'s stats in /stats/summary', async () => {
      const summary = await s.getJson<{ pods: { podRef: { name: string }; volume?: { name: string; usedBytes?: number; capacityBytes?: number; inodesUsed?: number }[] }[] }>(`/api/v1/nodes/${NODE}/proxy/stats/summary`);
      return summary?.pods.find((p) => p.podRef.name === 'generic')?.volume?.find((v) => v.name === 'data');
    }, { timeoutMs: 60_000 });
    assert.ok((stats.usedBytes ?? 0) > 0 && (stats.capacityBytes ?? 0) > (stats.usedBytes ?? 0) && (stats.inodesUsed ?? 0) >= 2, JSON.stringify(stats));
    await runKubectl(s.server, ['delete', 'pod', 'generic', '--wait=true']);
    await waitFor('unstaged', () => s.driver.calls('NodeUnstageVolume').some((c) => c.request?.['volumeId'] === 'vol-eph'), { timeoutMs: 60_000 });
  });

  void it('refuses a generic ephemeral volume whose claim the pod does not own', async () => {
    await s.create([csiVolume('stray', 'vol-stray'), claim('stranger-data', 'stray')]);
    // Given to the node by hand: the scheduler holds such a pod.
    const pod = podWith('stranger', { ephemeral: template }, 'true', 'Never');
    await s.create([{ ...pod, spec: { ...(pod['spec'] as object), nodeName: NODE } }]);
    await s.waitForEvent('stranger', 'FailedMount', /volume "data": PVC default\/stranger-data was not created for pod default\/stranger \(pod is not owner\)/);
    assert.equal(s.driver.calls('NodeStageVolume').filter((c) => c.request?.['volumeId'] === 'vol-stray').length, 0);
  });
});
