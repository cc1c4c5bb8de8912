import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { labelSelectorMatches } from '../label-selector.js';
import { nodeSelectorMatches } from '../node-selector.js';
import {
  accessModesSatisfied, accessModesText, claimClass, csiAttachmentName, csiUniqueVolumeName, ephemeralClaimOwnerProblem, isVolumeBoundToClaim,
  podClaimNames, volumeModeMismatch, volumeNodeAffinityMatches,
} from './index.js';

const claim = (spec: PersistentVolumeClaim['spec'] = {}, meta: PersistentVolumeClaim['metadata'] = {}): PersistentVolumeClaim =>
  ({ metadata: { name: 'data', namespace: 'ns', uid: 'c1', ...meta }, spec });
const volume = (spec: PersistentVolume['spec'] = {}): PersistentVolume => ({ metadata: { name: 'pv' }, spec });

void describe('storage helpers', () => {
  void it('prints access modes in kubectl\'s order and checks them as a subset', () => {
    assert.equal(accessModesText(['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce']), 'RWO,RWX');
    assert.equal(accessModesText(['ReadWriteOncePod']), 'RWOP');
    assert.equal(accessModesSatisfied(claim({ accessModes: ['ReadWriteOnce'] }), volume({ accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] })), true);
    assert.equal(accessModesSatisfied(claim({ accessModes: ['ReadWriteMany'] }), volume({ accessModes: ['ReadWriteOnce'] })), false);
  });

  void it('reads the class from the beta annotation first, and volume modes as Filesystem when absent', () => {
    assert.equal(claimClass(claim({ storageClassName: 'a' }, { annotations: { 'volume.beta.orch.io/storage-class': 'b' } })), 'b');
    assert.equal(claimClass(claim({})), '');
    assert.equal(volumeModeMismatch(claim({}), volume({ volumeMode: 'Filesystem' })), false);
    assert.equal(volumeModeMismatch(claim({ volumeMode: 'Block' }), volume({})), true);
  });

  void it('tells a pre-bound volume (no uid) from one bound to another incarnation of the claim', () => {
    assert.equal(isVolumeBoundToClaim(volume({ claimRef: { namespace: 'ns', name: 'data' } }), claim()), true);
    assert.equal(isVolumeBoundToClaim(volume({ claimRef: { namespace: 'ns', name: 'data', uid: 'c1' } }), claim()), true);
    assert.equal(isVolumeBoundToClaim(volume({ claimRef: { namespace: 'ns', name: 'data', uid: 'old' } }), claim()), false);
    assert.equal(isVolumeBoundToClaim(volume({ claimRef: { namespace: 'other', name: 'data' } }), claim()), false);
  });

  void it('matches node affinity on labels and on the node name', () => {
    const node = { metadata: { name: 'n1', labels: { zone: 'a', cpus: '8' } } };
    const affinity = (terms: unknown[]): PersistentVolume => volume({ nodeAffinity: { required: { nodeSelectorTerms: terms as never } } });
    assert.equal(volumeNodeAffinityMatches(volume(), node), true);
    assert.equal(volumeNodeAffinityMatches(affinity([{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }]), node), true);
    assert.equal(volumeNodeAffinityMatches(affinity([{ matchExpressions: [{ key: 'cpus', operator: 'Gt', values: ['8'] }] }]), node), false);
    assert.equal(nodeSelectorMatches({ nodeSelectorTerms: [{}] }, node), false, 'an empty term matches nothing');
  });

  void it('matches label selectors of claims', () => {
    assert.equal(labelSelectorMatches({}, { a: '1' }), true);
    assert.equal(labelSelectorMatches({ matchLabels: { tier: 'fast' }, matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['b'] }] }, { tier: 'fast', zone: 'a' }), true);
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, { tier: 'fast' }), false);
  });

  void it('names the claims of a pod, and checks that an ephemeral claim is the pod\'s', () => {
    const pod: Pod = {
      metadata: { name: 'web', namespace: 'ns', uid: 'p1' },
      spec: { containers: [], volumes: [{ name: 'a', persistentVolumeClaim: { claimName: 'data' } }, { name: 'scratch', ephemeral: {} }, { name: 'b', persistentVolumeClaim: { claimName: 'data' } }, { name: 'e', emptyDir: {} }] },
    };
    assert.deepEqual(podClaimNames(pod), ['data', 'web-scratch']);
    const owned = claim({}, { name: 'web-scratch', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'p1', controller: true }] });
    assert.equal(ephemeralClaimOwnerProblem(pod, owned), undefined);
    assert.equal(ephemeralClaimOwnerProblem(pod, claim({}, { name: 'web-scratch' })), 'PVC ns/web-scratch was not created for pod ns/web (pod is not owner)');
  });

  void it('names CSI attachments and attached volumes as upstream', () => {
    const expected = `csi-${createHash('sha256').update('vol-1hostpath.csi.orch.ionode-1').digest('hex')}`;
    assert.equal(csiAttachmentName('vol-1', 'hostpath.csi.orch.io', 'node-1'), expected);
    assert.equal(csiAttachmentName('vol-1', 'hostpath.csi.orch.io', 'node-1').length, 68);
    assert.equal(csiUniqueVolumeName('hostpath.csi.orch.io', 'vol-1'), 'orch.io/csi/hostpath.csi.orch.io^vol-1');
  });
});
