/**
 * The storage control loops of a real orch-apiserver (every loop on, SQLite) with simulated
 * nodes, through kubectl and the API: a volume and a claim bound (Immediate); a
 * WaitForFirstConsumer claim bound to the local volume of the node its pod is scheduled to; a
 * claim that never binds staying Pending with its event; a pod whose volume's node affinity
 * excludes every node, and one whose claim is missing, explained by FailedScheduling; the claim
 * protection keeping a claim in use until its pod goes; Retain and Delete reclaim; the
 * attach/detach controller making and removing a VolumeAttachment and the node's
 * volumesAttached following it (the test plays the external attacher); a generic ephemeral
 * volume's claim made, owned by its pod, and removed with it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { csiAttachmentName } from '../../src/api/storage/index.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { simulateNode, type SimulatedNode } from '../helpers/nodes.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
let server: ApiServer;
let dir: string;
const nodes: SimulatedNode[] = [];
const STORAGE = '/apis/storage.orch.io/v1';
const CLAIMS = '/api/v1/namespaces/default/persistentvolumeclaims';

const kubectl = async (...args: string[]): Promise<string> => (await runKubectl(server, args)).stdout;
const get = async (path: string): Promise<Obj | undefined> => {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? res.body : undefined;
};
const field = (o: Obj | undefined, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (v as Obj | undefined)?.[k], o);
async function apply(objects: Obj[]): Promise<void> {
  const file = join(dir, `objects-${Math.random().toString(16).slice(2)}.json`);
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  await kubectl('create', '-f', file);
}
const claim = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });
const volume = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], ...spec } });
const pod = (name: string, volumes: Obj[], nodeName?: string): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { ...(nodeName === undefined ? {} : { nodeName }), terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox:1.35' }], volumes },
});
const onNode = (nodeName: string): Obj => ({ required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'orch.io/hostname', operator: 'In', values: [nodeName] }] }] } });
const phase = async (path: string): Promise<unknown> => field(await get(path), 'status', 'phase');

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'storage-controllers-'));
  server = await startApiServer({ storage: 'sqlite', controllers: true });
  for (const name of ['node-a', 'node-b']) nodes.push(await simulateNode(server.client, name));
  // node-a's agent leaves attaching to the attach/detach controller, as the node agent declares it.
  const res = await server.client.request('PATCH', '/api/v1/nodes/node-a', {
    body: { metadata: { annotations: { 'volumes.orch.io/controller-managed-attach-detach': 'true' } } }, contentType: 'application/merge-patch+json',
  });
  assert.equal(res.status, 200, res.text);
  await apply([{ apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'orch.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' }]);
});

after(async () => {
  for (const n of nodes) n.stop();
  await server.stop();
  await removeTempDir(dir);
});

void describe('the storage control loops of orch-apiserver', () => {
  void it('binds a claim to a volume at once, and leaves the volume Released (Retain) when the claim goes', async () => {
    await apply([volume('manual', { storageClassName: '', hostPath: { path: '/srv/manual' } }), claim('manual', { storageClassName: '' })]);
    await waitFor('claim manual Bound', async () => (await phase(`${CLAIMS}/manual`)) === 'Bound');
    const printed = await kubectl('get', 'pvc', 'manual');
    assert.match(printed, /manual\s+Bound\s+manual\s+2Gi\s+RWO\s+\s+\d+s/);
    const bound = await get(`${CLAIMS}/manual`);
    assert.deepEqual(field(bound, 'metadata', 'annotations'), { 'pv.orch.io/bind-completed': 'yes', 'pv.orch.io/bound-by-controller': 'yes' });
    assert.match(await kubectl('get', 'pv', 'manual'), /manual\s+2Gi\s+RWO\s+Retain\s+Bound\s+default\/manual/);
    await kubectl('delete', 'pvc', 'manual');
    await waitFor('volume manual Released', async () => (await phase('/api/v1/persistentvolumes/manual')) === 'Released');
  });

  void it('binds a WaitForFirstConsumer claim to the local volume of the node its pod is scheduled to', async () => {
    await apply([
      volume('local-b', { storageClassName: 'local', persistentVolumeReclaimPolicy: 'Delete', local: { path: '/mnt/b' }, nodeAffinity: onNode('node-b') }),
      claim('data', { storageClassName: 'local' }),
    ]);
    await waitFor('the claim to wait for its first consumer', async () => /WaitForFirstConsumer\s+.*waiting for first consumer to be created before binding/.test(await kubectl('describe', 'pvc', 'data')));
    assert.equal(await phase(`${CLAIMS}/data`), 'Pending');
    await apply([pod('web', [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }])]);
    const scheduled = await waitFor('web scheduled', async () => field(await get('/api/v1/namespaces/default/pods/web'), 'spec', 'nodeName'), { timeoutMs: 30_000 });
    assert.equal(scheduled, 'node-b');
    const bound = await waitFor('claim data Bound', async () => {
      const c = await get(`${CLAIMS}/data`);
      return field(c, 'status', 'phase') === 'Bound' ? c : undefined;
    });
    assert.equal(field(bound, 'spec', 'volumeName'), 'local-b');
    assert.match(await kubectl('get', 'pv', 'local-b'), /local-b\s+2Gi\s+RWO\s+Delete\s+Bound\s+default\/data\s+local/);
  });

  void it('keeps a claim in use while its pod exists, then deletes it; its Delete volume has no deleter and fails with upstream\'s message', async () => {
    await kubectl('delete', 'pvc', 'data', '--wait=false');
    await waitFor('claim data Terminating', async () => /data\s+Terminating/.test(await kubectl('get', 'pvc', 'data')));
    assert.deepEqual(field(await get(`${CLAIMS}/data`), 'metadata', 'finalizers'), ['orch.io/pvc-protection']);
    await kubectl('delete', 'pod', 'web', '--grace-period=0', '--force');
    await waitFor('claim data gone', async () => (await get(`${CLAIMS}/data`)) === undefined);
    await waitFor('volume local-b Failed', async () => (await phase('/api/v1/persistentvolumes/local-b')) === 'Failed');
    assert.equal(field(await get('/api/v1/persistentvolumes/local-b'), 'status', 'message'), 'Error getting deleter volume plugin for volume "local-b": no deletable volume plugin matched');
    assert.match(await kubectl('describe', 'pv', 'local-b'), /Warning\s+VolumeFailedDelete\s+.*persistentvolume-controller\s+Error getting deleter volume plugin/);
  });

  void it('leaves a claim that nothing satisfies Pending with its event', async () => {
    await apply([claim('huge', { storageClassName: '', resources: { requests: { storage: '100Ti' } } })]);
    await waitFor('the FailedBinding event', async () => /FailedBinding\s+.*no persistent volumes available for this claim and no storage class is set/.test(await kubectl('describe', 'pvc', 'huge')));
    assert.equal(await phase(`${CLAIMS}/huge`), 'Pending');
  });

  void it('explains pods whose volume excludes every node, and whose claim is missing', async () => {
    await apply([
      volume('elsewhere', { storageClassName: 'local', local: { path: '/mnt/x' }, nodeAffinity: onNode('node-z'), claimRef: { namespace: 'default', name: 'far' } }),
      claim('far', { storageClassName: 'local', volumeName: 'elsewhere' }),
    ]);
    await waitFor('claim far Bound', async () => (await phase(`${CLAIMS}/far`)) === 'Bound');
    await apply([pod('stranded', [{ name: 'd', persistentVolumeClaim: { claimName: 'far' } }]), pod('orphan', [{ name: 'd', persistentVolumeClaim: { claimName: 'absent' } }])]);
    const tail = 'preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..';
    await waitFor('stranded explained', async () => (await kubectl('describe', 'pod', 'stranded')).includes(`0/2 nodes are available: 2 node(s) had volume node affinity conflict. ${tail}`));
    await waitFor('orphan explained', async () => (await kubectl('describe', 'pod', 'orphan')).includes(`0/2 nodes are available: persistentvolumeclaim "absent" not found. ${tail}`));
    assert.equal(field(await get('/api/v1/namespaces/default/pods/orphan'), 'spec', 'nodeName'), undefined);
  });

  void it('attaches a CSI volume to a managed node, reports it attached once the attacher says so, and detaches it when the pod goes', async () => {
    await apply([
      volume('csi-vol', { csi: { driver: 'attach.csi.orch.io', volumeHandle: 'vol-1' }, storageClassName: '', claimRef: { namespace: 'default', name: 'csi-data' } }),
      claim('csi-data', { storageClassName: '', volumeName: 'csi-vol' }),
    ]);
    await waitFor('claim csi-data Bound', async () => (await phase(`${CLAIMS}/csi-data`)) === 'Bound');
    await apply([pod('csi-user', [{ name: 'd', persistentVolumeClaim: { claimName: 'csi-data' } }], 'node-a')]);
    const name = csiAttachmentName('vol-1', 'attach.csi.orch.io', 'node-a');
    const attachment = await waitFor('the VolumeAttachment', () => get(`${STORAGE}/volumeattachments/${name}`));
    assert.deepEqual(attachment.spec, { attacher: 'attach.csi.orch.io', source: { persistentVolumeName: 'csi-vol' }, nodeName: 'node-a' });
    assert.match(await kubectl('get', 'volumeattachments'), new RegExp(`${name}\\s+attach.csi.orch.io\\s+csi-vol\\s+node-a\\s+false`));
    // The external attacher's part.
    await kubectl('patch', 'volumeattachment', name, '--subresource=status', '--type=merge', '-p', '{"status":{"attached":true}}');
    await waitFor('node-a volumesAttached', async () => JSON.stringify(field(await get('/api/v1/nodes/node-a'), 'status', 'volumesAttached'))
      === JSON.stringify([{ name: 'orch.io/csi/attach.csi.orch.io^vol-1', devicePath: '' }]));
    await kubectl('delete', 'pod', 'csi-user', '--grace-period=0', '--force');
    await waitFor('the VolumeAttachment deleted', async () => (await get(`${STORAGE}/volumeattachments/${name}`)) === undefined);
    await waitFor('node-a volumesAttached emptied', async () => field(await get('/api/v1/nodes/node-a'), 'status', 'volumesAttached') === undefined);
  });

  void it('makes the claim of a generic ephemeral volume, owned by its pod, and removes it with the pod', async () => {
    await apply([
      volume('scratch-a', { storageClassName: 'local', local: { path: '/mnt/scratch' }, nodeAffinity: onNode('node-a') }),
      pod('builder', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { metadata: { labels: { app: 'builder' } }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Gi' } } } } } }]),
    ]);
    const made = await waitFor('claim builder-scratch', () => get(`${CLAIMS}/builder-scratch`));
    const uid = field(await get('/api/v1/namespaces/default/pods/builder'), 'metadata', 'uid');
    assert.deepEqual(field(made, 'metadata', 'ownerReferences'), [{ apiVersion: 'v1', kind: 'Pod', name: 'builder', uid, controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(field(made, 'metadata', 'labels'), { app: 'builder' });
    await waitFor('builder scheduled to node-a', async () => field(await get('/api/v1/namespaces/default/pods/builder'), 'spec', 'nodeName') === 'node-a', { timeoutMs: 30_000 });
    await waitFor('claim builder-scratch Bound to scratch-a', async () => field(await get(`${CLAIMS}/builder-scratch`), 'spec', 'volumeName') === 'scratch-a');
    await kubectl('delete', 'pod', 'builder', '--grace-period=0', '--force');
    await waitFor('claim builder-scratch removed', async () => (await get(`${CLAIMS}/builder-scratch`)) === undefined);
  });
});
