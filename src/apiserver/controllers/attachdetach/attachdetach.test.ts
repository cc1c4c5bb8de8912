import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import { csiAttachmentName } from '../../../api/storage/index.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeResourceClient } from '../client/testing.js';
import { AttachDetachController } from './index.js';

type Fakes = Record<'nodes' | 'pods' | 'claims' | 'volumes' | 'drivers' | 'attachments', FakeResourceClient>;

async function harness(): Promise<{ clock: FakeClock; fakes: Fakes; controller: AttachDetachController }> {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const fake = (resource: string, kind: string, statusSubresource = true): FakeResourceClient => new FakeResourceClient({ resource, kind, clock, statusSubresource });
  const fakes: Fakes = {
    nodes: fake('nodes', 'Node'), pods: fake('pods', 'Pod'), claims: fake('persistentvolumeclaims', 'PersistentVolumeClaim'),
    volumes: fake('persistentvolumes', 'PersistentVolume'), drivers: fake('csidrivers', 'CSIDriver', false), attachments: fake('volumeattachments', 'VolumeAttachment'),
  };
  const informer = (c: FakeResourceClient): Informer => new Informer({ client: c, clock, log, what: 'x' });
  const i = Object.fromEntries(Object.entries(fakes).map(([k, c]) => [k, informer(c)])) as Record<keyof typeof fakes, Informer>;
  const controller = new AttachDetachController({
    nodes: i.nodes, pods: i.pods, claims: i.claims, volumes: i.volumes, csiDrivers: i.drivers, attachments: i.attachments,
    attachmentsClient: fakes.attachments, nodesClient: fakes.nodes, clock, log,
  });
  for (const inf of Object.values(i)) await inf.start();
  controller.start();
  return { clock, fakes, controller };
}

const node = (name: string, managed: boolean, extra: WireObject = {}): WireObject => ({
  metadata: { name, ...(managed ? { annotations: { 'volumes.orch.io/controller-managed-attach-detach': 'true' } } : {}) },
  spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }], ...extra },
});
const csiVolume = (name: string, driver: string, handle: string, claim: string): WireObject => ({
  metadata: { name }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver, volumeHandle: handle }, claimRef: { namespace: 'default', name: claim } },
});
const boundClaim = (name: string, volume: string): WireObject => ({ metadata: { name, namespace: 'default' }, spec: { volumeName: volume }, status: { phase: 'Bound' } });
const pod = (name: string, nodeName: string, claim: string): WireObject => ({
  metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: claim } }] }, status: { phase: 'Running' },
});

void describe('the attach/detach controller', () => {
  void it('attaches the CSI volumes of a managed node\'s pods, reports them attached, and detaches them once unused and unmounted', async () => {
    const h = await harness();
    const { nodes, pods, claims, volumes, drivers, attachments } = h.fakes;
    await nodes.create('', node('n1', true));
    await nodes.create('', node('plain', false));
    await drivers.create('', { metadata: { name: 'noattach.csi.orch.io' }, spec: { attachRequired: false } });
    await volumes.create('', csiVolume('pv-a', 'attach.csi.orch.io', 'vol-a', 'a'));
    await volumes.create('', csiVolume('pv-b', 'noattach.csi.orch.io', 'vol-b', 'b'));
    await volumes.create('', csiVolume('pv-c', 'attach.csi.orch.io', 'vol-c', 'c'));
    for (const [c, v] of [['a', 'pv-a'], ['b', 'pv-b'], ['c', 'pv-c']] as const) await claims.create('default', boundClaim(c, v));
    await pods.create('default', pod('web', 'n1', 'a'));
    await pods.create('default', pod('other', 'n1', 'b'));
    await pods.create('default', pod('unmanaged', 'plain', 'c'));
    await h.clock.advance(0);
    const name = csiAttachmentName('vol-a', 'attach.csi.orch.io', 'n1');
    assert.deepEqual(attachments.all().map((va) => [(va.metadata as WireObject).name, va.spec]), [
      [name, { attacher: 'attach.csi.orch.io', source: { persistentVolumeName: 'pv-a' }, nodeName: 'n1' }],
    ], 'only the attaching driver, and only on the managed node');
    const volumesAttached = (): unknown => (nodes.peek('', 'n1')?.status as WireObject).volumesAttached;
    assert.equal(volumesAttached(), undefined, 'not before the external attacher says so');
    await attachments.update('', name, { ...attachments.peek('', name), status: { attached: true } }, 'status');
    await h.clock.advance(0);
    assert.deepEqual(volumesAttached(), [{ name: 'orch.io/csi/attach.csi.orch.io^vol-a', devicePath: '' }]);
    // The agent still reports the volume in use: the attachment stays after the pod goes.
    await nodes.update('', 'n1', { ...nodes.peek('', 'n1'), status: { ...(nodes.peek('', 'n1')?.status as WireObject), volumesInUse: ['orch.io/csi/attach.csi.orch.io^vol-a'] } }, 'status');
    await pods.delete('default', 'web');
    await h.clock.advance(0);
    assert.equal(attachments.all().length, 1);
    await nodes.update('', 'n1', { ...nodes.peek('', 'n1'), status: { ...(nodes.peek('', 'n1')?.status as WireObject), volumesInUse: [] } }, 'status');
    await h.clock.advance(0);
    assert.deepEqual(attachments.all(), []);
    assert.equal(volumesAttached(), undefined);
    await h.controller.close();
  });

  void it('detaches from a node that is not Ready after the unmount timeout, and at once from a deleted node', async () => {
    const h = await harness();
    const { nodes, pods, claims, volumes, attachments } = h.fakes;
    await nodes.create('', node('n1', true, { volumesInUse: ['orch.io/csi/d^v1'], conditions: [{ type: 'Ready', status: 'Unknown' }] }));
    await nodes.create('', node('n2', true));
    await volumes.create('', csiVolume('pv1', 'd', 'v1', 'c1'));
    await volumes.create('', csiVolume('pv2', 'd', 'v2', 'c2'));
    await claims.create('default', boundClaim('c1', 'pv1'));
    await claims.create('default', boundClaim('c2', 'pv2'));
    await pods.create('default', pod('p1', 'n1', 'c1'));
    await pods.create('default', pod('p2', 'n2', 'c2'));
    await h.clock.advance(0);
    assert.equal(attachments.all().length, 2);
    await pods.delete('default', 'p1');
    await h.clock.advance(60_000);
    assert.equal(attachments.all().length, 2, 'still mounted, as far as the node said');
    await h.clock.advance(300_000);
    assert.deepEqual(attachments.all().map((va) => (va.spec as WireObject).nodeName), ['n2']);
    await nodes.delete('', 'n2');
    await h.clock.advance(0);
    assert.deepEqual(attachments.all(), []);
    await h.controller.close();
  });
});
