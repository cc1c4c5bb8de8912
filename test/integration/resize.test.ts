/**
 * In-place pod resize (InPlacePodVerticalScaling) end to end: a real containerd, orch-apiserver
 * and the nodeagent binary, both with the gate on. A running pod's CPU limit is patched and the
 * container's CFS quota changes without a restart (cgroup v1 here: cpu.cfs_quota_us; cpu.max on
 * v2), with the status's allocatedResources and resources; a memory limit change with
 * resizePolicy RestartContainer restarts the container (restartCount 1) with the new limit; the
 * allocation is in the pod_status_manager_state checkpoint and an agent restart keeps the
 * container (a further resize lands in it); a resize beyond the node is Infeasible and the pod
 * keeps running as it was; one beyond what is free is Deferred, and applied once a pod leaves.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE } from '../helpers/pods.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

const GATE = '--feature-gates=InPlacePodVerticalScaling=true';
const POD_PATH = '/api/v1/namespaces/default/pods/resized';
let containerd: ContainerdInstance;
let cri: CriClient;
let server: ApiServer;
let agent: AgentProcess | undefined;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'resize-'));
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  server = await startApiServer({ storage: 'sqlite', args: [GATE] });
  agent = await startAgent();
});

async function startAgent(): Promise<AgentProcess> {
  return startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir: join(dir, 'root'),
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`, GATE, '--node-status-update-frequency=2s', ...(process.env.RESIZE_DEBUG_LOG === undefined ? [] : ['--v=4'])],
  });
}

after(async () => {
  if (process.env.RESIZE_DEBUG_LOG !== undefined) await writeFile(process.env.RESIZE_DEBUG_LOG, agent?.logs() ?? '');
  await agent?.stop();
  cri.close();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

async function getPod(path = POD_PATH): Promise<Pod | undefined> {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? (res.body) : undefined;
}

async function patch(ops: readonly Record<string, unknown>[], path = POD_PATH): Promise<void> {
  const res = await server.client.request('PATCH', path, { body: ops, contentType: 'application/json-patch+json' });
  assert.equal(res.status, 200, res.text);
}

/** The running container of the pod and a cgroup file read inside it. */
async function cgroupFile(file: string, pod = 'resized'): Promise<{ id: string; value: string } | undefined> {
  const list = await cri.listContainers({ labelSelector: { 'io.orch.pod.name': pod, 'io.orch.container.name': 'main' } });
  const running = list.find((c) => c.state === 'CONTAINER_RUNNING');
  if (running === undefined) return undefined;
  const out = await cri.execSync({ containerId: running.id, cmd: ['cat', file], timeout: 10 });
  return out.exitCode === 0 ? { id: running.id, value: out.stdout.toString('utf8').trim() } : undefined;
}

async function createPod(name: string, resources: Record<string, unknown>): Promise<void> {
  const body = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE, terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'exec sleep 3600'], resources }],
    },
  };
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(body));
  await runKubectl(server, ['create', '-f', file]);
}

void describe('in-place pod resize', () => {
  void it('changes a running container\'s CPU limit in place, restarts it for a RestartContainer memory change, refuses what the node cannot hold', async () => {
    const body = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'resized', namespace: 'default' },
      spec: {
        nodeName: NODE, terminationGracePeriodSeconds: 1,
        containers: [{
          name: 'main', image: containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'exec sleep 3600'],
          resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
        }],
      },
    };
    const file = join(dir, 'pod.json');
    await writeFile(file, JSON.stringify(body));
    await runKubectl(server, ['create', '-f', file]);
    const created = await getPod();
    assert.deepEqual(created?.spec?.containers[0]?.resizePolicy, [
      { resourceName: 'memory', restartPolicy: 'RestartContainer' }, { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    ], 'the API server defaults NotRequired for cpu');
    const before = await waitFor('the container with its CFS quota', async () => {
      const q = await cgroupFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
      return q?.value === '20000' ? q : undefined;
    }, { timeoutMs: 90_000 });

    // CPU limit 200m → 300m: NotRequired, so the same container gets the new quota.
    await patch([{ op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '300m' }]);
    await waitFor('the new CFS quota in the same container', async () => {
      const q = await cgroupFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
      return q?.value === '30000' && q.id === before.id ? q : undefined;
    }, { timeoutMs: 60_000 });
    const cpuDone = await waitFor('the status with the resized resources', async () => {
      const p = await getPod();
      const cs = p?.status?.containerStatuses?.[0];
      return cs?.resources?.limits?.cpu === '300m' && p?.status?.resize === undefined ? p : undefined;
    }, { timeoutMs: 60_000 });
    const cs = cpuDone.status?.containerStatuses?.[0];
    assert.equal(cs?.restartCount, 0);
    assert.deepEqual(cs.allocatedResources, { cpu: '100m', memory: '32Mi' });
    assert.deepEqual(cs.resources, { limits: { cpu: '300m', memory: '64Mi' }, requests: { cpu: '100m', memory: '32Mi' } });
    const uid = cpuDone.metadata?.uid ?? '';
    const state = JSON.parse(await readFile(join(dir, 'root', 'pod_status_manager_state'), 'utf8')) as { allocationEntries: Record<string, Record<string, Record<string, string>>>; checksum: number };
    assert.deepEqual(state.allocationEntries[uid], { main: { cpu: '100m', memory: '32Mi' } });
    assert.equal(typeof state.checksum, 'number');

    // An agent restart keeps the container (its resources changed, but only them) and the
    // allocation: a further CPU resize still lands in the same container.
    await agent?.stop();
    agent = await startAgent();
    await agent.waitForLog('nodeagent running', 60_000);
    await patch([{ op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '250m' }]);
    await waitFor('the CFS quota of the second resize in the same container', async () => {
      const q = await cgroupFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
      return q?.value === '25000' && q.id === before.id ? q : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal((await getPod())?.status?.containerStatuses?.[0]?.restartCount, 0);

    // Memory limit 64Mi → 96Mi with request 32Mi → 48Mi: RestartContainer, so a new container with the new limit.
    await patch([
      { op: 'replace', path: '/spec/containers/0/resources/limits/memory', value: '96Mi' },
      { op: 'replace', path: '/spec/containers/0/resources/requests/memory', value: '48Mi' },
    ]);
    await waitFor('the restarted container with the new memory limit', async () => {
      const m = await cgroupFile('/sys/fs/cgroup/memory/memory.limit_in_bytes');
      return m?.value === String(96 * 1024 * 1024) && m.id !== before.id ? m : undefined;
    }, { timeoutMs: 90_000 });
    const memDone = await waitFor('restartCount 1 and the new allocation', async () => {
      const p = await getPod();
      const s = p?.status?.containerStatuses?.[0];
      return s?.restartCount === 1 && s.allocatedResources?.memory === '48Mi' && s.state?.running !== undefined ? p : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(memDone.status?.containerStatuses?.[0]?.resources?.limits?.memory, '96Mi');

    // More CPU than the node has: Infeasible, and the container keeps its quota.
    await patch([
      { op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '64' },
      { op: 'replace', path: '/spec/containers/0/resources/requests/cpu', value: '64' },
    ]);
    await waitFor('status.resize Infeasible', async () => ((await getPod())?.status?.resize === 'Infeasible' ? true : undefined), { timeoutMs: 60_000 });
    const q = await cgroupFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
    assert.equal(q?.value, '25000', 'an infeasible resize leaves the container as it was');
  });

  void it('defers a resize the node has no room for and applies it once a pod leaves', async () => {
    // 2 CPUs allocatable; `resized` keeps its 100m allocation (its last resize was infeasible).
    await createPod('hog', { requests: { cpu: '1500m' } });
    await createPod('deferred', { requests: { cpu: '100m' }, limits: { cpu: '200m' } });
    await waitFor('both pods running', async () => {
      const [a, b] = await Promise.all([getPod('/api/v1/namespaces/default/pods/hog'), getPod('/api/v1/namespaces/default/pods/deferred')]);
      return a?.status?.phase === 'Running' && b?.status?.phase === 'Running' ? true : undefined;
    }, { timeoutMs: 90_000 });
    const path = '/api/v1/namespaces/default/pods/deferred';
    await patch([
      { op: 'replace', path: '/spec/containers/0/resources/requests/cpu', value: '600m' },
      { op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '700m' },
    ], path);
    await waitFor('status.resize Deferred', async () => ((await getPod(path))?.status?.resize === 'Deferred' ? true : undefined), { timeoutMs: 60_000 });
    assert.equal((await cgroupFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us', 'deferred'))?.value, '20000', 'deferred: still 200m');
    await runKubectl(server, ['delete', 'pod', 'hog', '--wait=false']);
    await waitFor('the deferred resize applied once the hog left', async () => {
      const q = await cgroupFile('/sys/fs/cgroup/cpu/cpu.cfs_quota_us', 'deferred');
      const p = await getPod(path);
      return q?.value === '70000' && p?.status?.resize === undefined && p?.status?.containerStatuses?.[0]?.allocatedResources?.cpu === '600m' ? true : undefined;
    }, { timeoutMs: 90_000 });
  });
});
