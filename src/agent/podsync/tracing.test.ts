import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodePod } from '../../api/pod/index.js';
import { TraceParents } from '../../api/tracing/index.js';
import { recordingTracing } from '../../api/tracing/testing.js';
import type { PodSyncer } from '../podworkers/index.js';
import { tracedPodSyncer } from './tracing.js';

const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { containers: [] } };

void describe('the traced pod syncer', () => {
  void it('continues the trace the source left for the pod once, then begins its own; the work inside is its child', async () => {
    const t = recordingTracing();
    const tracer = t.tracer('nodeagent/podsync');
    const parents = new TraceParents();
    const inner: PodSyncer = {
      syncPod: () => tracer.inSpan('runtime step', {}, () => Promise.resolve({})),
      syncTerminatingPod: () => Promise.resolve(),
      syncTerminatedPod: () => Promise.resolve(),
    };
    const syncer = tracedPodSyncer({ syncer: inner, tracer, parents });
    parents.set('u1', tracer.point('podUpdate', { parent: 'root' }));
    await syncer.syncPod(pod, 'create');
    await syncer.syncPod(pod, 'sync');
    const [first, second] = t.spans().filter((s) => s.name === 'syncPod');
    const source = t.span('podUpdate');
    assert.equal(first?.parentSpanId, source.spanId);
    assert.equal(first.traceId, source.traceId);
    assert.deepEqual(first.attributes, { 'k8s.pod.uid': 'u1', 'k8s.pod.name': 'web', 'k8s.namespace.name': 'shop', 'k8s.pod.update_type': 'create' });
    assert.equal(second?.parentSpanId, undefined, 'a resync nothing asked for begins a trace');
    const steps = t.spans().filter((s) => s.name === 'runtime step');
    assert.equal(steps[0]?.parentSpanId, first.spanId);

    parents.set('u1', tracer.point('podUpdate', { parent: 'root' }));
    await syncer.syncTerminatingPod(pod, 2);
    await syncer.syncTerminatedPod(pod);
    assert.equal(t.span('syncTerminatingPod').attributes['k8s.pod.termination_grace_period_seconds'], 2);
    assert.equal(parents.take('u1'), undefined);
  });

  void it('marks a failed sync and passes the error on', async () => {
    const t = recordingTracing();
    const failing: PodSyncer = {
      syncPod: () => Promise.reject(new Error('runtime down')),
      syncTerminatingPod: () => Promise.resolve(),
      syncTerminatedPod: () => Promise.resolve(),
    };
    const syncer = tracedPodSyncer({ syncer: failing, tracer: t.tracer(), parents: new TraceParents() });
    await assert.rejects(syncer.syncPod(pod, 'update'), /runtime down/);
    assert.equal(t.span('syncPod').failed, true);
  });
});
