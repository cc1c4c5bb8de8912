import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import type { WireObject } from '../../registry/index.js';
import { Informer } from '../client/index.js';
import { FakeEventRecorder, FakeResourceClient } from '../client/testing.js';
import { EphemeralVolumeController } from './index.js';

void describe('the ephemeral volume controller', () => {
  void it('makes each ephemeral volume\'s claim owned by its pod, reports a conflicting claim, and removes claims whose pod is gone', async () => {
    const clock = new FakeClock();
    const log = (): void => undefined;
    const pods = new FakeResourceClient({ resource: 'pods', kind: 'Pod', clock, statusSubresource: true });
    const claims = new FakeResourceClient({ resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', clock, statusSubresource: true });
    const pi = new Informer({ client: pods, clock, log, what: 'pods' });
    const ci = new Informer({ client: claims, clock, log, what: 'claims' });
    const recorder = new FakeEventRecorder();
    const controller = new EphemeralVolumeController({ pods: pi, claims: ci, claimsClient: claims, recorder, clock, log });
    await pi.start();
    await ci.start();
    controller.start();
    const template = { metadata: { labels: { app: 'web' }, annotations: { note: 'x' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'local' } };
    await claims.create('default', { metadata: { name: 'web-taken' }, spec: {} });
    await pods.create('default', {
      metadata: { name: 'web' },
      spec: { containers: [], volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: template } }, { name: 'taken', ephemeral: { volumeClaimTemplate: template } }] },
    });
    await clock.advance(0);
    const made = claims.peek('default', 'web-scratch');
    const uid = ((pods.peek('default', 'web')?.metadata as WireObject).uid) as string;
    assert.deepEqual(made?.metadata, {
      name: 'web-scratch', namespace: 'default', uid: (made?.metadata as WireObject).uid, creationTimestamp: (made?.metadata as WireObject).creationTimestamp,
      resourceVersion: (made?.metadata as WireObject).resourceVersion, labels: { app: 'web' }, annotations: { note: 'x' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid, controller: true, blockOwnerDeletion: true }],
    });
    assert.deepEqual(made.spec, template.spec);
    assert.deepEqual(recorder.events.map((e) => [e.kind, e.type, e.reason, e.note]), [
      ['Pod', 'Warning', 'FailedBinding', 'ephemeral volume taken: PVC default/web-taken was not created for pod default/web (pod is not owner)'],
    ]);
    await pods.delete('default', 'web');
    await clock.advance(0);
    assert.equal(claims.peek('default', 'web-scratch'), undefined, 'the claim of a pod that is gone is deleted');
    assert.notEqual(claims.peek('default', 'web-taken'), undefined, 'a claim the pod never owned stays');
    await controller.close();
  });
});
