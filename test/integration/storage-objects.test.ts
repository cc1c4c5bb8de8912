/**
 * The storage objects of a real orch-apiserver (no control loops but the service accounts'):
 * PersistentVolumes, PersistentVolumeClaims and the storage.orch.io/v1 StorageClasses, CSIDrivers,
 * CSINodes and VolumeAttachments created, read, listed and watched over the API (JSON and
 * protobuf) and through kubectl (the newest and the oldest of the machine's, and the dispatcher's
 * 1.30): get with upstream's columns, describe; the admission of claims and volumes (protection
 * finalizers, the default StorageClass); every object's bad input a 422 naming the fields; pods
 * with persistentVolumeClaim, csi, ephemeral and flexVolume volumes accepted as upstream
 * validates them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeObject } from '../../src/apiserver/protobuf/index.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { kubectl, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { removeTempDir } from '../helpers/tempdir.js';

type Obj = Record<string, unknown>;
let server: ApiServer;
let dir: string;
let envs: Map<string, KubectlEnv>;

const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Obj; text: string }> => server.client.request(method, path, body === undefined ? {} : { body });
const STORAGE = '/apis/storage.orch.io/v1';
const causes = (body: Obj): string[] => ((body.details as { causes?: { field: string }[] } | undefined)?.causes ?? []).map((c) => c.field);

const OBJECTS: readonly { path: string; body: Obj }[] = [
  {
    path: '/api/v1/persistentvolumes',
    body: {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'local-1' },
      spec: {
        capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'local', local: { path: '/mnt/disks/1' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'orch.io/hostname', operator: 'In', values: ['node-1'] }] }] } },
      },
    },
  },
  { path: '/api/v1/namespaces/default/persistentvolumeclaims', body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Gi' } } } } },
  { path: `${STORAGE}/storageclasses`, body: { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'orch.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' } },
  { path: `${STORAGE}/csidrivers`, body: { apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name: 'hostpath.csi.orch.io' }, spec: { volumeLifecycleModes: ['Persistent', 'Ephemeral'], podInfoOnMount: true } } },
  { path: `${STORAGE}/csinodes`, body: { apiVersion: 'storage.orch.io/v1', kind: 'CSINode', metadata: { name: 'node-1' }, spec: { drivers: [{ name: 'hostpath.csi.orch.io', nodeID: 'node-1', topologyKeys: ['topology.hostpath.csi/node'], allocatable: { count: 8 } }] } } },
  { path: `${STORAGE}/volumeattachments`, body: { apiVersion: 'storage.orch.io/v1', kind: 'VolumeAttachment', metadata: { name: 'csi-abc' }, spec: { attacher: 'hostpath.csi.orch.io', source: { persistentVolumeName: 'local-1' }, nodeName: 'node-1' } } },
];

before(async () => {
  envs = new Map([...kubectlBinaries(27, 33)].filter(([v]) => v === '1.27' || v === '1.33').map(([v, binary]) => [v, { binary, kubeconfig: '', home: '' }]));
  server = await startApiServer({ storage: 'sqlite' });
  dir = await mkdtemp(join(tmpdir(), 'storage-objects-'));
  for (const [v, e] of envs) envs.set(v, { ...e, kubeconfig: server.adminKubeconfig, home: join(dir, v) });
});

after(async () => {
  await server.stop();
  await removeTempDir(dir);
});

void describe('the storage objects of orch-apiserver', () => {
  void it('creates, gets, lists and watches each object, with its defaults and admission', async () => {
    const watch = await server.client.watch(`${STORAGE}/volumeattachments?watch=true`);
    for (const { path, body } of OBJECTS) {
      const created = await api('POST', path, body);
      assert.equal(created.status, 201, `${path}: ${created.text}`);
      const name = (body.metadata as Obj).name as string;
      const got = await api('GET', `${path}/${name}`);
      assert.equal(got.status, 200);
      const list = await api('GET', path);
      assert.deepEqual((list.body.items as Obj[]).map((i) => (i.metadata as Obj).name), [name]);
    }
    const event = await watch.next();
    assert.deepEqual([event.type, (event.object.metadata as Obj).name, event.object.status], ['ADDED', 'csi-abc', { attached: false }]);
    watch.close();
    const pv = (await api('GET', '/api/v1/persistentvolumes/local-1')).body;
    assert.deepEqual((pv.metadata as Obj).finalizers, ['orch.io/pv-protection']);
    assert.equal((pv.spec as Obj).persistentVolumeReclaimPolicy, 'Retain');
    assert.equal((pv.status as Obj).phase, 'Pending');
    const pvc = (await api('GET', '/api/v1/namespaces/default/persistentvolumeclaims/data')).body;
    assert.deepEqual([(pvc.metadata as Obj).finalizers, (pvc.spec as Obj).volumeMode, (pvc.status as Obj).phase], [['orch.io/pvc-protection'], 'Filesystem', 'Pending']);
    const driver = (await api('GET', `${STORAGE}/csidrivers/hostpath.csi.orch.io`)).body;
    assert.deepEqual([(driver.spec as Obj).attachRequired, (driver.spec as Obj).fsGroupPolicy], [true, 'ReadWriteOnceWithFSType']);
    const status = await api('PUT', `${STORAGE}/volumeattachments/csi-abc/status`, { ...(await api('GET', `${STORAGE}/volumeattachments/csi-abc`)).body, status: { attached: true } });
    assert.equal(status.status, 200, status.text);
    assert.deepEqual(status.body.status, { attached: true });
  });

  void it('answers the objects in protobuf', async () => {
    for (const path of ['/api/v1/persistentvolumes/local-1', `${STORAGE}/storageclasses/local`, `${STORAGE}/csinodes`]) {
      const body = await new Promise<Buffer>((resolve, reject) => {
        const req = request(`${server.url}${path}`, { ca: server.client.ca, agent: false, headers: { Authorization: `Bearer ${server.token}`, Accept: 'application/vnd.kubernetes.protobuf' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => { resolve(Buffer.concat(chunks)); });
        });
        req.on('error', reject);
        req.end();
      });
      const object = decodeObject(body);
      assert.ok(['PersistentVolume', 'StorageClass', 'CSINodeList'].includes(String(object.kind)), path);
      if (object.kind === 'PersistentVolume') assert.deepEqual((object.spec as Obj).local, { path: '/mnt/disks/1' });
      if (object.kind === 'CSINodeList') assert.equal(((((object.items as Obj[])[0]?.spec as Obj).drivers as Obj[])[0]?.allocatable as Obj).count, 8);
    }
  });

  void it('prints upstream\'s columns and describes each object with the oldest and newest kubectl', async () => {
    for (const [version, env] of envs) {
      const pvs = (await kubectl(env, ['get', 'pv,pvc,sc'])).stdout;
      assert.match(pvs, /NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+REASON\s+AGE/, version);
      assert.match(pvs, /persistentvolume\/local-1\s+10Gi\s+RWO\s+Retain\s+Pending\s+local/, version);
      assert.match(pvs, /NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+AGE/, version);
      assert.match(pvs, /persistentvolumeclaim\/data\s+Pending\s+local/, version);
      assert.match(pvs, /NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE/, version);
      assert.match(pvs, /storageclass.storage.orch.io\/local\s+orch.io\/no-provisioner\s+Delete\s+WaitForFirstConsumer\s+false/, version);
      const csi = (await kubectl(env, ['get', 'csidrivers,csinodes,volumeattachments'])).stdout;
      assert.match(csi, /NAME\s+ATTACHREQUIRED\s+PODINFOONMOUNT\s+STORAGECAPACITY\s+TOKENREQUESTS\s+REQUIRESREPUBLISH\s+MODES\s+AGE/, version);
      assert.match(csi, /hostpath.csi.orch.io\s+true\s+true\s+false\s+<unset>\s+false\s+Persistent,Ephemeral/, version);
      assert.match(csi, /csinode.storage.orch.io\/node-1\s+1\s/, version);
      assert.match(csi, /csi-abc\s+hostpath.csi.orch.io\s+local-1\s+node-1\s+true/, version);
      assert.match((await kubectl(env, ['get', 'pv', '-o', 'wide'])).stdout, /VOLUMEMODE[\s\S]*Filesystem/, version);
      assert.match((await kubectl(env, ['describe', 'pv', 'local-1'])).stdout, /Claim:\s*\n[\s\S]*Type:\s+LocalVolume[\s\S]*Path:\s+\/mnt\/disks\/1/, version);
      assert.match((await kubectl(env, ['describe', 'pvc', 'data'])).stdout, /StorageClass:\s+local[\s\S]*Status:\s+Pending/, version);
      assert.match((await kubectl(env, ['describe', 'sc', 'local'])).stdout, /Provisioner:\s+orch.io\/no-provisioner/, version);
      assert.match((await kubectl(env, ['describe', 'csidriver', 'hostpath.csi.orch.io'])).stdout, /Attach Required:\s+true/, version);
      assert.match((await kubectl(env, ['describe', 'csinode', 'node-1'])).stdout, /Node ID:\s+node-1/, version);
    }
  });

  void it('gives new claims that name no class the default StorageClass, and keeps an explicit ""', async () => {
    const sc = await api('POST', `${STORAGE}/storageclasses`, { metadata: { name: 'standard', annotations: { 'storageclass.orch.io/is-default-class': 'true' } }, provisioner: 'hostpath.csi.orch.io' });
    assert.equal(sc.status, 201, sc.text);
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    const spec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
    const plain = await api('POST', claims, { metadata: { name: 'plain' }, spec });
    const none = await api('POST', claims, { metadata: { name: 'none' }, spec: { ...spec, storageClassName: '' } });
    assert.equal((plain.body.spec as Obj).storageClassName, 'standard');
    assert.equal((none.body.spec as Obj).storageClassName, '');
    const env = envs.get('1.33');
    assert.ok(env !== undefined);
    assert.match((await kubectl(env, ['get', 'sc'])).stdout, /standard \(default\)\s+hostpath.csi.orch.io\s+Delete\s+Immediate/);
    await api('DELETE', `${STORAGE}/storageclasses/standard`);
  });

  void it('refuses bad objects with 422, every problem naming its field', async () => {
    const cases: readonly [string, Obj, readonly string[]][] = [
      ['/api/v1/persistentvolumes', { metadata: { name: 'bad' }, spec: { capacity: { storage: '0' }, accessModes: ['Sometimes'], local: { path: '/x' } } }, ['spec.accessModes', 'spec.capacity[storage]', 'spec.nodeAffinity']],
      ['/api/v1/persistentvolumes', { metadata: { name: 'bad2' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: '', volumeHandle: '' } } }, ['spec.csi.driver', 'spec.csi.volumeHandle']],
      ['/api/v1/namespaces/default/persistentvolumeclaims', { metadata: { name: 'bad' }, spec: { accessModes: [], volumeMode: 'Raw' } }, ['spec.accessModes', 'spec.resources[storage]', 'spec.volumeMode']],
      [`${STORAGE}/storageclasses`, { metadata: { name: 'bad' }, provisioner: '', reclaimPolicy: 'Recycle', volumeBindingMode: 'Later' }, ['provisioner', 'reclaimPolicy', 'volumeBindingMode']],
      [`${STORAGE}/csidrivers`, { metadata: { name: 'bad.csi' }, spec: { fsGroupPolicy: 'Always', volumeLifecycleModes: ['Forever'] } }, ['spec.fsGroupPolicy', 'spec.volumeLifecycleModes']],
      [`${STORAGE}/csinodes`, { metadata: { name: 'n' }, spec: { drivers: [{ name: 'd', nodeID: '' }, { name: 'd', nodeID: 'x' }] } }, ['spec.drivers[0].nodeID', 'spec.drivers[1].name']],
      [`${STORAGE}/volumeattachments`, { metadata: { name: 'bad' }, spec: { attacher: '', source: {} } }, ['spec.attacher', 'spec.source', 'spec.nodeName']],
    ];
    for (const [path, body, fields] of cases) {
      const res = await api('POST', path, body);
      assert.equal(res.status, 422, `${path}: ${res.text}`);
      assert.deepEqual(causes(res.body), fields, res.text);
    }
    const pv = (await api('GET', '/api/v1/persistentvolumes/local-1')).body;
    const moved = await api('PUT', '/api/v1/persistentvolumes/local-1', { ...pv, spec: { ...(pv.spec as Obj), local: { path: '/elsewhere' } } });
    assert.equal(moved.status, 422);
    assert.match(String(moved.body.message), /spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation/);
  });

  void it('accepts pods with claim, csi, ephemeral and flexVolume volumes, and refuses bad ones naming the fields', async () => {
    const file = join(dir, 'pod.json');
    const pod = (name: string, volumes: Obj[]): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes } });
    await writeFile(file, JSON.stringify(pod('storage-pod', [
      { name: 'claim', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'inline', csi: { driver: 'hostpath.csi.orch.io', volumeAttributes: { size: '64Mi' } } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Gi' } } } } } },
      { name: 'flex', flexVolume: { driver: 'example~lvm', options: { size: '1G' } } },
    ])));
    const env = envs.get('1.27');
    assert.ok(env !== undefined);
    assert.match((await kubectl(env, ['create', '-f', file])).stdout, /pod\/storage-pod created/);
    const bad = await api('POST', '/api/v1/namespaces/default/pods', pod('bad-pod', [
      { name: 'a', csi: { driver: 'Bad Driver' } },
      { name: 'b', flexVolume: { driver: '' } },
      { name: 'c', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } },
    ]));
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(causes(bad.body), ['spec.volumes[0].csi.driver', 'spec.volumes[1].flexVolume.driver', 'spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources[storage]']);
    const unknown = await api('POST', '/api/v1/namespaces/default/pods', pod('unknown-field', [{ name: 'a', csi: { driver: 'd.csi', sizeGb: 3 } }]));
    assert.equal(unknown.status, 400);
    assert.match(String(unknown.body.message), /unknown field "spec.volumes\[0\].csi.sizeGb"/);
  });
});
