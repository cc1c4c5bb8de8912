import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeEventRecorder, FakeResourceClient } from '../client/testing.js';
import { PersistentVolumeController } from './index.js';

type Obj = WireObject;

async function harness(): Promise<{
  clock: FakeClock; pvs: FakeResourceClient; pvcs: FakeResourceClient; classes: FakeResourceClient; pods: FakeResourceClient;
  recorder: FakeEventRecorder; controller: PersistentVolumeController; pv: (name: string) => Obj; pvc: (name: string) => Obj;
}> {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const pvs = new FakeResourceClient({ resource: 'persistentvolumes', kind: 'PersistentVolume', clock, statusSubresource: true });
  const pvcs = new FakeResourceClient({ resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', clock, statusSubresource: true });
  const classes = new FakeResourceClient({ resource: 'storageclasses', kind: 'StorageClass', apiVersion: 'storage.orch.io/v1', clock });
  const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
  const informer = (client: FakeResourceClient): Informer => new Informer({ client, clock, log, what: 'x' });
  const [vi, ci, si, pi] = [informer(pvs), informer(pvcs), informer(classes), informer(pods)];
  const recorder = new FakeEventRecorder();
  const controller = new PersistentVolumeController({ volumes: vi, claims: ci, classes: si, pods: pi, volumesClient: pvs, claimsClient: pvcs, recorder, clock, log });
  for (const i of [vi, ci, si, pi]) await i.start();
  controller.start();
  return {
    clock, pvs, pvcs, classes, pods, recorder, controller,
    pv: (name) => pvs.peek('', name) ?? {},
    pvc: (name) => pvcs.peek('default', name) ?? {},
  };
}

const volume = (name: string, size: string, extra: Obj = {}, meta: Obj = {}): Obj => ({
  metadata: { name, ...meta }, spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/data/${name}` }, ...extra },
  status: { phase: 'Pending' },
});
const claim = (name: string, size: string, extra: Obj = {}): Obj => ({
  metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...extra }, status: { phase: 'Pending' },
});
const spec = (o: Obj): Obj => o.spec as Obj;
const status = (o: Obj): Obj => (o.status ?? {}) as Obj;
const annotations = (o: Obj): Obj => ((o.metadata as Obj).annotations ?? {}) as Obj;

void describe('the PV controller', () => {
  void it('binds a claim to the smallest volume that fits its modes, size, class and selector', async () => {
    const h = await harness();
    await h.pvs.create('', volume('big', '10Gi', { storageClassName: 'fast' }));
    await h.pvs.create('', volume('small', '2Gi', { storageClassName: 'fast' }, { labels: { tier: 'gold' } }));
    await h.pvs.create('', volume('tiny', '500Mi', { storageClassName: 'fast' }, { labels: { tier: 'gold' } }));
    await h.pvs.create('', volume('other-class', '2Gi', { storageClassName: 'slow' }));
    await h.pvs.create('', volume('rwx', '2Gi', { storageClassName: 'fast', accessModes: ['ReadWriteMany', 'ReadWriteOnce'] }, { labels: { tier: 'gold' } }));
    await h.clock.advance(0);
    assert.equal(status(h.pv('small')).phase, 'Available');
    await h.pvcs.create('default', claim('data', '1Gi', { storageClassName: 'fast', selector: { matchLabels: { tier: 'gold' } } }));
    await h.clock.advance(0);
    const c = h.pvc('data');
    assert.equal(spec(c).volumeName, 'small', 'the smallest fitting volume of the fewest access modes');
    assert.deepEqual(status(c), { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' } });
    assert.deepEqual(annotations(c), { 'pv.orch.io/bound-by-controller': 'yes', 'pv.orch.io/bind-completed': 'yes' });
    const v = h.pv('small');
    assert.equal(status(v).phase, 'Bound');
    assert.deepEqual(annotations(v), { 'pv.orch.io/bound-by-controller': 'yes' });
    const ref = spec(v).claimRef as Obj;
    assert.deepEqual([ref.kind, ref.namespace, ref.name, ref.uid], ['PersistentVolumeClaim', 'default', 'data', (c.metadata as Obj).uid]);
    await h.controller.close();
  });

  void it('honours a volume pre-bound to a claim and a claim naming its volume, and refuses one that does not fit', async () => {
    const h = await harness();
    await h.pvs.create('', volume('reserved', '5Gi', { claimRef: { namespace: 'default', name: 'mine' } }));
    await h.pvs.create('', volume('named', '5Gi'));
    await h.pvs.create('', volume('small', '1Gi'));
    await h.pvcs.create('default', claim('mine', '1Gi'));
    await h.pvcs.create('default', claim('wants-named', '1Gi', { volumeName: 'named' }));
    await h.pvcs.create('default', claim('wants-small', '2Gi', { volumeName: 'small' }));
    await h.clock.advance(0);
    assert.equal(spec(h.pvc('mine')).volumeName, 'reserved');
    assert.equal(annotations(h.pv('reserved'))['pv.orch.io/bound-by-controller'], undefined, 'pre-bound by its creator');
    assert.equal(status(h.pvc('wants-named')).phase, 'Bound');
    assert.equal(annotations(h.pvc('wants-named'))['pv.orch.io/bound-by-controller'], undefined);
    assert.equal(status(h.pvc('wants-small')).phase, 'Pending');
    assert.ok(h.recorder.events.some((e) => e.reason === 'VolumeMismatch' && e.note === 'Cannot bind to requested volume "small": requested PV is too small'));
    await h.controller.close();
  });

  void it('leaves claims of WaitForFirstConsumer classes to the scheduler, saying which pod they wait for', async () => {
    const h = await harness();
    await h.classes.create('', { metadata: { name: 'local' }, provisioner: 'orch.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' });
    await h.pvs.create('', volume('local-1', '5Gi', { storageClassName: 'local' }));
    await h.pvcs.create('default', claim('data', '1Gi', { storageClassName: 'local' }));
    await h.clock.advance(0);
    assert.equal(spec(h.pvc('data')).volumeName, undefined);
    assert.deepEqual(h.recorder.events.map((e) => [e.reason, e.note]).at(-1), ['WaitForFirstConsumer', 'waiting for first consumer to be created before binding']);
    await h.pods.create('default', { metadata: { name: 'web' }, spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] }, status: { phase: 'Pending' } });
    await h.clock.advance(15_000);
    assert.deepEqual(h.recorder.events.map((e) => [e.reason, e.note]).at(-1), ['WaitForPodScheduled', 'waiting for pod web to be scheduled']);
    // The scheduler's binding: the volume's claimRef; the controller finishes it.
    const pv = h.pv('local-1');
    spec(pv).claimRef = { namespace: 'default', name: 'data', uid: (h.pvc('data').metadata as Obj).uid };
    await h.pvs.update('', 'local-1', pv);
    await h.clock.advance(0);
    assert.equal(spec(h.pvc('data')).volumeName, 'local-1');
    assert.equal(status(h.pvc('data')).phase, 'Bound');
    await h.controller.close();
  });

  void it('reports a claim without class or volume, gives it the default class once there is one, and annotates it for an external provisioner', async () => {
    const h = await harness();
    await h.pvcs.create('default', claim('orphan', '1Gi'));
    await h.clock.advance(0);
    assert.deepEqual(h.recorder.events.map((e) => [e.type, e.reason, e.note]), [['Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set']]);
    await h.classes.create('', { metadata: { name: 'csi', annotations: { 'storageclass.orch.io/is-default-class': 'true' } }, provisioner: 'hostpath.csi.orch.io', volumeBindingMode: 'Immediate' });
    await h.clock.advance(0);
    assert.equal(spec(h.pvc('orphan')).storageClassName, 'csi');
    assert.equal(annotations(h.pvc('orphan'))['volume.orch.io/storage-provisioner'], 'hostpath.csi.orch.io');
    assert.equal(annotations(h.pvc('orphan'))['volume.beta.orch.io/storage-provisioner'], 'hostpath.csi.orch.io');
    assert.ok(h.recorder.events.some((e) => e.reason === 'ExternalProvisioning' && e.note === 'waiting for a volume to be created, either by external provisioner "hostpath.csi.orch.io" or manually created by system administrator'));
    await h.classes.create('', { metadata: { name: 'manual' }, provisioner: 'orch.io/no-provisioner', volumeBindingMode: 'Immediate' });
    await h.pvcs.create('default', claim('manual', '1Gi', { storageClassName: 'manual' }));
    await h.clock.advance(0);
    assert.ok(h.recorder.events.some((e) => e.name === 'manual' && e.reason === 'ProvisioningFailed' && e.note === 'no volume plugin matched name: orch.io/no-provisioner'));
    await h.controller.close();
  });

  void it('releases volumes by their policy when their claim goes, and marks a claim Lost when its volume goes', async () => {
    const h = await harness();
    await h.pvs.create('', volume('kept', '1Gi', { claimRef: { namespace: 'default', name: 'a' } }));
    await h.pvs.create('', volume('deleted', '1Gi', { claimRef: { namespace: 'default', name: 'b' }, persistentVolumeReclaimPolicy: 'Delete' }));
    await h.pvs.create('', volume('lost', '1Gi', { claimRef: { namespace: 'default', name: 'c' } }));
    for (const name of ['a', 'b', 'c']) await h.pvcs.create('default', claim(name, '1Gi'));
    await h.clock.advance(0);
    assert.deepEqual(['a', 'b', 'c'].map((n) => status(h.pvc(n)).phase), ['Bound', 'Bound', 'Bound']);
    await h.pvcs.delete('default', 'a');
    await h.pvcs.delete('default', 'b');
    await h.pvs.delete('', 'lost');
    await h.clock.advance(0);
    assert.equal(status(h.pv('kept')).phase, 'Released');
    assert.deepEqual(status(h.pv('deleted')), { phase: 'Failed', message: 'Error getting deleter volume plugin for volume "deleted": no deletable volume plugin matched' });
    assert.ok(h.recorder.events.some((e) => e.name === 'deleted' && e.type === 'Warning' && e.reason === 'VolumeFailedDelete'));
    assert.equal(status(h.pvc('c')).phase, 'Lost');
    assert.ok(h.recorder.events.some((e) => e.name === 'c' && e.reason === 'ClaimLost' && e.note === 'Bound claim has lost its PersistentVolume. Data on the volume is lost!'));
    await h.controller.close();
  });
});
