/**
 * API-server mode with the API server on etcd (agent-apiserver.test.ts covers the rest on
 * SQLite): a real containerd, etcd, orch-apiserver and the nodeagent binary with an
 * administrator's orchconfig. The node registers Ready with a lease; a pod created with
 * kubectl runs, shows Running through kubectl, and is deleted gracefully.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';
import { removeTempDir } from '../helpers/tempdir.js';

const NODE = 'etcdnode';
let containerd: ContainerdInstance;
let cri: CriClient;
let server: ApiServer;
let agent: AgentProcess | undefined;
let dir: string;

const kubectl = async (...args: string[]): Promise<string> => (await runKubectl(server, args)).stdout;
const getJson = async <T>(path: string): Promise<T | undefined> => {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? (res.body as T) : undefined;
};
const running = async (name: string): Promise<boolean> =>
  (await cri.listContainers({ labelSelector: { 'io.orch.pod.name': name } })).some((c) => c.state === 'CONTAINER_RUNNING');

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-apiserver-etcd-'));
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  server = await startApiServer({ storage: 'etcd' });
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir: join(dir, 'root'),
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`],
  });
});

after(async () => {
  await agent?.stop();
  cri.close();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

void describe('the agent with the API server on etcd', () => {
  void it('registers Ready with a lease, runs a pod created with kubectl and deletes it gracefully', async () => {
    await waitFor('the node Ready', async () => {
      const n = await getJson<Node>(`/api/v1/nodes/${NODE}`);
      return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    }, { timeoutMs: 60_000 });
    await waitFor('the lease', async () => (await getJson<unknown>(`/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/${NODE}`)) !== undefined, { timeoutMs: 30_000 });
    const file = join(dir, 'pod.json');
    await writeFile(file, JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'etcd-web', namespace: 'default' },
      spec: {
        nodeName: NODE, terminationGracePeriodSeconds: 5,
        containers: [{ name: 'main', image: containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'] }],
      },
    }));
    await kubectl('create', '-f', file);
    await waitFor('the pod Running', async () => (await getJson<Pod>('/api/v1/namespaces/default/pods/etcd-web'))?.status?.phase === 'Running', { timeoutMs: 60_000 });
    assert.match(await kubectl('get', 'pod', 'etcd-web'), /etcd-web\s+1\/1\s+Running/);
    assert.ok(await running('etcd-web'));
    await kubectl('delete', 'pod', 'etcd-web', '--wait=false');
    await waitFor('the pod gone from the API server', async () => (await getJson<Pod>('/api/v1/namespaces/default/pods/etcd-web')) === undefined, { timeoutMs: 30_000 });
    assert.equal(await running('etcd-web'), false);
  });
});
