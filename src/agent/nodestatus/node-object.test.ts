import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH, containerRuntimeVersion, initialNode, nodeAddresses, nodeImages, reconcilePatch,
} from './node-object.js';
import { testIdentity as identity } from './fakes.js';


void describe('the Node object', () => {
  void it('has the default labels, --node-labels, taints and the attach/detach annotation', () => {
    const node = initialNode(identity);
    assert.deepEqual(node.metadata?.labels, {
      'orch.io/hostname': 'node-a', 'orch.io/os': 'linux', 'orch.io/arch': 'arm64', 'beta.orch.io/os': 'linux',
      'beta.orch.io/arch': 'arm64', 'node.orch.io/pool': 'blue', team: 'x',
    });
    assert.deepEqual(node.metadata.annotations, { [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' });
    assert.deepEqual(node.spec, {
      taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'only-key', effect: 'NoExecute' }],
    });
  });

  void it('registers unschedulable with the unschedulable taint, and the providerID', () => {
    const node = initialNode({ ...identity, registerSchedulable: false, registerWithTaints: [], providerID: 'aws:///i-1', enableControllerAttachDetach: false });
    assert.deepEqual(node.spec, { taints: [{ key: 'node.orch.io/unschedulable', effect: 'NoSchedule' }], unschedulable: true, providerID: 'aws:///i-1' });
    assert.equal(node.metadata?.annotations, undefined);
  });

  void it('reconciles only the default labels and the annotation of an existing Node', () => {
    const initial = initialNode(identity);
    const existing = {
      metadata: {
        name: 'node-a',
        labels: { 'orch.io/hostname': 'old', 'orch.io/os': 'linux', 'orch.io/arch': 'arm64', 'beta.orch.io/os': 'linux', 'beta.orch.io/arch': 'arm64', custom: 'kept' },
        annotations: { other: 'kept' },
      },
      spec: { taints: [] },
    };
    assert.deepEqual(reconcilePatch(initial, existing), {
      metadata: { labels: { 'orch.io/hostname': 'node-a' }, annotations: { [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' } },
    });
    const without = initialNode({ ...identity, enableControllerAttachDetach: false });
    const annotated = { metadata: { ...initial.metadata, annotations: { [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' } } };
    assert.deepEqual(reconcilePatch(without, annotated), { metadata: { annotations: { [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: null } } });
    assert.equal(reconcilePatch(initial, initial), undefined);
  });

  void it('builds addresses, the runtime version and the image list', () => {
    assert.deepEqual(nodeAddresses(['10.0.0.5', 'fd00::5'], 'node-a'), [
      { type: 'InternalIP', address: '10.0.0.5' }, { type: 'InternalIP', address: 'fd00::5' }, { type: 'Hostname', address: 'node-a' },
    ]);
    assert.equal(containerRuntimeVersion('containerd', 'v1.7.2'), 'containerd://1.7.2');
    assert.equal(containerRuntimeVersion('containerd', '2.0.0'), 'containerd://2.0.0');
    const images = [
      { names: ['a'], sizeBytes: 10 }, { names: ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'], sizeBytes: 30 }, { names: ['c'], sizeBytes: 20 },
    ];
    assert.deepEqual(nodeImages(images, 2), [{ names: ['b1', 'b2', 'b3', 'b4', 'b5'], sizeBytes: 30 }, { names: ['c'], sizeBytes: 20 }]);
    assert.equal(nodeImages(images, -1).length, 3);
    assert.equal(nodeImages(images, 0).length, 0);
  });
});
