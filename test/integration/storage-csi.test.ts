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
 *   driver's error, no directory left for the volume, retried until the driver heals.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node } from 'kubernetes-types/core/v1.js';
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
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`],
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
});
