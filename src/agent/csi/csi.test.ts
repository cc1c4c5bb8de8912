import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { csiAttachmentName } from '../../api/storage/index.js';
import { FakeLogger } from '../logging/testing.js';
import type { PublishRequest } from './client.js';
import { createCsiDrivers } from './drivers.js';
import { FakeDriver, FakePublisher, fakeApi } from './testing.js';
import { CSI_DRIVER_INVALID, CSI_DRIVER_NOT_REGISTERED, CSI_MOUNT_FAILED, CSI_UNMOUNT_FAILED, CSI_VOLUME_MODE_UNSUPPORTED } from './errors.js';
import { createCsiMounter } from './mounter.js';
import { inlineVolumeHandle, stagingPath } from './vol-data.js';

const DRIVER = 'd.example.com';

const rejectsWith = async (p: Promise<unknown>, code: string, text: string): Promise<void> => {
  await assert.rejects(p, (err: unknown) => err instanceof OrchError && err.code === code && err.message.includes(text));
};

const pv = (name: string, handle: string): PersistentVolume => ({
  metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: handle } },
});
const persistent = (volume: PersistentVolume, readOnly: boolean) => ({ kind: 'persistent' as const, volume, readOnly });
const pod = (uid: string) => ({ metadata: { name: `p-${uid}`, namespace: 'ns', uid }, spec: { containers: [] } });

void describe('CSI drivers and mounter', () => {
  let dir = '';
  let mountInfo = '';
  let fake: FakeDriver;
  let publisher: FakePublisher;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'csi-'));
    mountInfo = join(dir, 'mountinfo');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const setUpDrivers = async (): Promise<ReturnType<typeof createCsiDrivers>> => {
    await writeFile(mountInfo, '');
    fake = new FakeDriver(mountInfo);
    publisher = new FakePublisher();
    const drivers = createCsiDrivers({ logger: new FakeLogger(), publisher, dial: () => fake });
    await drivers.pluginHandler.registerPlugin(DRIVER, '/x.sock', ['1.0.0']);
    return drivers;
  };

  void it('validates versions, publishes node info on registration and removes it on deregistration', async () => {
    const drivers = await setUpDrivers();
    const h = drivers.pluginHandler;
    assert.throws(() => h.validatePlugin(DRIVER, '/x.sock', ['0.3.0', '2.0.0']), /none of the requested versions \[0.3.0, 2.0.0\] is supported \(supported: 1.x\)/);
    assert.doesNotThrow(() => h.validatePlugin(DRIVER, '/x.sock', ['v1.2.0']));
    assert.deepEqual(publisher.added, [[DRIVER, fake.info]]);
    assert.deepEqual(drivers.names(), [DRIVER]);
    await h.deregisterPlugin(DRIVER, '/other.sock');
    assert.deepEqual(drivers.names(), [DRIVER], 'another endpoint does not deregister it');
    await h.deregisterPlugin(DRIVER, '/x.sock');
    assert.deepEqual([drivers.names(), publisher.removed, fake.closed], [[], [DRIVER], 1]);
    assert.throws(() => drivers.client(DRIVER), (e: unknown) => e instanceof OrchError && e.code === CSI_DRIVER_NOT_REGISTERED);
    fake.failing.add('NodeGetInfo');
    await rejectsWith(h.registerPlugin(DRIVER, '/x.sock', ['1.0.0']), CSI_DRIVER_INVALID, 'NodeGetInfo failed');
    fake.failing.clear();
    fake.info = { ...fake.info, nodeId: '' };
    await rejectsWith(h.registerPlugin(DRIVER, '/x.sock', ['1.0.0']), CSI_DRIVER_INVALID, 'empty node_id');
  });

  void it('waits for the attachment, stages once, publishes per pod, and unstages after the last pod', async () => {
    const drivers = await setUpDrivers();
    const rootDir = join(dir, 'root1');
    let attachment: VolumeAttachment | undefined;
    const csiDriver: CSIDriver | undefined = undefined;
    const clock = new FakeClock();
    const mounter = createCsiMounter({
      rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock, mountInfoPath: mountInfo,
      api: fakeApi({ csiDriver: () => Promise.resolve(csiDriver), volumeAttachment: () => Promise.resolve(attachment) }),
    });
    const vaName = csiAttachmentName('h1', DRIVER, 'node-1');
    // Attachable: mounted only once the Node's status lists it (upstream's ReportedInUse).
    const waiting = rejectsWith(mounter.setUp(pod('a'), 'a', 'data', persistent(pv('pv1', 'h1'), false)), CSI_MOUNT_FAILED,
      `volume "data": volume orch.io/csi/${DRIVER}^h1 has not been added to the list of VolumesInUse in the node's volume status yet`);
    // The mount reaches its wait after some real file reads: advance the clock only once it waits.
    const untilWaiting = async (): Promise<void> => { while (clock.pending().length === 0) await new Promise((r) => setImmediate(r)); };
    await untilWaiting();
    await clock.advance(9_000);
    mounter.markVolumesReportedInUse(['orch.io/csi/other^h1']);
    await clock.advance(1_000);
    await waiting;
    const listed = rejectsWith(mounter.setUp(pod('a'), 'a', 'data', persistent(pv('pv1', 'h1'), false)), CSI_MOUNT_FAILED, 'does not exist yet');
    await untilWaiting();
    await clock.advance(1_000);
    mounter.markVolumesReportedInUse([`orch.io/csi/${DRIVER}^h1`]);
    await listed;
    await rejectsWith(mounter.setUp(pod('a'), 'a', 'data', persistent(pv('pv1', 'h1'), false)), CSI_MOUNT_FAILED, `volume "data": volumeattachment ${vaName} of persistentvolume pv1 does not exist yet`);
    attachment = { metadata: { name: vaName }, spec: { attacher: DRIVER, nodeName: 'node-1', source: {} }, status: { attached: false } };
    await rejectsWith(mounter.setUp(pod('a'), 'a', 'data', persistent(pv('pv1', 'h1'), false)), CSI_MOUNT_FAILED, 'is not attached yet');
    attachment = { ...attachment, status: { attached: true, attachmentMetadata: { dev: '/dev/x' } } };
    const target = await mounter.setUp(pod('a'), 'a', 'data', persistent(pv('pv1', 'h1'), false));
    assert.equal(target, join(rootDir, 'pods', 'a', 'volumes', 'orch.io~csi', 'pv1', 'mount'));
    assert.deepEqual(JSON.parse(await readFile(join(target, '..', 'vol_data.json'), 'utf8')), {
      specVolID: 'pv1', volumeHandle: 'h1', driverName: DRIVER, nodeName: 'node-1', attachmentID: vaName, volumeLifecycleMode: 'Persistent',
    });
    await mounter.setUp(pod('a'), 'a', 'data', persistent(pv('pv1', 'h1'), false));
    await mounter.setUp(pod('b'), 'b', 'data', persistent(pv('pv1', 'h1'), true));
    assert.deepEqual(fake.calls.filter((c) => c !== 'NodeGetCapabilities' && c !== 'NodeGetInfo'), ['NodeStageVolume', 'NodePublishVolume', 'NodePublishVolume'], 'staged once, published once per pod');
    fake.calls = [];
    await mounter.tearDown('a');
    assert.deepEqual(fake.calls, ['NodeUnpublishVolume'], 'pod b still uses it');
    assert.equal(existsSync(join(rootDir, 'pods', 'a', 'volumes', 'orch.io~csi', 'pv1')), false);
    fake.failing.add('NodeUnstageVolume');
    await rejectsWith(mounter.tearDown('b'), CSI_UNMOUNT_FAILED, 'NodeUnstageVolume of h1 failed: rpc error: code = Internal desc = NodeUnstageVolume broke');
    assert.ok(existsSync(join(rootDir, 'pods', 'b', 'volumes', 'orch.io~csi', 'pv1', 'vol_data.json')), 'kept for the retry');
    fake.failing.clear();
    fake.calls = [];
    await mounter.tearDown('b');
    assert.deepEqual(fake.calls, ['NodeUnpublishVolume', 'NodeGetCapabilities', 'NodeUnstageVolume']);
    assert.equal(existsSync(stagingPath(rootDir, DRIVER, 'h1')), false);
  });

  void it('leaves no volume directory when publishing fails, and passes pod info when the CSIDriver asks', async () => {
    const drivers = await setUpDrivers();
    const rootDir = join(dir, 'root2');
    const csiDriver: CSIDriver = { metadata: { name: DRIVER }, spec: { attachRequired: false, podInfoOnMount: true } };
    const mounter = createCsiMounter({
      rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo,
      api: fakeApi({ csiDriver: () => Promise.resolve(csiDriver), volumeAttachment: () => Promise.reject(new Error('not asked')) }),
    });
    fake.stage = false;
    fake.failing.add('NodePublishVolume');
    await rejectsWith(mounter.setUp(pod('c'), 'c', 'data', persistent(pv('pv2', 'h2'), false)), CSI_MOUNT_FAILED, `CSI driver ${DRIVER}: NodePublishVolume of h2 failed: rpc error: code = Internal desc = NodePublishVolume broke`);
    assert.equal(existsSync(join(rootDir, 'pods', 'c', 'volumes', 'orch.io~csi', 'pv2')), false);
    fake.failing.clear();
    let seen: PublishRequest | undefined;
    fake.nodePublishVolume = (r) => { seen = r; return Promise.resolve(); };
    await mounter.setUp(pod('c'), 'c', 'data', persistent(pv('pv2', 'h2'), true));
    assert.equal(seen?.readonly, true);
    assert.equal(seen.stagingTargetPath, '');
    assert.deepEqual(seen.volumeContext, {
      'csi.storage.orch.io/pod.name': 'p-c', 'csi.storage.orch.io/pod.namespace': 'ns', 'csi.storage.orch.io/pod.uid': 'c',
      'csi.storage.orch.io/serviceAccount.name': 'default', 'csi.storage.orch.io/ephemeral': 'false',
    });
    await mkdir(join(rootDir, 'pods', 'other'), { recursive: true });
    await drivers.pluginHandler.deregisterPlugin(DRIVER, '/x.sock');
    await rejectsWith(mounter.tearDown('c'), CSI_UNMOUNT_FAILED, `driver name ${DRIVER} not found in the list of registered CSI drivers`);
  });
  void it('stages a volume once when two pods set it up at the same time', async () => {
    const drivers = await setUpDrivers();
    const csiDriver: CSIDriver = { metadata: { name: DRIVER }, spec: { attachRequired: false } };
    const mounter = createCsiMounter({
      rootDir: join(dir, 'root3'), nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo,
      api: fakeApi({ csiDriver: () => Promise.resolve(csiDriver), volumeAttachment: () => Promise.reject(new Error('not asked')) }),
    });
    await Promise.all([mounter.setUp(pod('x'), 'x', 'data', persistent(pv('pv3', 'h3'), false)), mounter.setUp(pod('y'), 'y', 'data', persistent(pv('pv3', 'h3'), false))]);
    assert.deepEqual(fake.calls.filter((c) => c === 'NodeStageVolume' || c === 'NodePublishVolume'), ['NodeStageVolume', 'NodePublishVolume', 'NodePublishVolume']);
    assert.deepEqual(await mounter.podVolumeStats('x'), [{ name: 'data', usedBytes: 2, capacityBytes: 3, availableBytes: 1 }]);
    await Promise.all([mounter.tearDown('x'), mounter.tearDown('y')]);
    assert.deepEqual(await mounter.podVolumeStats('x'), [], 'forgotten with the pod');
    assert.equal(fake.calls.filter((c) => c === 'NodeUnstageVolume').length, 1, 'unstaged once, after both');
  });

  void it('mounts an inline volume only for a driver listing Ephemeral, never staged, with the ephemeral flag', async () => {
    const drivers = await setUpDrivers();
    const rootDir = join(dir, 'root4');
    let csiDriver: CSIDriver | undefined;
    const mounter = createCsiMounter({
      rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo,
      api: fakeApi({ csiDriver: () => Promise.resolve(csiDriver), volumeAttachment: () => Promise.reject(new Error('not asked')) }),
    });
    const inline = { kind: 'inline' as const, source: { driver: DRIVER, volumeAttributes: { size: '1' } } };
    await rejectsWith(mounter.setUp(pod('e'), 'e', 'scratch', inline), CSI_VOLUME_MODE_UNSUPPORTED, `volume "scratch": volume mode "Ephemeral" not supported by driver ${DRIVER} (no CSIDriver object)`);
    csiDriver = { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Persistent'], podInfoOnMount: true } };
    await rejectsWith(mounter.setUp(pod('e'), 'e', 'scratch', inline), CSI_VOLUME_MODE_UNSUPPORTED, `volume mode "Ephemeral" not supported by driver ${DRIVER} (only supports ["Persistent"])`);
    mounter.markVolumesReportedInUse([`orch.io/csi/${DRIVER}^h9`]);
    await rejectsWith(mounter.setUp(pod('e'), 'e', 'data', persistent(pv('pv9', 'h9'), false)), CSI_MOUNT_FAILED, 'volumeattachment');
    csiDriver = { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Ephemeral'], podInfoOnMount: true } };
    await rejectsWith(mounter.setUp(pod('e'), 'e', 'data', persistent(pv('pv9', 'h9'), false)), CSI_VOLUME_MODE_UNSUPPORTED, 'volume mode "Persistent" not supported');
    let seen: PublishRequest | undefined;
    fake.nodePublishVolume = async (r) => { seen = r; fake.calls.push('NodePublishVolume'); await writeFile(mountInfo, `1 1 0:1 / ${r.targetPath} rw - fake fake rw\n`); };
    fake.calls = [];
    const target = await mounter.setUp(pod('e'), 'e', 'scratch', inline);
    assert.equal(target, join(rootDir, 'pods', 'e', 'volumes', 'orch.io~csi', 'scratch', 'mount'));
    assert.deepEqual(fake.calls, ['NodeGetCapabilities', 'NodePublishVolume'], 'never staged');
    assert.equal(seen?.volumeId, inlineVolumeHandle('e', 'scratch'));
    assert.match(seen.volumeId, /^csi-[0-9a-f]{64}$/);
    assert.equal(seen.volumeContext['csi.storage.orch.io/ephemeral'], 'true');
    assert.equal(seen.volumeContext['size'], '1');
    assert.equal((JSON.parse(await readFile(join(target, '..', 'vol_data.json'), 'utf8')) as { volumeLifecycleMode: string }).volumeLifecycleMode, 'Ephemeral');
    fake.calls = [];
    await mounter.tearDown('e');
    assert.deepEqual(fake.calls, ['NodeUnpublishVolume'], 'not unstaged');
  });

  void it('keeps the directory of a publish that timed out, for the retry or the teardown', async () => {
    const drivers = await setUpDrivers();
    const rootDir = join(dir, 'root5');
    const csiDriver: CSIDriver = { metadata: { name: DRIVER }, spec: { attachRequired: false } };
    const mounter = createCsiMounter({
      rootDir, nodeName: 'node-1', drivers, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo,
      api: fakeApi({ csiDriver: () => Promise.resolve(csiDriver), volumeAttachment: () => Promise.reject(new Error('not asked')) }),
    });
    fake.nodePublishVolume = () => Promise.reject(Object.assign(new Error('late'), { code: 4, details: 'Deadline exceeded' }));
    await rejectsWith(mounter.setUp(pod('t'), 't', 'data', persistent(pv('pv5', 'h5'), false)), CSI_MOUNT_FAILED, 'NodePublishVolume of h5 failed: rpc error: code = DeadlineExceeded desc = Deadline exceeded');
    const volDir = join(rootDir, 'pods', 't', 'volumes', 'orch.io~csi', 'pv5');
    assert.ok(existsSync(join(volDir, 'vol_data.json')), 'kept: the driver may still be publishing');
    fake.calls = [];
    await mounter.tearDown('t');
    assert.deepEqual(fake.calls, ['NodeUnpublishVolume', 'NodeGetCapabilities', 'NodeUnstageVolume']);
    assert.equal(existsSync(volDir), false);
    await drivers.pluginHandler.deregisterPlugin(DRIVER, '/x.sock');
    await rejectsWith(mounter.setUp(pod('u'), 'u', 'data', persistent(pv('pv6', 'h6'), false)), CSI_DRIVER_NOT_REGISTERED, `volume "data": driver name ${DRIVER} not found`);
  });
});
