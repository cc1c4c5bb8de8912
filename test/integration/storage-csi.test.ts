/**
 * CSI on the node: orch-apiserver (SQLite, its controllers running), the real nodeagent binary
 * on a real containerd, and the sample hostpath CSI driver (examples/csi-hostpath) registering
 * through the plugin watcher:
 *
 * - registration: NodeGetInfo's node ID in the Node's `csi.volume.orch.io/nodeid` annotation,
 *   its topology as Node labels, the driver's entry in the CSINode;
 * - a CSI PersistentVolume on a claim used by two pods: staged once at the global mount,
 *   published per pod at `pods/<uid>/volumes/orch.io~csi/<pv>/mount` with vol_data.json beside
 *   it and the pod's info in the volume context (podInfoOnMount); a file written by one pod read
 *   by the other; unpublished per pod and unstaged after the last one;
 * - a driver whose NodePublishVolume fails: a FailedMount event naming the volume and the
 *   driver's error, no directory left for the volume, retried until the driver heals;
 * - a driver requiring secrets and attaching (no CSIDriver): the volume in the Node's
 *   volumesInUse from the start (the test plays the external attacher), a FailedMount event
 *   naming the missing secret, the PV's stage and publish secrets passed once it exists, the
 *   pod's fsGroup on the volume, NodeExpandVolume and the claim's new capacity after the PV
 *   grows, and the volume out of volumesInUse after the pod.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { csiAttachmentName } from '../../src/api/storage/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { getObject, kubectlCreate, runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { startCsiDriver, type CsiDriverProcess } from '../helpers/csi-driver.js';
import { NODE } from '../helpers/pods.js';
import { podQueries } from '../helpers/storage.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const DRIVER = 'hostpath.csi.example.com';
let dir: string;
let rootDir: string;
let containerd: ContainerdInstance;
let server: ApiServer;
let agent: AgentProcess;
let driver: CsiDriverProcess;

const getJson = <T>(path: string): Promise<T | undefined> => getObject<T>(server, path);
const create = (objects: Obj[]): Promise<void> => kubectlCreate(server, objects);
const csiVolume = (name: string, handle: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', csi: { driver: DRIVER, volumeHandle: handle, volumeAttributes: { size: 'small' } } },
});
const claim = (name: string, volumeName: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName, resources: { requests: { storage: '1Gi' } } },
});
const pod = (name: string, claimName: string, script: string, restartPolicy = 'Never'): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: {
    restartPolicy, terminationGracePeriodSeconds: 0,
    containers: [{ name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
  },
});
const { pod: podOf, waitForPhase, events: podEvents } = podQueries(getJson);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'storage-csi-'));
  rootDir = join(dir, 'root');
  containerd = await startContainerd();
  server = await startApiServer({ storage: 'sqlite', controllers: true });
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir,
    // A pod sync every 10 s: a volume whose PV grew is expanded at its pod's next sync.
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`, '--sync-frequency=10s'],
  });
  await waitFor('the node registered', async () => (await getJson<Node>(`/api/v1/nodes/${NODE}`)) !== undefined, { timeoutMs: 60_000 });
  await create([{ apiVersion: 'storage.orch.io/v1', kind: 'CSIDriver', metadata: { name: DRIVER }, spec: { attachRequired: false, podInfoOnMount: true } }]);
  driver = await startCsiDriver({ name: DRIVER, nodeId: `${NODE}-id`, rootDir, topology: { 'topology.hostpath.csi/node': NODE }, maxVolumesPerNode: 10 });
});

after(async () => {
  await agent.stop();
  await driver.kill();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

void describe('CSI drivers on the node', () => {
  void it('registers the driver: the Node annotation and topology label, and the CSINode entry', async () => {
    const status = await driver.waitFor('registration-status');
    assert.deepEqual([status['registered'], status['error']], [true, '']);
    const node = await waitFor('the Node annotated', async () => {
      const n = await getJson<Node>(`/api/v1/nodes/${NODE}`);
      return n?.metadata?.annotations?.['csi.volume.orch.io/nodeid'] === undefined ? undefined : n;
    });
    assert.deepEqual(JSON.parse(node.metadata?.annotations?.['csi.volume.orch.io/nodeid'] ?? ''), { [DRIVER]: `${NODE}-id` });
    assert.equal(node.metadata?.labels?.['topology.hostpath.csi/node'], NODE);
    const csiNode = await getJson<CSINode>(`/apis/storage.orch.io/v1/csinodes/${NODE}`);
    assert.deepEqual(csiNode?.spec.drivers, [{ name: DRIVER, nodeID: `${NODE}-id`, topologyKeys: ['topology.hostpath.csi/node'], allocatable: { count: 10 } }]);
    assert.equal(csiNode.metadata?.ownerReferences?.[0]?.kind, 'Node', 'owned by the Node');
  });

  void it('stages a volume once, publishes it per pod with vol_data.json, and unpublishes and unstages after the last pod', async () => {
    await create([csiVolume('csi-a', 'vol-a'), claim('csi-a', 'csi-a')]);
    await create([pod('first', 'csi-a', 'echo shared > /data/file && sleep 3600', 'Always')]);
    const first = await waitForPhase('first', 'Running');
    await create([pod('second', 'csi-a', 'test "$(cat /data/file)" = shared')]);
    const second = await waitForPhase('second', 'Succeeded');
    assert.equal(driver.calls('NodeStageVolume').length, 1, 'staged once');
    const publishes = driver.calls('NodePublishVolume');
    assert.equal(publishes.length, 2);
    const uid = first.metadata?.uid ?? '';
    const pvDir = join(rootDir, 'pods', uid, 'volumes', 'orch.io~csi', 'csi-a');
    const request = publishes[0]?.request ?? {};
    assert.equal(request['targetPath'], join(pvDir, 'mount'));
    assert.match(String(request['stagingTargetPath']), new RegExp(`/plugins/orch\\.io/csi/${DRIVER.replace(/\./g, '\\.')}/[0-9a-f]{64}/globalmount$`));
    assert.deepEqual(request['volumeContext'], {
      size: 'small', 'csi.storage.orch.io/pod.name': 'first', 'csi.storage.orch.io/pod.namespace': 'default',
      'csi.storage.orch.io/pod.uid': uid, 'csi.storage.orch.io/serviceAccount.name': 'default', 'csi.storage.orch.io/ephemeral': 'false',
    });
    assert.deepEqual(JSON.parse(await readFile(join(pvDir, 'vol_data.json'), 'utf8')), {
      specVolID: 'csi-a', volumeHandle: 'vol-a', driverName: DRIVER, nodeName: NODE, attachmentID: csiAttachmentName('vol-a', DRIVER, NODE), volumeLifecycleMode: 'Persistent',
    });
    assert.equal(await readFile(join(driver.dataDir, 'vol-a', 'file'), 'utf8'), 'shared\n');

    await runKubectl(server, ['delete', 'pod', 'second', '--wait=true']);
    await waitFor('second unpublished', () => driver.calls('NodeUnpublishVolume').length === 1, { timeoutMs: 60_000 });
    assert.equal(driver.calls('NodeUnstageVolume').length, 0, 'still used by the first pod');
    // The directory goes just after NodeUnpublishVolume returns.
    await waitFor('second\'s volume directory removed', () => !existsSync(join(rootDir, 'pods', second.metadata?.uid ?? '', 'volumes', 'orch.io~csi', 'csi-a')));
    await runKubectl(server, ['delete', 'pod', 'first', '--wait=true']);
    await waitFor('unstaged after the last pod', () => driver.calls('NodeUnstageVolume').length === 1, { timeoutMs: 60_000 });
    assert.equal(driver.calls('NodeUnpublishVolume').length, 2);
    await waitFor('the first pod\'s volume directory removed', () => !existsSync(pvDir));
  });

  void it('reports a driver error on the pod naming the volume, leaves no directory, and retries until the driver heals', async () => {
    await create([csiVolume('csi-b', 'vol-b'), claim('csi-b', 'csi-b')]);
    driver.setFailing(['NodePublishVolume']);
    await create([pod('failing', 'csi-b', 'test -d /data')]);
    const event = await waitFor('a FailedMount event', async () => (await podEvents('failing')).find((e) => e.reason === 'FailedMount'), { timeoutMs: 60_000 });
    assert.match(event.message ?? '', /volume "data": CSI driver hostpath\.csi\.example\.com: NodePublishVolume of vol-b failed: rpc error: code = Internal desc = NodePublishVolume fails on purpose/);
    const uid = (await podOf('failing'))?.metadata?.uid ?? '';
    assert.equal(existsSync(join(rootDir, 'pods', uid, 'volumes', 'orch.io~csi', 'csi-b')), false, 'no half-made volume directory');
    const calls = driver.calls('NodePublishVolume').length;
    await waitFor('a retry', () => driver.calls('NodePublishVolume').length > calls, { timeoutMs: 60_000 });
    driver.setFailing([]);
    await waitForPhase('failing', 'Succeeded', 120_000);
  });

  void it('passes the PV\'s secrets, lists the volume in volumesInUse while it is wanted, applies the fsGroup, and expands it when the PV grows', async () => {
    // A second driver: no CSIDriver (so it attaches, and its volumes are in use), secrets required on each call, EXPAND_VOLUME.
    const SECURE = 'secure.csi.example.com';
    const secure = await startCsiDriver({
      name: SECURE, nodeId: `${NODE}-secure`, rootDir, expand: true,
      requireSecrets: { NodeStageVolume: { password: 's3cret' }, NodePublishVolume: { token: 't0ken' }, NodeExpandVolume: { grow: 'yes' } },
    });
    try {
      await secure.waitFor('registration-status');
      const ref = { namespace: 'default', name: 'csi-creds' };
      await create([
        {
          apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'csi-s' },
          spec: {
            capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '',
            csi: { driver: SECURE, volumeHandle: 'vol-s', fsType: 'ext4', nodeStageSecretRef: ref, nodePublishSecretRef: ref, nodeExpandSecretRef: ref },
          },
        },
        claim('csi-s', 'csi-s'),
      ]);
      const owned = pod('owned', 'csi-s', 'stat -c "%g %a" /data > /data/perm && sleep 3600', 'Always') as { spec: Obj };
      await create([{ ...owned, spec: { ...owned.spec, securityContext: { fsGroup: 1234 } } }]);
      const unique = `orch.io/csi/${SECURE}^vol-s`;
      // Wanted from the start, before it is attached: the attach/detach controller must not detach it.
      await waitFor('the volume in the node\'s volumesInUse', async () => (await getJson<Node>(`/api/v1/nodes/${NODE}`))?.status?.volumesInUse?.includes(unique) === true);
      const attachment = csiAttachmentName('vol-s', SECURE, NODE);
      await waitFor('the VolumeAttachment', async () => (await getJson(`/apis/storage.orch.io/v1/volumeattachments/${attachment}`)) !== undefined);
      await runKubectl(server, ['patch', 'volumeattachment', attachment, '--subresource=status', '--type=merge', '-p', '{"status":{"attached":true}}']);
      const missing = await waitFor('a FailedMount event naming the secret', async () =>
        (await podEvents('owned')).find((e) => e.reason === 'FailedMount' && (e.message ?? '').includes('csi-creds')), { timeoutMs: 60_000 });
      assert.match(missing.message ?? '', /volume "data": fetching nodeStageSecretRef default\/csi-creds failed: secret "csi-creds" not found in namespace "default"/);
      assert.equal(secure.calls('NodeStageVolume').length, 0, 'the driver is not asked without its secret');
      await create([{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'csi-creds' }, stringData: { password: 's3cret', token: 't0ken', grow: 'yes' } }]);
      await waitForPhase('owned', 'Running', 120_000);
      const redacted = { grow: '<redacted>', password: '<redacted>', token: '<redacted>' };
      assert.deepEqual(secure.calls('NodeStageVolume').at(-1)?.request?.['secrets'], redacted);
      assert.deepEqual(secure.calls('NodePublishVolume').at(-1)?.request?.['secrets'], redacted);
      assert.deepEqual(secure.replies('NodePublishVolume').at(-1)?.['ok'], true, 'the driver accepted the secrets');
      // fsGroup (no CSIDriver: ReadWriteOnceWithFSType, and the PV has an fsType and ReadWriteOnce): group 1234, setgid, group rwx.
      const perm = await waitFor('the pod\'s view of /data', async () => (await readFile(join(secure.dataDir, 'vol-s', 'perm'), 'utf8').catch(() => '')).trim() || undefined);
      const [group, mode] = perm.split(' ');
      assert.equal(group, '1234', perm);
      assert.equal(parseInt(mode ?? '0', 8) & 0o2070, 0o2070, perm);

      await runKubectl(server, ['patch', 'pv', 'csi-s', '--type=merge', '-p', '{"spec":{"capacity":{"storage":"2Gi"}}}']);
      await waitFor('the claim\'s capacity 2Gi', async () => (await getJson<PersistentVolumeClaim>('/api/v1/namespaces/default/persistentvolumeclaims/csi-s'))?.status?.capacity?.['storage'] === '2Gi', { timeoutMs: 90_000 });
      assert.equal(await readFile(join(secure.dataDir, 'vol-s.size'), 'utf8'), `${2 * 1024 ** 3}\n`);
      const expand = secure.calls('NodeExpandVolume').at(-1)?.request ?? {};
      assert.deepEqual([expand['volumeId'], expand['volumePath'], expand['secrets']], ['vol-s', join(rootDir, 'pods', (await podOf('owned'))?.metadata?.uid ?? '', 'volumes', 'orch.io~csi', 'csi-s', 'mount'), redacted]);
      await waitFor('FileSystemResizeSuccessful on the claim', async () => (await podEvents('csi-s')).some((e) => e.reason === 'FileSystemResizeSuccessful' && e.involvedObject.kind === 'PersistentVolumeClaim'));

      await runKubectl(server, ['delete', 'pod', 'owned', '--wait=true']);
      await waitFor('unstaged', () => secure.calls('NodeUnstageVolume').length === 1, { timeoutMs: 60_000 });
      await waitFor('the volume gone from volumesInUse', async () => (await getJson<Node>(`/api/v1/nodes/${NODE}`))?.status?.volumesInUse === undefined);
    } finally {
      await secure.kill();
    }
  });
});
