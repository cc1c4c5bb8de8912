import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodePod } from '../../api/pod/index.js';
import { createPodManager } from './pod-manager.js';

function pod(uid: string): NodePod {
  return { metadata: { uid, name: `p-${uid}`, namespace: 'ns' }, spec: { containers: [] } };
}

void describe('the pod manager', () => {
  void it('registers each pod set with the registrar and unregisters it when removed', () => {
    const calls: string[] = [];
    const pods = createPodManager({
      registrar: { registerPod: (p) => { calls.push(`register ${p.metadata.uid}`); }, unregisterPod: (uid) => { calls.push(`unregister ${uid}`); } },
    });
    pods.set('a', pod('a'));
    pods.set('a', pod('a'));
    assert.equal(pods.size, 1);
    assert.equal(pods.isDesired('a'), true);
    pods.remove('a');
    assert.equal(pods.isDesired('a'), false);
    assert.deepEqual(calls, ['register a', 'register a', 'unregister a']);
  });

  void it('works without a registrar (standalone mode)', () => {
    const pods = createPodManager();
    pods.set('b', pod('b'));
    assert.deepEqual(pods.pods().map((p) => p.metadata.uid), ['b']);
    pods.remove('b');
    pods.remove('b');
    assert.equal(pods.size, 0);
  });
});
