/**
 * Fault suite of the node agent in API-server mode (a real orch-apiserver on SQLite and a
 * real containerd): a kill -9 of the agent with pods running and with pods half-started (no
 * container restarted or duplicated; the restarted agent writes no status of a pod whose state
 * did not change, so the pods' resourceVersions stay); the API server unreachable for
 * FAULT_API_DOWN_SECONDS (default 20 here; 60 is the figure an operator asks about) while API
 * pods and a static pod run (unaffected).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { killHard, reportFault } from '../helpers/faults.js';
import { podManifest, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

const PODS = 8;
const API_DOWN_MS = Number(process.env.FAULT_API_DOWN_SECONDS ?? 20) * 1000;

let cluster: Cluster;
let cri: CriClient;
let manifests: string;
let agent: AgentProcess;

interface PodView { rv: string; phase: string; restarts: number; startTime: string }

async function podsOf(prefix: string): Promise<Map<string, PodView>> {
  const res = await cluster.server.client.request('GET', '/api/v1/namespaces/default/pods');
  const items = (res.body.items ?? []) as { metadata: { name: string; resourceVersion: string }; status?: { phase?: string; startTime?: string; containerStatuses?: { restartCount: number }[] } }[];
  return new Map(items.filter((p) => p.metadata.name.startsWith(prefix)).map((p) => [p.metadata.name, {
    rv: p.metadata.resourceVersion, phase: p.status?.phase ?? '', startTime: p.status?.startTime ?? '',
    restarts: (p.status?.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0),
  }]));
}

async function createPods(prefix: string): Promise<void> {
  for (let i = 0; i < PODS; i++) {
    const body = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: `${prefix}${i}` },
      spec: { nodeName: cluster.node, terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
    };
    const res = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body });
    assert.equal(res.status, 201, res.text);
  }
}

async function allRunning(prefix: string): Promise<boolean> {
  const pods = await podsOf(prefix);
  return pods.size === PODS && [...pods.values()].every((p) => p.phase === 'Running');
}

/** Running containers by id -> `pod attempt`. */
async function runningContainers(): Promise<Map<string, string>> {
  const list = await cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
  return new Map(list.map((c) => [c.id, `${c.labels['io.orch.pod.name'] ?? ''} ${c.metadata?.attempt ?? -1}`]));
}

/** Kills the agent hard and starts it again with the same command line, root dir and drop-ins. */
async function crashAndRestart(): Promise<void> {
  await killHard(agent.process.pid, agent.exited());
  agent = await startAgentProcess({ endpoint: cluster.containerd.endpoint, cgroupRoot: cluster.containerd.cgroupRoot, rootDir: join(cluster.dir, 'root'), args: agent.args });
}

before(async () => {
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  cluster = await startCluster({ agentArgs: [`--pod-manifest-path=${manifests}`, '--file-check-frequency=2s'] });
  agent = cluster.agent;
  cri = connectCri({ runtimeEndpoint: cluster.containerd.endpoint, requestTimeoutMs: 30_000 });
});

after(async () => {
  cri.close();
  // The agent may be a restarted one the cluster does not know.
  if (agent !== cluster.agent) await agent.stop();
  await cluster.stop();
  await rm(manifests, { recursive: true, force: true });
});

void describe('faults of an agent in API-server mode', () => {
  void it('kill -9 with pods running: no container restarted, no status written again', async () => {
    const started = Date.now();
    await createPods('run-');
    await waitFor(`${PODS} API pods Running`, () => allRunning('run-'), { timeoutMs: 120_000 });
    // Once every status is written, the pods stay as they are.
    let before = await podsOf('run-');
    await waitFor('the pods\' statuses to settle', async () => {
      const now = await podsOf('run-');
      const same = [...now].every(([name, p]) => before.get(name)?.rv === p.rv);
      before = now;
      return same;
    }, { timeoutMs: 30_000, intervalMs: 3000 });
    const containers = await runningContainers();
    await crashAndRestart();
    // Over two sync periods (10 s each) of the restarted agent nothing changes in the API server or the runtime.
    const until = Date.now() + 22_000;
    await waitFor('two sync periods of the restarted agent, nothing changed', async () => {
      assert.deepEqual(await podsOf('run-'), before, 'the pods as the API server held them before the crash');
      assert.deepEqual(await runningContainers(), containers, 'the same running containers');
      return Date.now() >= until;
    }, { timeoutMs: 45_000, intervalMs: 1000 });
    reportFault({ suite: 'agent kill -9, API-server mode (running pods)', tried: `kill -9 with ${PODS} API pods running, restart`, checked: PODS + containers.size, failures: 0, ms: Date.now() - started });
  });

  void it('kill -9 with pods half-started: every pod Running once, with one container', async () => {
    const started = Date.now();
    await createPods('half-');
    await waitFor('a first half-started pod', async () => (await cri.listContainers({})).some((c) => (c.labels['io.orch.pod.name'] ?? '').startsWith('half-')), { timeoutMs: 60_000, intervalMs: 20 });
    await crashAndRestart();
    await waitFor(`${PODS} half-started API pods Running`, () => allRunning('half-'), { timeoutMs: 120_000 });
    const running = [...(await runningContainers()).values()].filter((v) => v.startsWith('half-'));
    assert.equal(running.length, PODS, `one running container per pod: ${running.join(', ')}`);
    // A container the killed agent had created but not started is replaced (restartCount 1, as
    // upstream counts it): that is no restart. None that ran is.
    for (const c of await cri.listContainers({})) {
      if (!(c.labels['io.orch.pod.name'] ?? '').startsWith('half-') || c.state === 'CONTAINER_RUNNING') continue;
      const status = await cri.containerStatus({ containerId: c.id });
      assert.equal(status.status?.startedAt ?? '0', '0', `${c.labels['io.orch.pod.name'] ?? ''}: container ${c.id} (${c.state}) had run`);
    }
    reportFault({ suite: 'agent kill -9, API-server mode (half-started pods)', tried: `kill -9 while ${PODS} API pods start, restart`, checked: PODS, failures: 0, ms: Date.now() - started });
  });

  void it(`the API server unreachable for ${API_DOWN_MS / 1000} s: API and static pods keep running`, async () => {
    const started = Date.now();
    await writeManifest(manifests, 'static.yaml', podManifest({ name: 'static', image: cluster.containerd.images.busybox, command: 'exec sleep 3600' }));
    await waitFor('the static pod running', async () => [...(await runningContainers()).values()].some((v) => v.startsWith('static-')), { timeoutMs: 60_000 });
    const containers = await runningContainers();
    const restarts = new Map([...(await podsOf('run-')), ...(await podsOf('half-'))].map(([name, p]) => [name, p.restarts]));
    await cluster.server.pause();
    const until = Date.now() + API_DOWN_MS;
    await waitFor('the API server outage, the containers as they were', async () => {
      assert.deepEqual(await runningContainers(), containers);
      return Date.now() >= until;
    }, { timeoutMs: API_DOWN_MS + 20_000, intervalMs: 1000 });
    await cluster.server.resume();
    await waitFor('the pods Running in the API server', async () => (await allRunning('run-')) && (await allRunning('half-')), { timeoutMs: 60_000 });
    assert.deepEqual(await runningContainers(), containers, 'the same running containers after the outage');
    for (const [name, p] of [...(await podsOf('run-')), ...(await podsOf('half-'))]) assert.equal(p.restarts, restarts.get(name), `${name}: no restart`);
    reportFault({ suite: 'API server unreachable', tried: `orch-apiserver down ${API_DOWN_MS / 1000} s with ${containers.size} containers (API and static pods)`, checked: containers.size, failures: 0, ms: Date.now() - started });
  });
});
