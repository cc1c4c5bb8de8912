import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeResourceClient } from '../client/testing.js';
import { ClaimProtectionController, VolumeProtectionController } from './index.js';

const finalizers = (o: WireObject | undefined): unknown => (o?.metadata as WireObject | undefined)?.finalizers;
const deletingClaim = (name: string): WireObject => ({ metadata: { name, namespace: 'default', deletionTimestamp: '2024-01-02T03:04:05Z', finalizers: ['orch.io/pvc-protection'] }, spec: {} });
const pod = (name: string, volumes: WireObject[], extra: WireObject = {}): WireObject => ({ metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { nodeName: 'n1', containers: [], volumes, ...extra }, status: { phase: 'Running' } });

void describe('the protection controllers', () => {
  void it('keeps a deleting claim while a scheduled pod uses it, even a finished one, and lets it go once the pod is gone', async () => {
    const clock = new FakeClock();
    const log = (): void => undefined;
    const claims = new FakeResourceClient({ resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', clock, statusSubresource: true });
    const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
    const ci = new Informer({ client: claims, clock, log, what: 'claims' });
    const pi = new Informer({ client: pods, clock, log, what: 'pods' });
    const controller = new ClaimProtectionController({ claims: ci, pods: pi, claimsClient: claims, podsClient: pods, clock, log });
    await ci.start();
    await pi.start();
    controller.start();
    await claims.create('default', { metadata: { name: 'fresh' }, spec: {} });
    await claims.create('default', deletingClaim('used'));
    await claims.create('default', deletingClaim('unscheduled-user'));
    await pods.create('default', { ...pod('web', [{ name: 'd', persistentVolumeClaim: { claimName: 'used' } }]), status: { phase: 'Succeeded' } });
    await pods.create('default', pod('pending', [{ name: 'd', persistentVolumeClaim: { claimName: 'unscheduled-user' } }], { nodeName: '' }));
    await clock.advance(0);
    assert.deepEqual(finalizers(claims.peek('default', 'fresh')), ['orch.io/pvc-protection'], 'a claim that lacks the finalizer gets it');
    assert.deepEqual(finalizers(claims.peek('default', 'used')), ['orch.io/pvc-protection']);
    assert.deepEqual(finalizers(claims.peek('default', 'unscheduled-user')), [], 'a pod bound to no node does not hold the claim');
    await pods.delete('default', 'web');
    await clock.advance(0);
    assert.deepEqual(finalizers(claims.peek('default', 'used')), []);
    await controller.close();
  });

  void it('asks the API when the informer has not seen a pod that uses the claim', async () => {
    const clock = new FakeClock();
    const log = (): void => undefined;
    const claims = new FakeResourceClient({ resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', clock });
    const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock });
    const unseen = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock });
    const ci = new Informer({ client: claims, clock, log, what: 'claims' });
    const controller = new ClaimProtectionController({ claims: ci, pods: new Informer({ client: unseen, clock, log, what: 'pods' }), claimsClient: claims, podsClient: pods, clock, log });
    await pods.create('default', pod('web', [{ name: 'd', ephemeral: {} }]));
    await claims.create('default', { ...deletingClaim('web-d'), metadata: { ...(deletingClaim('web-d').metadata as WireObject), ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web', controller: true }] } });
    await ci.start();
    controller.start();
    await clock.advance(0);
    assert.deepEqual(finalizers(claims.peek('default', 'web-d')), ['orch.io/pvc-protection']);
    await controller.close();
  });

  void it('keeps a deleting volume while it is Bound', async () => {
    const clock = new FakeClock();
    const log = (): void => undefined;
    const volumes = new FakeResourceClient({ resource: 'persistentvolumes', kind: 'PersistentVolume', clock, statusSubresource: true });
    const vi = new Informer({ client: volumes, clock, log, what: 'volumes' });
    const controller = new VolumeProtectionController({ volumes: vi, volumesClient: volumes, clock, log });
    await vi.start();
    controller.start();
    const deletingPv = (name: string, phase: string): WireObject => ({ metadata: { name, deletionTimestamp: '2024-01-02T03:04:05Z', finalizers: ['orch.io/pv-protection'] }, spec: {}, status: { phase } });
    await volumes.create('', deletingPv('bound', 'Bound'));
    await volumes.create('', deletingPv('released', 'Released'));
    await volumes.create('', { metadata: { name: 'new' }, spec: {} });
    await clock.advance(0);
    assert.deepEqual(finalizers(volumes.peek('', 'bound')), ['orch.io/pv-protection']);
    assert.deepEqual(finalizers(volumes.peek('', 'released')), []);
    assert.deepEqual(finalizers(volumes.peek('', 'new')), ['orch.io/pv-protection']);
    await volumes.update('', 'bound', { ...volumes.peek('', 'bound'), status: { phase: 'Released' } }, 'status');
    await clock.advance(0);
    assert.deepEqual(finalizers(volumes.peek('', 'bound')), []);
    await controller.close();
  });
});
