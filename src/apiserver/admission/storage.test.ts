import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StrategyContext, WireObject } from '../registry/index.js';
import { persistentVolumeClaimDefinition, persistentVolumeDefinition } from '../resources/persistentvolumes/index.js';
import { admitDefaultStorageClass, withDefaultStorageClass, withInUseProtection } from './index.js';

const ctx: StrategyContext = { user: { name: 'u', uid: '', groups: [] }, now: new Date('2024-05-01T12:00:00Z') };
const sc = (name: string, isDefault: boolean, created = '2024-01-01T00:00:00Z'): WireObject => ({
  metadata: { name, creationTimestamp: created, ...(isDefault ? { annotations: { 'storageclass.orch.io/is-default-class': 'true' } } : {}) }, provisioner: 'p',
});
const claim = (spec: WireObject = {}, annotations?: Record<string, string>): WireObject => ({
  metadata: { name: 'c', ...(annotations === undefined ? {} : { annotations }) }, spec: { accessModes: ['ReadWriteOnce'], ...spec },
});

void describe('storage admission', () => {
  void it('adds the protection finalizers to new claims and volumes, once', () => {
    const pvc = { metadata: { name: 'c', finalizers: ['example.com/keep'] }, spec: {} };
    withInUseProtection(persistentVolumeClaimDefinition).strategy.prepareForCreate?.(pvc, ctx);
    assert.deepEqual(pvc.metadata.finalizers, ['example.com/keep', 'orch.io/pvc-protection']);
    const pv: WireObject = { metadata: { name: 'v', finalizers: ['orch.io/pv-protection'] }, spec: {} };
    withInUseProtection(persistentVolumeDefinition).strategy.prepareForCreate?.(pv, ctx);
    assert.deepEqual((pv.metadata as WireObject).finalizers, ['orch.io/pv-protection']);
    assert.equal((pv.status as WireObject).phase, 'Pending', 'the definition\'s own defaults still run');
  });

  void it('gives a claim naming no class the newest default class, and leaves "" and annotated claims alone', async () => {
    const classes = [sc('old', true, '2024-01-01T00:00:00Z'), sc('new', true, '2024-02-01T00:00:00Z'), sc('plain', false)];
    const options = { storageClasses: () => Promise.resolve(classes) };
    const plain = claim();
    await admitDefaultStorageClass(options, plain);
    assert.equal((plain.spec as WireObject).storageClassName, 'new');
    const none = claim({ storageClassName: '' });
    await admitDefaultStorageClass(options, none);
    assert.equal((none.spec as WireObject).storageClassName, '');
    const annotated = claim({}, { 'volume.beta.orch.io/storage-class': 'plain' });
    await admitDefaultStorageClass(options, annotated);
    assert.equal((annotated.spec as WireObject).storageClassName, undefined);
    const noDefault = claim();
    await admitDefaultStorageClass({ storageClasses: () => Promise.resolve([sc('plain', false)]) }, noDefault);
    assert.equal((noDefault.spec as WireObject).storageClassName, undefined);
    const viaDefinition = claim();
    await withDefaultStorageClass(persistentVolumeClaimDefinition, options).strategy.admit?.(viaDefinition, ctx, 'default');
    assert.equal((viaDefinition.spec as WireObject).storageClassName, 'new');
  });
});
