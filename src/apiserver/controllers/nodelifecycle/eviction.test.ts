import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeEventRecorder, FakeResourceClient } from '../client/testing.js';
import { evictionDelayMs, minTolerationMs, TaintEvictionController } from './index.js';

const UNREACHABLE = { key: 'node.orch.io/unreachable', effect: 'NoExecute' };

function pod(name: string, tolerations?: WireObject[]): WireObject {
  return { metadata: { name, namespace: 'default' }, spec: { nodeName: 'n1', ...(tolerations === undefined ? {} : { tolerations }) }, status: { phase: 'Running' } };
}

async function harness(): Promise<{ clock: FakeClock; nodes: FakeResourceClient; pods: FakeResourceClient; recorder: FakeEventRecorder; controller: TaintEvictionController; deleted: () => string[] }> {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const nodes = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock, statusSubresource: true });
  // Graceful deletion as the pod strategy does it: the pod stays, marked, for 30 s.
  const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true, gracePeriod: (_p, requested) => requested ?? 30 });
  const nodeInformer = new Informer({ client: nodes, clock, log, what: 'nodes' });
  const podInformer = new Informer({ client: pods, clock, log, what: 'pods' });
  const recorder = new FakeEventRecorder();
  const controller = new TaintEvictionController({ nodes: nodeInformer, pods: podInformer, podsClient: pods, recorder, clock, log });
  await nodes.create('', { metadata: { name: 'n1' }, spec: {} });
  await nodeInformer.start();
  await podInformer.start();
  controller.start();
  const deleted = (): string[] => pods.calls.filter((c) => c.op === 'delete').map((c) => c.name);
  return { clock, nodes, pods, recorder, controller, deleted };
}

async function taint(nodes: FakeResourceClient, taints: WireObject[]): Promise<void> {
  const node = nodes.peek('', 'n1') as WireObject;
  await nodes.update('', 'n1', { ...node, spec: { taints } });
}

void describe('taint-based eviction', () => {
  void it('computes the delay as upstream: at once when untolerated, the shortest tolerationSeconds, never for a toleration without seconds', () => {
    const taints = [{ key: 'node.orch.io/unreachable', effect: 'NoExecute' as const }];
    assert.equal(evictionDelayMs(pod('a'), taints), 0);
    assert.equal(evictionDelayMs(pod('b', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]), taints), 5_000);
    assert.equal(evictionDelayMs(pod('c', [{ operator: 'Exists' }]), taints), -1);
    assert.equal(evictionDelayMs(pod('d'), []), -1);
    assert.equal(minTolerationMs([{ tolerationSeconds: 30 }, { tolerationSeconds: 10 }]), 10_000);
    assert.equal(minTolerationMs([{ tolerationSeconds: -1 }]), 0);
  });

  void it('deletes untolerating pods at once, tolerating ones after their tolerationSeconds, and never those that tolerate forever', async () => {
    const h = await harness();
    await h.pods.create('default', pod('bare'));
    await h.pods.create('default', pod('five', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]));
    await h.pods.create('default', pod('forever', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute' }]));
    await h.clock.advance(0);
    await taint(h.nodes, [UNREACHABLE]);
    await h.clock.advance(0);
    assert.deepEqual(h.deleted(), ['bare']);
    await h.clock.advance(4_999);
    assert.deepEqual(h.deleted(), ['bare']);
    await h.clock.advance(1);
    assert.deepEqual(h.deleted(), ['bare', 'five']);
    await h.clock.advance(600_000);
    assert.deepEqual(h.deleted(), ['bare', 'five']);
    const five = h.pods.peek('default', 'five') as { metadata: WireObject; status: { conditions: WireObject[] } };
    assert.equal(typeof five.metadata.deletionTimestamp, 'string', 'a graceful delete');
    assert.deepEqual(five.status.conditions.map((c) => [c.type, c.status, c.reason]), [['DisruptionTarget', 'True', 'DeletionByTaintManager']]);
    assert.deepEqual(h.recorder.events.map((e) => e.note), ['Marking for deletion Pod default/bare', 'Marking for deletion Pod default/five']);
    assert.ok(h.pods.calls.filter((c) => c.op === 'delete').every((c) => typeof c.options?.uid === 'string'));
    await h.controller.close();
  });

  void it('cancels the eviction when the taint goes before the time is up', async () => {
    const h = await harness();
    await h.pods.create('default', pod('five', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]));
    await taint(h.nodes, [UNREACHABLE]);
    await h.clock.advance(3_000);
    await taint(h.nodes, []);
    await h.clock.advance(10_000);
    assert.deepEqual(h.deleted(), []);
    assert.deepEqual(h.recorder.events.map((e) => e.note), ['Cancelling deletion of Pod default/five']);
    await h.controller.close();
  });

  void it('ignores NoSchedule taints', async () => {
    const h = await harness();
    await h.pods.create('default', pod('bare'));
    await taint(h.nodes, [{ key: 'node.orch.io/unreachable', effect: 'NoSchedule' }]);
    await h.clock.advance(10_000);
    assert.deepEqual(h.deleted(), []);
    await h.controller.close();
  });
});
