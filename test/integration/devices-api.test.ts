/**
 * Devices in API-server mode: orch-apiserver (SQLite, its scheduler running) and the real
 * nodeagent binary on a real containerd, with the sample device plugin registering through the
 * plugin watcher (a Registration socket under `<root-dir>/plugins_registry/`):
 *
 * - the Node's capacity and allocatable of example.com/dev follow the plugin's devices and their
 *   health within a second or two of a change (not the 10 s status period), and the plugin going
 *   away (allocatable 0) and coming back;
 * - an extended resource an administrator PATCHed onto the Node's status stays there;
 * - the scheduler counts example.com/dev in its fit filter: a pod asking for more than is left
 *   waits (Insufficient example.com/dev) and is bound once a device turns healthy; `kubectl
 *   describe node` shows the resource and what is allocated.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { startDevicePlugin, type DevicePluginProcess } from '../helpers/device-plugin.js';
import { NODE } from '../helpers/pods.js';
import { removeTempDir } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

const RESOURCE = 'example.com/dev';
let dir: string;
let containerd: ContainerdInstance;
let server: ApiServer;
let agent: AgentProcess;
let plugin: DevicePluginProcess;

const getJson = async <T>(path: string): Promise<T | undefined> => {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? (res.body as T) : undefined;
};
const node = (): Promise<Node | undefined> => getJson<Node>(`/api/v1/nodes/${NODE}`);
const devices = async (): Promise<[string | undefined, string | undefined]> => {
  const n = await node();
  return [n?.status?.capacity?.[RESOURCE], n?.status?.allocatable?.[RESOURCE]];
};

async function waitForDevices(capacity: string, allocatable: string, timeoutMs = 5_000): Promise<number> {
  const started = Date.now();
  await waitFor(`the Node's ${RESOURCE} at ${capacity}/${allocatable}`, async () => {
    const [c, a] = await devices();
    return c === capacity && a === allocatable;
  }, { timeoutMs, intervalMs: 50 });
  return Date.now() - started;
}

async function createPod(name: string, count: number): Promise<void> {
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'busybox:1.35', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], resources: { requests: { [RESOURCE]: String(count) }, limits: { [RESOURCE]: String(count) } } }],
    },
  }));
  await runKubectl(server, ['create', '-f', file]);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'devices-api-'));
  containerd = await startContainerd();
  server = await startApiServer({ storage: 'sqlite', controllers: true });
  const rootDir = join(dir, 'root');
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir,
    args: [`--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`],
  });
  await waitFor('the node registered', async () => (await node()) !== undefined, { timeoutMs: 60_000 });
  plugin = await startDevicePlugin({ resource: RESOURCE, rootDir, viaWatcher: true, devices: [{ id: 'a' }, { id: 'b', healthy: false }] });
});

after(async () => {
  await agent.stop();
  await plugin.kill();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

void describe('devices in API-server mode', () => {
  void it('registers the plugin through the plugin watcher and follows its devices and their health on the Node at once', async () => {
    const status = await plugin.waitFor('registration-status');
    assert.deepEqual([status['registered'], status['error']], [true, '']);
    await waitForDevices('2', '1', 10_000);
    const patched = await server.client.request('PATCH', `/api/v1/nodes/${NODE}/status`, {
      body: { status: { capacity: { 'example.com/dongle': '4' } } }, contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    plugin.setDevices([{ id: 'a' }, { id: 'b' }]);
    const elapsed = await waitForDevices('2', '2');
    assert.ok(elapsed < 3_000, `allocatable followed the health change in ${elapsed} ms`);
    const n = await node();
    assert.deepEqual([n?.status?.capacity?.['example.com/dongle'], n?.status?.allocatable?.['example.com/dongle']], ['4', '4'], "the administrator's resource stays");

    plugin.stopServing();
    await waitForDevices('2', '0');
    const events = plugin.events.length;
    plugin.startServing();
    await plugin.waitFor('registration-status', events);
    await waitForDevices('2', '2');
  });

  void it('schedules pods by their extended resources and shows them in kubectl describe node', async () => {
    plugin.setDevices([{ id: 'a' }, { id: 'b', healthy: false }]);
    await waitForDevices('2', '1');
    await createPod('first', 1);
    await waitFor('the first pod running', async () => (await getJson<Pod>('/api/v1/namespaces/default/pods/first'))?.status?.phase === 'Running', { timeoutMs: 60_000 });
    await createPod('second', 1);
    const reason = await waitFor('the second pod unschedulable', async () => {
      const p = await getJson<Pod>('/api/v1/namespaces/default/pods/second');
      const scheduled = p?.status?.conditions?.find((c) => c.type === 'PodScheduled');
      return scheduled?.status === 'False' ? scheduled.message : undefined;
    }, { timeoutMs: 30_000 });
    assert.match(reason, /0\/1 nodes are available: 1 Insufficient example\.com\/dev\./);
    plugin.setDevices([{ id: 'a' }, { id: 'b' }]);
    await waitFor('the second pod running once a device is healthy', async () => (await getJson<Pod>('/api/v1/namespaces/default/pods/second'))?.status?.phase === 'Running', { timeoutMs: 90_000 });
    const described = (await runKubectl(server, ['describe', 'node', NODE])).stdout;
    assert.match(described, /Capacity:[\s\S]*example\.com\/dev:\s+2[\s\S]*Allocatable:[\s\S]*example\.com\/dev:\s+2/);
    assert.match(described, /Allocated resources:[\s\S]*example\.com\/dev\s+2\s+2/);
  });
});
