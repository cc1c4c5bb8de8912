/**
 * The cluster's control loops end to end: orch-apiserver (SQLite) with its scheduler, node
 * lifecycle, taint eviction and pod GC on short periods (--node-monitor-grace-period=6s,
 * --node-monitor-period=1s), two real node agents each on its own containerd (node-a with most
 * of its CPU reserved, node-b joining later), and simulated nodes whose leases the test renews.
 * Shows: `kubectl run` landing on the node with room; a pod too big for every node explained
 * node by node (FailedScheduling, PodScheduled False) and running once node-b joins; node
 * selector, affinity and taints steering pods; node-b's agent stopped → its node Unknown and
 * tainted unreachable after the grace period, its pods not Ready, a pod tolerating that for 5 s
 * deleted 5 s later and removed; the agent back → the taints gone; a deleted Node → its pods gone.
 */
import assert from 'node:assert/strict';
import { cpus, tmpdir } from 'node:os';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { simulateNode, type SimulatedNode } from '../helpers/nodes.js';
import { waitFor } from '../helpers/wait.js';
import { removeTempDir } from '../helpers/tempdir.js';

const GRACE_MS = 6_000;
let dir: string;
let server: ApiServer;
const containerds: ContainerdInstance[] = [];
const agents = new Map<string, AgentProcess>();
const simulated: SimulatedNode[] = [];

const kubectl = async (...args: string[]): Promise<string> => (await runKubectl(server, args)).stdout;
const getJson = async <T>(path: string): Promise<T | undefined> => {
  const res = await server.client.request('GET', path);
  return res.status === 200 ? (res.body as T) : undefined;
};
const pod = (name: string): Promise<Pod | undefined> => getJson<Pod>(`/api/v1/namespaces/default/pods/${name}`);
const node = (name: string): Promise<Node | undefined> => getJson<Node>(`/api/v1/nodes/${name}`);
const ready = (n: Node | undefined): string | undefined => n?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const managedTaints = (n: Node | undefined): string[] => (n?.spec?.taints ?? []).filter((t) => t.key.startsWith('node.orch.io/')).map((t) => `${t.key}:${t.effect}`);

async function createPod(name: string, spec: Record<string, unknown>, image = 'busybox:1.35'): Promise<void> {
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command: ['sleep', '3600'] }], ...spec },
  }));
  await kubectl('create', '-f', file);
}

/** Starts (or restarts, on the same containerd and root dir) the agent of `name`. */
async function startAgent(name: string, containerd: ContainerdInstance, args: readonly string[] = []): Promise<void> {
  const config = join(dir, `${name}.yaml`);
  // The lease is renewed every second (a quarter of 4 s): well inside the server's 6 s grace.
  await writeFile(config, 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\nnodeLeaseDurationSeconds: 4\n');
  agents.set(name, await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir: join(dir, `root-${name}`),
    args: [
      `--config=${config}`, `--hostname-override=${name}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`,
      `--orchconfig=${server.adminKubeconfig}`, '--node-status-update-frequency=2s', ...args,
    ],
  }));
  await waitFor(`node ${name} Ready`, async () => ready(await node(name)) === 'True', { timeoutMs: 60_000 });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'controllers-cluster-'));
  containerds.push(await startContainerd(), await startContainerd());
  server = await startApiServer({
    storage: 'sqlite', controllers: true,
    args: [`--node-monitor-grace-period=${GRACE_MS / 1000}s`, '--node-monitor-period=1s', '--node-startup-grace-period=30s'],
  });
  // node-a keeps 500m of its CPU allocatable, whatever the machine has.
  await startAgent('node-a', containerds[0]!, [`--system-reserved=cpu=${cpus().length * 1000 - 500}m`]);
  simulated.push(await simulateNode(server.client, 'tiny', { cpu: '100m' }));
});

after(async () => {
  for (const s of simulated) s.stop();
  for (const agent of agents.values()) await agent.stop();
  await server.stop();
  for (const c of containerds) await c.stop();
  await removeTempDir(dir);
});

void describe('the control loops of orch-apiserver with real node agents', () => {
  void it('schedules `kubectl run` onto the node with room, and records Scheduled', async () => {
    const container = { name: 'web', image: 'busybox:1.35', args: ['sleep', '3600'], resources: { requests: { cpu: '200m' } } };
    await kubectl('run', 'web', '--image=busybox:1.35', `--overrides=${JSON.stringify({ apiVersion: 'v1', spec: { terminationGracePeriodSeconds: 1, containers: [container] } })}`);
    const running = await waitFor('web Running', async () => {
      const p = await pod('web');
      return p?.status?.phase === 'Running' ? p : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(running.spec?.nodeName, 'node-a');
    assert.deepEqual(running.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
    assert.match(await kubectl('get', 'events', '--field-selector', 'involvedObject.name=web'), /Scheduled\s+pod\/web\s+Successfully assigned default\/web to node-a/);
  });

  void it('explains a pod too big for every node, node by node, and runs it once a node with room joins', async () => {
    await createPod('big', { containers: [{ name: 'main', image: 'busybox:1.35', command: ['sleep', '3600'], resources: { requests: { cpu: '1' } } }] });
    const message = '0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..';
    const condition = await waitFor('big unschedulable', async () => (await pod('big'))?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'));
    assert.deepEqual([condition.reason, condition.message], ['Unschedulable', message]);
    const described = await kubectl('describe', 'pod', 'big');
    assert.match(described, /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/2 nodes are available: 2 Insufficient cpu\./);
    await startAgent('node-b', containerds[1]!);
    const running = await waitFor('big Running on node-b', async () => {
      const p = await pod('big');
      return p?.status?.phase === 'Running' ? p : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(running.spec?.nodeName, 'node-b');
  });

  void it('steers pods with node selectors, required node affinity and taints', async () => {
    simulated.push(await simulateNode(server.client, 'ssd', { labels: { disk: 'ssd' } }));
    simulated.push(await simulateNode(server.client, 'db', { labels: { team: 'db' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }));
    const required = (key: string, operator: string, values: string[]): Record<string, unknown> => ({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator, values }] }] } } },
    });
    await createPod('on-ssd', { nodeSelector: { disk: 'ssd' } });
    await createPod('on-db', { ...required('team', 'In', ['db']), tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] });
    await createPod('not-db', { nodeSelector: { team: 'db' } });
    const boundTo = async (name: string): Promise<string | undefined> => (await pod(name))?.spec?.nodeName;
    assert.equal(await waitFor('on-ssd bound', () => boundTo('on-ssd')), 'ssd');
    assert.equal(await waitFor('on-db bound', () => boundTo('on-db')), 'db');
    const condition = await waitFor('not-db unschedulable', async () => (await pod('not-db'))?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'));
    assert.equal(condition.message, "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 4 node(s) didn't match Pod's node affinity/selector. "
      + 'preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling..');
    assert.equal(await boundTo('not-db'), undefined);
  });

  void it('marks the node of a stopped agent Unknown and tainted after the grace period, and evicts its pods that tolerate it for 5 s', async () => {
    const toleration = (key: string): Record<string, unknown> => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 });
    await createPod('brief', { nodeSelector: { 'orch.io/hostname': 'node-b' }, tolerations: [toleration('node.orch.io/unreachable'), toleration('node.orch.io/not-ready')] });
    await waitFor('brief Running', async () => (await pod('brief'))?.status?.phase === 'Running', { timeoutMs: 60_000 });
    // The last renewal falls between a second before the stop is asked for (the renewal interval) and the exit.
    const stopping = Date.now();
    await agents.get('node-b')?.stop();
    const stopped = Date.now();
    const unknown = await waitFor('node-b Unknown', async () => {
      const n = await node('node-b');
      return ready(n) === 'Unknown' ? n : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    const [sinceAsked, sinceExit] = [Date.now() - stopping, Date.now() - stopped];
    assert.ok(sinceAsked >= GRACE_MS - 2_000, `Unknown ${sinceAsked} ms after the stop was asked for: before the grace period`);
    assert.ok(sinceExit <= GRACE_MS + 8_000, `Unknown ${sinceExit} ms after the agent exited`);
    const readyCondition = unknown.status?.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual([readyCondition?.reason, readyCondition?.message], ['NodeStatusUnknown', 'Nodeagent stopped posting node status.']);
    const tainted = await waitFor('node-b tainted', async () => {
      const n = await node('node-b');
      return managedTaints(n).length === 2 ? n : undefined;
    }, { intervalMs: 100 });
    assert.deepEqual(managedTaints(tainted), ['node.orch.io/unreachable:NoSchedule', 'node.orch.io/unreachable:NoExecute']);
    const timeAdded = Date.parse((tainted.spec?.taints ?? []).find((t: Taint) => t.effect === 'NoExecute')?.timeAdded ?? '');
    // Its pods are no longer Ready; big tolerates unreachable for the default 300 s and stays.
    await waitFor('big not Ready', async () => (await pod('big'))?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False');
    const marked = await waitFor('brief marked for deletion', async () => {
      const p = await pod('brief');
      return p?.metadata?.deletionTimestamp === undefined ? undefined : p;
    }, { timeoutMs: 20_000, intervalMs: 100 });
    // deletionTimestamp = eviction + the pod's 1 s grace, in whole seconds: at least 5 s after the taint.
    const evictedAfter = Date.parse(marked.metadata?.deletionTimestamp ?? '') - timeAdded;
    assert.ok(evictedAfter >= 5_000 && evictedAfter <= 12_000, `deleted ${evictedAfter} ms after the taint`);
    assert.deepEqual(marked.status?.conditions?.find((c) => c.type === 'DisruptionTarget')?.reason, 'DeletionByTaintManager');
    await waitFor('brief removed (its grace is over on an unreachable node)', async () => (await pod('brief')) === undefined, { timeoutMs: 20_000 });
    assert.ok((await pod('big'))?.metadata?.deletionTimestamp === undefined);
  });

  void it('takes the taints off when the agent is back', async () => {
    await startAgent('node-b', containerds[1]!);
    await waitFor('node-b without taints', async () => managedTaints(await node('node-b')).length === 0, { timeoutMs: 30_000 });
    assert.match(await kubectl('get', 'nodes', 'node-b'), /node-b\s+Ready/);
  });

  void it('removes the pods of a deleted Node', async () => {
    assert.equal((await pod('on-ssd'))?.spec?.nodeName, 'ssd');
    simulated.find((s) => s.name === 'ssd')?.stop();
    await kubectl('delete', 'node', 'ssd');
    await waitFor('on-ssd removed', async () => (await pod('on-ssd')) === undefined, { timeoutMs: 30_000 });
    assert.equal((await pod('on-db'))?.spec?.nodeName, 'db');
  });
});
