/**
 * Node registration, node status and the node lease against a real orch-apiserver (SQLite),
 * through the agent's REST client: the Node is created with its labels, taints and status, the
 * status follows the runtime (Ready → NotReady), the Lease in orch-node-lease is created with
 * the Node as owner and renewed, and a restarted agent reconciles the existing Node without
 * re-applying its taints or dropping labels set by others. Runtime facts come from fakes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import { createRestClient, loadOrchconfig, type RestClient } from '../../src/agent/orchclient/index.js';
import {
  createLeaseController, createNodeStatusController, leasePath, nodePath,
  type NodeEvent, type NodeStatusControllerOptions, type WireLease, type WireNode,
} from '../../src/agent/nodestatus/index.js';
import { FakeFacts, testIdentity } from '../../src/agent/nodestatus/fakes.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

let server: ApiServer;
let rest: RestClient;

before(async () => {
  server = await startApiServer({ storage: 'sqlite' });
  rest = createRestClient({ clock: realClock, connection: await loadOrchconfig(server.adminKubeconfig), qps: 0, burst: 0 });
});

after(async () => {
  rest.close();
  await server.stop();
});

function options(facts: FakeFacts, events: NodeEvent[], extra: Partial<NodeStatusControllerOptions> = {}): NodeStatusControllerOptions {
  return {
    client: rest,
    identity: { ...testIdentity, nodeName: 'it-node', hostname: 'it-node' },
    status: {
      nodeIPs: ['127.0.0.1'], port: 10250, agentVersion: 'v0.1.0', maxPods: 110, podsPerCore: 0, maxImages: 50,
      reservation: { systemReserved: { cpu: '100m' }, orchReserved: {}, evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' } },
    },
    facts,
    registerNode: true,
    updateFrequencyMs: 200,
    reportFrequencyMs: 60_000,
    machineInfo: { rootDir: server.dir },
    clock: realClock,
    onEvent: (e) => events.push(e),
    ...extra,
  };
}

async function getNode(): Promise<WireNode> {
  return rest.get<WireNode>(nodePath('it-node'));
}

void describe('node status against orch-apiserver', () => {
  void it('registers the Node with labels, taints and status, and follows the runtime', async () => {
    const facts = new FakeFacts();
    const events: NodeEvent[] = [];
    const controller = createNodeStatusController(options(facts, events));
    await controller.start();
    try {
      const node = await getNode();
      const labels = node.metadata?.labels ?? {};
      assert.equal(labels['orch.io/hostname'], 'it-node');
      assert.equal(labels['orch.io/os'], 'linux');
      assert.equal(labels['node.orch.io/pool'], 'blue');
      assert.deepEqual(node.spec?.taints?.map((t) => t.key), ['dedicated', 'only-key']);
      const status = node.status;
      assert.ok(status !== undefined, 'the Node has a status');
      assert.ok(status.nodeInfo);
      assert.equal(status.nodeInfo.nodeagentVersion, 'v0.1.0');
      assert.equal(status.nodeInfo.kubeletVersion, 'v0.1.0');
      assert.equal(status.nodeInfo.kubeProxyVersion, 'v0.1.0');
      assert.equal(status.nodeInfo.containerRuntimeVersion, 'containerd://1.7.2');
      assert.equal(status.daemonEndpoints?.nodeagentEndpoint?.Port, 10250);
      assert.deepEqual(status.addresses, [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: 'it-node' }]);
      for (const r of ['cpu', 'memory', 'pods', 'ephemeral-storage']) assert.ok(status.capacity?.[r] !== undefined, `capacity.${r}`);
      assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      assert.ok(events.some((e) => e.reason === 'NodeHasSufficientMemory'));

      facts.status = { runtime: { ready: true }, network: { ready: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' } };
      const ready = await waitFor('the Node to turn NotReady', async () => {
        const c = (await getNode()).status?.conditions?.find((x) => x.type === 'Ready');
        return c?.status === 'False' ? c : undefined;
      });
      assert.match(ready.message ?? '', /NetworkReady=false reason:NetworkPluginNotReady/);
      assert.ok(events.some((e) => e.reason === 'NodeNotReady'));
    } finally {
      await controller.stop();
    }
  });

  void it('creates and renews the Lease with the Node as owner', async () => {
    const node = await getNode();
    const lease = createLeaseController({ client: rest, nodeName: 'it-node', leaseDurationSeconds: 40, renewIntervalMs: 200, node: () => node, clock: realClock });
    lease.start();
    try {
      const first = await waitFor('the Lease', () => rest.get<WireLease>(leasePath('it-node')));
      const spec = first.spec ?? {};
      assert.equal(spec.holderIdentity, 'it-node');
      assert.equal(spec.leaseDurationSeconds, 40);
      assert.match(spec.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      assert.deepEqual(first.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'it-node', uid: node.metadata?.uid }]);
      await waitFor('the Lease to be renewed', async () => {
        const now = await rest.get<WireLease>(leasePath('it-node'));
        return now.spec?.renewTime !== first.spec?.renewTime && now.metadata?.resourceVersion !== first.metadata?.resourceVersion;
      });
    } finally {
      await lease.stop();
    }
  });

  void it('a restarted agent reconciles the existing Node and keeps what others set', async () => {
    await rest.patch(nodePath('it-node'), 'merge', { metadata: { labels: { 'orch.io/hostname': 'changed', admin: 'set' } }, spec: { taints: [] } });
    const facts = new FakeFacts();
    const controller = createNodeStatusController(options(facts, []));
    await controller.start();
    try {
      const node = await getNode();
      const labels = node.metadata?.labels ?? {};
      assert.equal(labels['orch.io/hostname'], 'it-node');
      assert.equal(labels.admin, 'set');
      assert.equal(node.spec?.taints, undefined, 'registerWithTaints is not applied again');
      await waitFor('the Node to be Ready again', async () => (await getNode()).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    } finally {
      await controller.stop();
    }
  });
});
