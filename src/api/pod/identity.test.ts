import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { toNodePod } from './identity.js';

const spec = { containers: [{ name: 'c', image: 'busybox' }] };

void describe('toNodePod', () => {
  void it('returns a pod with its identity as it is', () => {
    const pod: Pod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop', labels: { a: 'b' } }, spec };
    const result = toNodePod(pod);
    assert.ok(result.ok);
    assert.equal(result.pod, pod);
  });

  void it('gives a pod without a namespace the default one, in a copy', () => {
    for (const namespace of [undefined, '']) {
      const pod: Pod = { metadata: { uid: 'u1', name: 'web', ...(namespace === undefined ? {} : { namespace }), labels: { a: 'b' } }, spec };
      const result = toNodePod(pod);
      assert.ok(result.ok);
      assert.deepEqual(result.pod.metadata, { uid: 'u1', name: 'web', namespace: 'default', labels: { a: 'b' } });
      assert.equal(pod.metadata?.namespace, namespace, 'the pod given is not changed');
    }
  });

  void it('refuses a pod without a UID or a name', () => {
    assert.deepEqual(toNodePod({ metadata: { name: 'web', namespace: 'shop' }, spec }), { ok: false, problem: 'metadata.uid: is required' });
    assert.deepEqual(toNodePod({ metadata: { uid: '', name: 'web' }, spec }), { ok: false, problem: 'metadata.uid: is required' });
    assert.deepEqual(toNodePod({ metadata: { uid: 'u1', namespace: 'shop' }, spec }), { ok: false, problem: 'metadata.name: is required' });
    assert.deepEqual(toNodePod({ spec }), { ok: false, problem: 'metadata.uid: is required' });
  });
});
