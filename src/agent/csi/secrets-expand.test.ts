import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getgid } from 'node:process';
import type { PersistentVolume, PersistentVolumeClaim, Secret } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { createCsiDrivers } from './drivers.js';
import { CSI_SECRET_UNAVAILABLE } from './errors.js';
import type { ExpandRequest } from './client.js';
import type { CsiEventReference } from './expand.js';
import { createCsiMounter, type CsiMounter } from './mounter.js';
import { FakeDriver, FakePublisher, fakeApi } from './testing.js';

const DRIVER = 'd.example.com';
const secret = (data: Record<string, string>): Secret => ({ data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) });
const pv = (name: string, handle: string, csi: Partial<NonNullable<PersistentVolume['spec']>['csi']> = {}, spec: Partial<NonNullable<PersistentVolume['spec']>> = {}): PersistentVolume => ({
  metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, csi: { driver: DRIVER, volumeHandle: handle, ...csi }, ...spec },
});
const pod = (uid: string, securityContext: NonNullable<NodePod['spec']>['securityContext'] = {}): NodePod => ({ metadata: { name: `p-${uid}`, namespace: 'ns', uid }, spec: { containers: [], securityContext } });

void describe('CSI secrets, fsGroup, volumes in use and node expansion', () => {
  let dir = '';
  let mountInfo = '';
  let fake: FakeDriver;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'csi-more-'));
    mountInfo = join(dir, 'mountinfo');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  interface Setup {
    mounter: CsiMounter;
    rootDir: string;
    secrets: Record<string, Secret>;
    patches: { namespace: string; name: string; status: Record<string, unknown> }[];
    events: [CsiEventReference, string, string, string][];
  }
  const setUp = async (name: string, csiDriver: CSIDriver | undefined, expandSecrets = true): Promise<Setup> => {
    await writeFile(mountInfo, '');
    fake = new FakeDriver(mountInfo);
    // The fake "publishes" by listing the target in mountinfo: the directory must exist for fsGroup.
    const publish = fake.nodePublishVolume.bind(fake);
    fake.nodePublishVolume = async (r) => { await mkdir(r.targetPath, { recursive: true }); await publish(r); };
    const drivers = createCsiDrivers({ logger: new FakeLogger(), publisher: new FakePublisher(), dial: () => fake });
    await drivers.pluginHandler.registerPlugin(DRIVER, '/x.sock', ['1.0.0']);
    const s: Setup = { mounter: undefined as unknown as CsiMounter, rootDir: join(dir, name), secrets: {}, patches: [], events: [] };
    s.mounter = createCsiMounter({
      rootDir: s.rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo,
      api: fakeApi({ csiDriver: () => Promise.resolve(csiDriver), volumeAttachment: () => Promise.resolve({ spec: { attacher: DRIVER, nodeName: 'node-1', source: {} }, status: { attached: true } }), secrets: s.secrets, patches: s.patches }),
      events: (ref, type, reason, message) => { s.events.push([ref, type, reason, message]); }, expandSecrets,
    });
    // The Node's status lists every attachable volume of these tests (upstream's ReportedInUse).
    s.mounter.markVolumesReportedInUse(['h1', 'h2', 'ha', 'hb', 'hc', 'hd', 'he', 'hf', 'hg', 'x'].map((h) => `orch.io/csi/${DRIVER}^${h}`));
    return s;
  };

  void it('passes the stage and publish secrets, and fails naming the volume and the secret when one is missing', async () => {
    const s = await setUp('secrets', { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    const volume = pv('pv1', 'h1', { nodeStageSecretRef: { namespace: 'vault', name: 'stage' }, nodePublishSecretRef: { namespace: 'vault', name: 'publish' } });
    const source = { kind: 'persistent' as const, volume, readOnly: false };
    await assert.rejects(s.mounter.setUp(pod('a'), 'a', 'data', source), (err: unknown) =>
      err instanceof OrchError && err.code === CSI_SECRET_UNAVAILABLE && err.message === 'volume "data": fetching nodeStageSecretRef vault/stage failed: secret "stage" not found in namespace "vault"');
    s.secrets['vault/stage'] = secret({ user: 'u', password: 'pw' });
    await assert.rejects(s.mounter.setUp(pod('a'), 'a', 'data', source), /fetching nodePublishSecretRef vault\/publish failed/);
    assert.equal(existsSync(join(s.rootDir, 'pods', 'a')), false, 'nothing written before the secrets are read');
    assert.deepEqual(fake.calls.filter((c) => c !== 'NodeGetCapabilities' && c !== 'NodeGetInfo'), [], 'the driver was not asked');
    s.secrets['vault/publish'] = secret({ token: 'p' });
    await s.mounter.setUp(pod('a'), 'a', 'data', source);
    assert.deepEqual(fake.requests.map((r) => [('targetPath' in r ? 'publish' : 'stage'), r.secrets]), [['stage', { user: 'u', password: 'pw' }], ['publish', { token: 'p' }]]);
    // An inline volume's secret is in the pod's namespace.
    const inline = { kind: 'inline' as const, source: { driver: DRIVER, nodePublishSecretRef: { name: 'mine' } } };
    const inlineDriver = await setUp('inline', { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Ephemeral'] } });
    await assert.rejects(inlineDriver.mounter.setUp(pod('b'), 'b', 'scratch', inline), /volume "scratch": fetching nodePublishSecretRef ns\/mine failed/);
    inlineDriver.secrets['ns/mine'] = secret({ k: 'v' });
    await inlineDriver.mounter.setUp(pod('b'), 'b', 'scratch', inline);
    assert.deepEqual(fake.requests.at(-1)?.secrets, { k: 'v' });
  });

  void it('applies the fsGroup by the driver\'s fsGroupPolicy, or hands it to a driver with VOLUME_MOUNT_GROUP', async () => {
    const gid = getgid?.() ?? 0;
    const withFsGroup = pod('f', { fsGroup: gid });
    const cases: [string, CSIDriver | undefined, PersistentVolume, boolean][] = [
      ['default-no-fstype', undefined, pv('pv-a', 'ha'), false],
      ['default-fstype', undefined, pv('pv-b', 'hb', { fsType: 'ext4' }), true],
      ['default-rwx', undefined, pv('pv-c', 'hc', { fsType: 'ext4' }, { accessModes: ['ReadWriteMany'] }), false],
      ['file', { metadata: { name: DRIVER }, spec: { fsGroupPolicy: 'File' } }, pv('pv-d', 'hd', {}, { accessModes: ['ReadWriteMany'] }), true],
      ['none', { metadata: { name: DRIVER }, spec: { fsGroupPolicy: 'None' } }, pv('pv-e', 'he', { fsType: 'ext4' }), false],
    ];
    for (const [name, csiDriver, volume, applied] of cases) {
      const s = await setUp(`fs-${name}`, csiDriver);
      const target = await s.mounter.setUp(withFsGroup, 'f', 'data', { kind: 'persistent', volume, readOnly: false });
      assert.equal(((await stat(target)).mode & 0o2070) === 0o2070, applied, name);
    }
    const s = await setUp('fs-delegated', { metadata: { name: DRIVER }, spec: { fsGroupPolicy: 'File' } });
    fake.extra = ['VOLUME_MOUNT_GROUP'];
    const target = await s.mounter.setUp(withFsGroup, 'f', 'data', { kind: 'persistent', volume: pv('pv-f', 'hf'), readOnly: false });
    assert.equal((await stat(target)).mode & 0o2000, 0, 'the driver applies it');
    assert.deepEqual(fake.requests.map((r) => r.volumeCapability.mount.volumeMountGroup), [String(gid), String(gid)]);
    const readOnly = await setUp('fs-ro', { metadata: { name: DRIVER }, spec: { fsGroupPolicy: 'File' } });
    const roTarget = await readOnly.mounter.setUp(withFsGroup, 'f', 'data', { kind: 'persistent', volume: pv('pv-g', 'hg'), readOnly: true });
    assert.equal((await stat(roTarget)).mode & 0o2000, 0, 'never for a read-only volume');
  });

  void it('lists the attachable volumes pods want or still have, sorted, and says when the list changes', async () => {
    const s = await setUp('in-use', undefined);
    // A second mounter on the same root dir (no CSIDriver: attachable), to see a restart's view.
    const drivers = createCsiDrivers({ logger: new FakeLogger(), publisher: new FakePublisher(), dial: () => fake });
    await drivers.pluginHandler.registerPlugin(DRIVER, '/x.sock', ['1.0.0']);
    const mounter = createCsiMounter({
      rootDir: s.rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo,
      api: fakeApi({ volumeAttachment: () => Promise.resolve({ spec: { attacher: DRIVER, nodeName: 'node-1', source: {} }, status: { attached: true } }) }),
    });
    mounter.markVolumesReportedInUse([`orch.io/csi/${DRIVER}^y`, `orch.io/csi/${DRIVER}^z`]);
    let changes = 0;
    const unsubscribe = mounter.onVolumesInUseChange(() => { changes++; });
    await mounter.setUp(pod('a'), 'a', 'data', { kind: 'persistent', volume: pv('pv-z', 'z'), readOnly: false });
    await mounter.setUp(pod('b'), 'b', 'data', { kind: 'persistent', volume: pv('pv-y', 'y'), readOnly: false });
    await mounter.setUp(pod('c'), 'c', 'data', { kind: 'persistent', volume: pv('pv-y', 'y'), readOnly: false });
    assert.deepEqual(await mounter.volumesInUse(), [`orch.io/csi/${DRIVER}^y`, `orch.io/csi/${DRIVER}^z`]);
    assert.equal(changes, 2, 'a volume another pod already wants changes nothing');
    // A new mounter (a restart) finds them from vol_data.json before any pod is set up again.
    const restarted = createCsiMounter({ rootDir: s.rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo, api: fakeApi({}) });
    assert.deepEqual(await restarted.volumesInUse(), [`orch.io/csi/${DRIVER}^y`, `orch.io/csi/${DRIVER}^z`]);
    await mounter.tearDown('a');
    assert.deepEqual(await mounter.volumesInUse(), [`orch.io/csi/${DRIVER}^y`]);
    assert.equal(changes, 3);
    await mounter.tearDown('b');
    await mounter.tearDown('c');
    assert.deepEqual(await mounter.volumesInUse(), []);
    unsubscribe();
    // Not attachable: a driver whose CSIDriver says attachRequired false, and inline volumes.
    const csiDriver: CSIDriver = { metadata: { name: DRIVER }, spec: { attachRequired: false, volumeLifecycleModes: ['Persistent', 'Ephemeral'] } };
    const other = await setUp('in-use-2', csiDriver);
    await other.mounter.setUp(pod('d'), 'd', 'data', { kind: 'persistent', volume: pv('pv-x', 'x'), readOnly: false });
    await other.mounter.setUp(pod('d'), 'd', 'scratch', { kind: 'inline', source: { driver: DRIVER } });
    assert.deepEqual(await other.mounter.volumesInUse(), []);
  });

  void it('expands a mounted volume whose PV outgrew its claim, then sets the claim\'s capacity and drops its resize conditions', async () => {
    const s = await setUp('expand', { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    const claim: PersistentVolumeClaim = {
      metadata: { name: 'c1', namespace: 'ns', uid: 'cu' }, spec: {},
      status: { capacity: { storage: '1Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True' }, { type: 'Other', status: 'True' }] },
    };
    const grown = pv('pv1', 'h1', { nodeExpandSecretRef: { namespace: 'vault', name: 'grow' } }, { capacity: { storage: '2Gi' } });
    await s.mounter.setUp(pod('a'), 'a', 'data', { kind: 'persistent', volume: pv('pv1', 'h1'), claim, readOnly: false });
    assert.deepEqual(fake.expanded, [], 'same size: nothing to do');
    await s.mounter.setUp(pod('a'), 'a', 'data', { kind: 'persistent', volume: grown, claim, readOnly: false });
    assert.deepEqual(fake.expanded, [], 'no EXPAND_VOLUME capability: the resizer finishes it');
    fake.extra = ['EXPAND_VOLUME'];
    await s.mounter.setUp(pod('a'), 'a', 'data', { kind: 'persistent', volume: grown, claim, readOnly: false });
    assert.deepEqual(s.events.map((e) => [e[0].kind, e[2]]), [['Pod', 'VolumeResizeFailed']], 'the missing secret is a warning on the pod');
    assert.match(s.events[0]?.[3] ?? '', /fetching nodeExpandSecretRef vault\/grow failed/);
    s.secrets['vault/grow'] = secret({ key: 'g' });
    s.events.length = 0;
    const target = await s.mounter.setUp(pod('a'), 'a', 'data', { kind: 'persistent', volume: grown, claim, readOnly: false });
    assert.equal(fake.expanded.length, 1);
    const request = (fake.expanded as ExpandRequest[])[0];
    assert.deepEqual([request?.volumeId, request?.volumePath, request?.requiredBytes, request?.secrets], ['h1', target, 2 * 1024 ** 3, { key: 'g' }]);
    assert.match(String(request?.stagingTargetPath), /globalmount$/);
    assert.deepEqual(s.patches, [{ namespace: 'ns', name: 'c1', status: { capacity: { storage: '2Gi' }, conditions: [{ type: 'Other', status: 'True' }] } }]);
    assert.deepEqual(s.events.map((e) => [e[0].kind, e[1], e[2], e[3]]), [
      ['Pod', 'Normal', 'FileSystemResizeSuccessful', 'MountVolume.NodeExpandVolume succeeded for volume "pv1" node-1'],
      ['PersistentVolumeClaim', 'Normal', 'FileSystemResizeSuccessful', 'MountVolume.NodeExpandVolume succeeded for volume "pv1" node-1'],
    ]);
    // A read-only volume is not expanded: one warning per size.
    s.events.length = 0;
    await s.mounter.setUp(pod('r'), 'r', 'data', { kind: 'persistent', volume: grown, claim, readOnly: true });
    await s.mounter.setUp(pod('r'), 'r', 'data', { kind: 'persistent', volume: grown, claim, readOnly: true });
    assert.equal(fake.expanded.length, 1);
    assert.deepEqual(s.events.map((e) => [e[0].kind, e[2], e[3]]), [
      ['Pod', 'FileSystemResizeFailed', 'MountVolume.NodeExpandVolume failed for volume "pv1" requested read-only file system'],
      ['PersistentVolumeClaim', 'FileSystemResizeFailed', 'MountVolume.NodeExpandVolume failed for volume "pv1" requested read-only file system'],
    ]);
  });

  void it('ignores nodeExpandSecretRef with the CSINodeExpandSecret gate off', async () => {
    const s = await setUp('expand-gate-off', { metadata: { name: DRIVER }, spec: { attachRequired: false } }, false);
    fake.extra = ['EXPAND_VOLUME'];
    const claim: PersistentVolumeClaim = { metadata: { name: 'c2', namespace: 'ns' }, spec: {}, status: { capacity: { storage: '1Gi' } } };
    const grown = pv('pv2', 'h2', { nodeExpandSecretRef: { namespace: 'vault', name: 'absent' } }, { capacity: { storage: '3Gi' } });
    await s.mounter.setUp(pod('a'), 'a', 'data', { kind: 'persistent', volume: grown, claim, readOnly: false });
    assert.deepEqual(fake.expanded.map((r) => [r.requiredBytes, r.secrets]), [[3 * 1024 ** 3, {}]]);
    assert.equal(s.patches.length, 1);
  });
});
