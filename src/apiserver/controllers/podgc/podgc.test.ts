import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import { formatTime } from '../../../api/time.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeResourceClient } from '../client/testing.js';
import { PodGarbageCollector } from './index.js';

function harness(threshold = 0): { clock: FakeClock; nodes: FakeResourceClient; pods: FakeResourceClient; gc: PodGarbageCollector; left: () => string[]; start: () => Promise<void> } {
  const clock = new FakeClock();
  const log = (): void => undefined;
  const nodes = new FakeResourceClient({ resource: 'nodes', kind: 'Node', clock, statusSubresource: true });
  const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
  const nodeInformer = new Informer({ client: nodes, clock, log, what: 'nodes' });
  const podInformer = new Informer({ client: pods, clock, log, what: 'pods' });
  const gc = new PodGarbageCollector({ pods: podInformer, nodes: nodeInformer, podsClient: pods, nodesClient: nodes, clock, log, terminatedThreshold: threshold });
  const start = async (): Promise<void> => {
    await nodeInformer.start();
    await podInformer.start();
    gc.start();
    await clock.advance(0);
  };
  const left = (): string[] => pods.all().map((p) => (p.metadata as { name: string }).name).sort();
  return { clock, nodes, pods, gc, left, start };
}

function node(name: string, ready: string, taints: WireObject[] = []): WireObject {
  return { metadata: { name }, spec: { taints }, status: { conditions: [{ type: 'Ready', status: ready }] } };
}

function pod(name: string, nodeName: string, extra: { phase?: string; deletionTimestamp?: string; created?: string } = {}): WireObject {
  return {
    metadata: { name, namespace: 'default', ...(extra.created === undefined ? {} : { creationTimestamp: extra.created }), ...(extra.deletionTimestamp === undefined ? {} : { deletionTimestamp: extra.deletionTimestamp }) },
    spec: { ...(nodeName === '' ? {} : { nodeName }) },
    status: { phase: extra.phase ?? 'Running' },
  };
}

void describe('pod garbage collection', () => {
  void it('removes the pods of a node deleted, marked Failed with DisruptionTarget first', async () => {
    const h = harness();
    await h.nodes.create('', node('n1', 'True'));
    await h.nodes.create('', node('n2', 'True'));
    await h.pods.create('default', pod('on-n1', 'n1'));
    await h.pods.create('default', pod('on-n2', 'n2'));
    await h.start();
    assert.deepEqual(h.left(), ['on-n1', 'on-n2']);
    await h.nodes.delete('', 'n1');
    await h.clock.advance(0);
    assert.deepEqual(h.left(), ['on-n2']);
    const status = h.pods.calls.find((c) => c.op === 'update' && c.name === 'on-n1')?.object?.status as { phase: string; conditions: WireObject[] };
    assert.equal(status.phase, 'Failed');
    assert.deepEqual(status.conditions.map((c) => [c.type, c.reason, c.message]), [['DisruptionTarget', 'DeletionByPodGC', 'PodGC: node no longer exists']]);
    assert.deepEqual(h.pods.calls.filter((c) => c.op === 'delete').map((c) => c.options), [{ gracePeriodSeconds: 0, uid: 'uid-1' }]);
    await h.gc.close();
  });

  void it('force-deletes deleting pods on an unreachable node once their grace period is over, and on an out-of-service node at once', async () => {
    const h = harness();
    const due = formatTime(h.clock.now() + 30_000);
    await h.nodes.create('', node('gone', 'Unknown'));
    await h.nodes.create('', node('fenced', 'False', [{ key: 'node.orch.io/out-of-service', effect: 'NoExecute' }]));
    await h.nodes.create('', node('fine', 'True'));
    await h.pods.create('default', pod('stuck', 'gone', { deletionTimestamp: due }));
    await h.pods.create('default', pod('fenced-pod', 'fenced', { deletionTimestamp: due }));
    await h.pods.create('default', pod('healthy', 'fine', { deletionTimestamp: due }));
    await h.pods.create('default', pod('unbound', '', { deletionTimestamp: due }));
    await h.start();
    assert.deepEqual(h.left(), ['healthy', 'stuck']);
    await h.clock.advance(29_999);
    assert.deepEqual(h.left(), ['healthy', 'stuck']);
    await h.clock.advance(1);
    assert.deepEqual(h.left(), ['healthy'], 'the agent of a reachable node finishes its own pods');
    await h.gc.close();
  });

  void it('keeps the newest terminated pods up to the threshold', async () => {
    const h = harness(2);
    await h.nodes.create('', node('n1', 'True'));
    for (let i = 0; i < 5; i++) await h.pods.create('default', pod(`done-${i}`, 'n1', { phase: i % 2 === 0 ? 'Succeeded' : 'Failed', created: formatTime(Date.UTC(2024, 0, 1, 0, i)) }));
    await h.pods.create('default', pod('running', 'n1', { created: formatTime(Date.UTC(2023, 0, 1)) }));
    await h.start();
    assert.deepEqual(h.left(), ['done-3', 'done-4', 'running']);
    await h.gc.close();
  });

  void it('does not take pods as orphans while the registry still has their node', async () => {
    const h = harness();
    await h.start();
    // The node exists in the registry but the cache has not seen it (its watch broke).
    h.nodes.breakWatches();
    await h.nodes.create('', node('late-node', 'True'));
    await h.pods.create('default', pod('early', 'late-node'));
    h.gc.request();
    await h.clock.advance(0);
    assert.deepEqual(h.left(), ['early']);
    await h.gc.close();
  });
});
