import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { epochNanos, nodeReference, podReference, truncateBytes } from './event-object.js';

void describe('event objects', () => {
  void it('counts nanoseconds exactly to the microsecond', () => {
    assert.equal(epochNanos(1_700_000_000_123.456), 1_700_000_000_123_456_000n);
  });

  void it('references a pod and its containers as upstream\'s kubelet', () => {
    const pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u' } };
    assert.deepEqual(podReference(pod), { kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'ns', uid: 'u' });
    assert.equal(podReference(pod, { name: 'app' }).fieldPath, 'spec.containers{app}');
    assert.equal(podReference(pod, { name: 'init', list: 'initContainers' }).fieldPath, 'spec.initContainers{init}');
    assert.deepEqual(nodeReference('n1'), { kind: 'Node', name: 'n1', uid: 'n1' });
  });

  void it('cuts text on character boundaries', () => {
    assert.equal(truncateBytes('aé', 2), 'a');
    assert.equal(truncateBytes('abc', 3), 'abc');
  });
});
