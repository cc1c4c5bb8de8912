/**
 * Persistent volumes on the node: orch-apiserver (SQLite, its controllers running) and the real
 * nodeagent binary on a real containerd, through kubectl:
 *
 * - a local PersistentVolume and a claim bound by the PV controller; a pod writes a file into
 *   it and ends; the pod is deleted; a second pod on the same claim reads the file back (and the
 *   file is on the volume's directory on the host);
 * - a pod given to the node (nodeName) whose claim is not bound waits with a FailedMount event naming the volume and the
 *   claim, and runs once a volume is there to bind (the agent retries);
 * - `readOnly` on the pod's volume: a write fails inside the container.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { getObject, kubectlCreate, runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE } from '../helpers/pods.js';
import { podQueries } from '../helpers/storage.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
let dir: string;
let containerd: ContainerdInstance;
let server: ApiServer;
let agent: AgentProcess;
const CLAIMS = '/api/v1/namespaces/default/persistentvolumeclaims';

const getJson = <T>(path: string): Promise<T | undefined> => getObject<T>(server, path);
const create = (objects: Obj[]): Promise<void> => kubectlCreate(server, objects);
const localVolume = (name: string, path: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: {
    capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', local: { path },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'orch.io/hostname', operator: 'In', values: [NODE] }] }] } },
  },
});
const claim = (name: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } },
});
const pod = (name: string, claimName: string, script: string, readOnly = false, nodeName?: string): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: {
    ...(nodeName === undefined ? {} : { nodeName }),
    restartPolicy: 'Never', terminationGracePeriodSeconds: 0,
    containers: [{ name: 'c', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName, ...(readOnly ? { readOnly } : {}) } }],
  },
});
const { pod: podOf, waitForPhase, events: podEvents } = podQueries(getJson);
const podPhase = async (name: string): Promise<string | undefined> => (await podOf(name))?.status?.phase;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'storage-node-'));
  containerd = await startContainerd();
  server = await startApiServer({ storage: 'sqlite', controllers: true });
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir: join(dir, 'root'),
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`],
  });
  await waitFor('the node registered', async () => (await getJson<Node>(`/api/v1/nodes/${NODE}`)) !== undefined, { timeoutMs: 60_000 });
});

after(async () => {
  await agent.stop();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

void describe('persistent volumes on the node', () => {
  void it('keeps a file a pod wrote on a local volume for the next pod on the same claim', async () => {
    const disk = join(dir, 'disk-a');
    await mkdir(disk);
    await create([localVolume('local-a', disk), claim('data-a')]);
    await waitFor('claim data-a Bound', async () => (await getJson<Pod>(`${CLAIMS}/data-a`))?.status?.phase === 'Bound');
    await create([pod('writer', 'data-a', 'echo persisted > /data/file')]);
    await waitForPhase('writer', 'Succeeded');
    assert.equal(await readFile(join(disk, 'file'), 'utf8'), 'persisted\n');
    await runKubectl(server, ['delete', 'pod', 'writer', '--wait=true']);
    await create([pod('reader', 'data-a', 'test "$(cat /data/file)" = persisted')]);
    await waitForPhase('reader', 'Succeeded');
    await create([pod('read-only', 'data-a', 'cat /data/file && ! touch /data/other', true)]);
    await waitForPhase('read-only', 'Succeeded');
    await runKubectl(server, ['delete', 'pod', 'reader', 'read-only', '--wait=true']);
  });

  void it('holds a pod whose claim is not bound with an event naming the volume, and runs it once the claim binds', async () => {
    // Bound to the node by hand: the scheduler would hold a pod whose claim is unbound.
    await create([claim('data-b'), pod('waiting', 'data-b', 'test -d /data && echo ok > /data/file', false, NODE)]);
    const event = await waitFor('a FailedMount event', async () => (await podEvents('waiting')).find((e) => e.reason === 'FailedMount'), { timeoutMs: 60_000 });
    assert.match(event.message ?? '', /volume "data": persistentvolumeclaim default\/data-b is not bound \(phase Pending\)/);
    assert.notEqual(await podPhase('waiting'), 'Running');
    const disk = join(dir, 'disk-b');
    await mkdir(disk);
    await create([localVolume('local-b', disk)]);
    await waitForPhase('waiting', 'Succeeded', 120_000);
    assert.equal(await readFile(join(disk, 'file'), 'utf8'), 'ok\n');
  });
});
