import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import { formatMicroTime, formatTime } from '../../../api/time.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeEventRecorder, FakeResourceClient } from '../client/testing.js';
import { NodeLifecycleController } from './index.js';

interface Harness {
  readonly clock: FakeClock;
  readonly nodes: FakeResourceClient;
  readonly leases: FakeResourceClient;
  readonly pods: FakeResourceClient;
  readonly recorder: FakeEventRecorder;
  readonly controller: NodeLifecycleController;
  /** The agent's heartbeat: renews the lease (and, with `status`, posts Ready with a new heartbeat). */
  beat(name: string, ready?: 'True' | 'False'): Promise<void>;
  conditions(name: string): WireObject[];
  taints(name: string): WireObject[];
}

async function harness(): Promise<Harness> {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const nodes = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock, statusSubresource: true });
  const leases = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
  const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
  const informer = (client: FakeResourceClient, what: string): Informer => new Informer({ client, clock, log, what });
  const [nodeInformer, leaseInformer, podInformer] = [informer(nodes, 'nodes'), informer(leases, 'leases'), informer(pods, 'pods')];
  const recorder = new FakeEventRecorder();
  const controller = new NodeLifecycleController({
    nodes: nodeInformer, leases: leaseInformer, pods: podInformer, nodesClient: nodes, podsClient: pods, recorder, clock, log,
    monitorPeriodMs: 5_000, gracePeriodMs: 40_000, startupGracePeriodMs: 60_000,
  });
  for (const i of [nodeInformer, leaseInformer, podInformer]) await i.start();
  controller.start();
  const beat = async (name: string, ready?: 'True' | 'False'): Promise<void> => {
    await leases.put({ metadata: { name, namespace: 'orch-node-lease' }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(clock.now()) } });
    if (ready === undefined) return;
    const node = nodes.peek('', name);
    const now = formatTime(clock.now());
    const conditions = ['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({ type, status: 'False', lastHeartbeatTime: now, lastTransitionTime: now }));
    conditions.push({ type: 'Ready', status: ready, lastHeartbeatTime: now, lastTransitionTime: now });
    if (node === undefined) await nodes.create('', { metadata: { name }, status: { conditions } });
    else await nodes.update('', name, { ...node, status: { conditions } }, 'status');
  };
  const conditions = (name: string): WireObject[] => ((nodes.peek('', name)?.status ?? {}) as { conditions?: WireObject[] }).conditions ?? [];
  const taints = (name: string): WireObject[] => ((nodes.peek('', name)?.spec ?? {}) as { taints?: WireObject[] }).taints ?? [];
  return { clock, nodes, leases, pods, recorder, controller, beat, conditions, taints };
}

/** Advances in steps of 10 s, renewing the leases of `alive` after each. */
async function run(h: Harness, ms: number, alive: string[]): Promise<void> {
  for (let t = 0; t < ms; t += 10_000) {
    await h.clock.advance(Math.min(10_000, ms - t));
    for (const name of alive) await h.beat(name);
  }
}

void describe('the node lifecycle controller', () => {
  void it('keeps a node whose lease is renewed as it is, and marks it Unknown once its lease stops for the grace period', async () => {
    const h = await harness();
    await h.beat('n1', 'True');
    await h.pods.create('default', { metadata: { name: 'web' }, spec: { nodeName: 'n1' }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
    await run(h, 120_000, ['n1']);
    assert.deepEqual(h.conditions('n1').map((c) => c.status), ['False', 'False', 'False', 'True']);
    assert.deepEqual(h.taints('n1'), []);
    const stoppedAt = h.clock.now();
    await h.clock.advance(40_000);
    assert.equal(h.conditions('n1').find((c) => c.type === 'Ready')?.status, 'True', 'not before the grace period');
    await h.clock.advance(5_000);
    const ready = h.conditions('n1').find((c) => c.type === 'Ready');
    assert.deepEqual({ ...ready }, {
      type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Nodeagent stopped posting node status.',
      lastHeartbeatTime: formatTime(stoppedAt - 120_000), lastTransitionTime: formatTime(stoppedAt + 45_000),
    });
    assert.ok(h.conditions('n1').every((c) => c.status === 'Unknown'));
    assert.deepEqual(h.taints('n1'), [
      { key: 'node.orch.io/unreachable', effect: 'NoSchedule' },
      { key: 'node.orch.io/unreachable', effect: 'NoExecute', timeAdded: formatTime(stoppedAt + 45_000) },
    ]);
    const pod = h.pods.peek('default', 'web') as { status: { conditions: WireObject[] } };
    assert.deepEqual(pod.status.conditions.map((c) => [c.type, c.status]), [['Ready', 'False']]);
    assert.deepEqual(h.recorder.events.map((e) => [e.kind, e.reason, e.note]), [
      ['Node', 'NodeNotReady', 'Node n1 status is now: NodeNotReady'], ['Pod', 'NodeNotReady', 'Node is not ready'],
    ]);
    await h.controller.close();
  });

  void it('takes the taints off when the agent is back, and puts not-ready ones on a node that reports Ready False', async () => {
    const h = await harness();
    await h.beat('n1', 'True');
    await h.clock.advance(50_000);
    assert.equal(h.taints('n1').length, 2);
    await h.beat('n1', 'True');
    await h.clock.advance(0);
    assert.deepEqual(h.taints('n1'), []);
    await h.beat('n1', 'False');
    await h.clock.advance(0);
    assert.deepEqual(h.taints('n1').map((t) => `${String(t.key)}:${String(t.effect)}`), ['node.orch.io/not-ready:NoSchedule', 'node.orch.io/not-ready:NoExecute']);
    await h.controller.close();
  });

  void it('taints a cordoned node and one under memory pressure, and leaves taints it does not own', async () => {
    const h = await harness();
    await h.beat('n1', 'True');
    const node = h.nodes.peek('', 'n1') as WireObject;
    await h.nodes.update('', 'n1', { ...node, spec: { unschedulable: true, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } });
    await h.clock.advance(0);
    assert.deepEqual(h.taints('n1'), [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }, { key: 'node.orch.io/unschedulable', effect: 'NoSchedule' }]);
    const cordoned = h.nodes.peek('', 'n1') as WireObject;
    const status = cordoned.status as { conditions: WireObject[] };
    await h.nodes.update('', 'n1', { ...cordoned, status: { conditions: status.conditions.map((c) => (c.type === 'MemoryPressure' ? { ...c, status: 'True' } : c)) } }, 'status');
    await h.clock.advance(0);
    assert.ok(h.taints('n1').some((t) => t.key === 'node.orch.io/memory-pressure' && t.effect === 'NoSchedule'));
    await h.controller.close();
  });

  void it('gives a node that never posted a Ready condition the startup grace period', async () => {
    const h = await harness();
    await h.nodes.create('', { metadata: { name: 'new' } });
    await h.clock.advance(55_000);
    assert.deepEqual(h.conditions('new'), []);
    await h.clock.advance(10_000);
    const ready = h.conditions('new').find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'NodeStatusNeverUpdated');
    assert.equal(ready.message, 'Nodeagent never posted node status.');
    assert.equal(h.conditions('new').length, 4);
    await h.controller.close();
  });
});
