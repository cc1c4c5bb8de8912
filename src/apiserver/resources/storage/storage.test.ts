import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceDefinition, StrategyContext, WireObject } from '../../registry/index.js';
import { FieldErrors } from '../../status/index.js';
import { csiDriverDefinition, csiNodeDefinition, defaultStorageClass, storageClassDefinition, volumeAttachmentDefinition } from './index.js';

const ctx: StrategyContext = { user: { name: 'u', uid: '', groups: [] }, now: new Date('2024-05-01T12:00:00Z') };
const causes = (run: (errors: FieldErrors) => void): string[] => {
  const errors = new FieldErrors();
  run(errors);
  return errors.list.map((e) => `${e.field}: ${e.message}`);
};
const create = (def: ResourceDefinition, o: WireObject): string[] => {
  def.strategy.prepareForCreate?.(o, ctx);
  return causes((e) => { def.strategy.validateCreate(o, e, ctx); });
};
const update = (def: ResourceDefinition, o: WireObject, old: WireObject): string[] => {
  def.strategy.prepareForUpdate?.(o, old, ctx);
  return causes((e) => { def.strategy.validateUpdate(o, old, e, ctx); });
};

void describe('StorageClass', () => {
  void it('defaults the policies, validates the provisioner, parameters and topologies, and freezes them', () => {
    const sc: WireObject = { metadata: { name: 'local' }, provisioner: 'orch.io/no-provisioner' };
    assert.deepEqual(create(storageClassDefinition, sc), []);
    assert.equal(sc.reclaimPolicy, 'Delete');
    assert.equal(sc.volumeBindingMode, 'Immediate');
    const bad = create(storageClassDefinition, {
      metadata: { name: 'bad' }, provisioner: '', reclaimPolicy: 'Recycle', volumeBindingMode: 'Later',
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: [] }, { key: 'zone', values: ['a'] }] }],
    });
    assert.deepEqual(bad, [
      'provisioner: Required value',
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
      'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
      'allowedTopologies[0].matchLabelExpressions[0].values: Required value',
      'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"',
    ]);
    const changed = { ...structuredClone(sc), provisioner: 'csi.example.com', parameters: { a: 'b' }, volumeBindingMode: 'WaitForFirstConsumer' };
    assert.deepEqual(update(storageClassDefinition, changed, sc), [
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]);
  });

  void it('marks the default class in its name column and picks the newest default', () => {
    const at = (name: string, created: string, isDefault: boolean): WireObject => ({
      metadata: { name, creationTimestamp: created, ...(isDefault ? { annotations: { 'storageclass.orch.io/is-default-class': 'true' } } : {}) }, provisioner: 'p',
    });
    const classes = [at('old', '2024-01-01T00:00:00Z', true), at('new', '2024-02-01T00:00:00Z', true), at('plain', '2024-03-01T00:00:00Z', false)];
    assert.equal((defaultStorageClass(classes)?.metadata as { name: string }).name, 'new');
    assert.equal(defaultStorageClass([classes[2]!]), undefined);
    assert.equal(storageClassDefinition.columns[0]?.cell(classes[0]!, ctx.now), 'old (default)');
    assert.equal(storageClassDefinition.columns[0].cell(classes[2]!, ctx.now), 'plain');
  });
});

void describe('CSIDriver and CSINode', () => {
  void it('defaults a driver as upstream and keeps its attach and lifecycle settings', () => {
    const d: WireObject = { metadata: { name: 'hostpath.csi.orch.io' }, spec: {} };
    assert.deepEqual(create(csiDriverDefinition, d), []);
    assert.deepEqual(d.spec, {
      attachRequired: true, podInfoOnMount: false, storageCapacity: false, requiresRepublish: false, seLinuxMount: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType', volumeLifecycleModes: ['Persistent'],
    });
    assert.deepEqual(csiDriverDefinition.columns.map((c) => c.cell(d, ctx.now)).slice(0, 6), [true, false, false, '<unset>', false, 'Persistent']);
    const bad = create(csiDriverDefinition, {
      metadata: { name: 'x'.repeat(70) },
      spec: { fsGroupPolicy: 'Always', volumeLifecycleModes: ['Forever'], tokenRequests: [{ audience: 'a', expirationSeconds: 60 }, { audience: 'a' }] },
    });
    assert.deepEqual(bad, [
      'metadata.name: Invalid value: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": must be no more than 63 characters',
      'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"',
      'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"',
      'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
      'spec.tokenRequests[1].audience: Duplicate value: "a"',
    ]);
    const flipped = structuredClone(d);
    (flipped.spec as WireObject).attachRequired = false;
    (flipped.spec as WireObject).requiresRepublish = true;
    assert.deepEqual(update(csiDriverDefinition, flipped, d), ['spec.attachRequired: Invalid value: false: field is immutable']);
  });

  void it('validates a node\'s drivers and keeps each entry once registered', () => {
    const n: WireObject = { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'hostpath.csi.orch.io', nodeID: 'n1', topologyKeys: ['topology.hostpath/node'], allocatable: { count: 10 } }] } };
    assert.deepEqual(create(csiNodeDefinition, n), []);
    assert.equal(csiNodeDefinition.columns[0]?.cell(n, ctx.now), 1);
    const bad = create(csiNodeDefinition, { metadata: { name: 'n2' }, spec: { drivers: [{ name: 'd', nodeID: '', allocatable: { count: -1 } }, { name: 'd', nodeID: 'x'.repeat(200), topologyKeys: ['a', 'a'] }] } });
    assert.deepEqual(bad.map((p) => p.split(':')[0]), [
      'spec.drivers[0].nodeID', 'spec.drivers[0].allocatable.count', 'spec.drivers[1].nodeID', 'spec.drivers[1].name', 'spec.drivers[1].topologyKeys[1]',
    ]);
    const changed = structuredClone(n);
    ((changed.spec as { drivers: WireObject[] }).drivers[0]!).nodeID = 'other';
    assert.deepEqual(update(csiNodeDefinition, changed, n).map((p) => p.split(':')[0]), ['spec.drivers[0]']);
  });
});

void describe('VolumeAttachment', () => {
  const va = (): WireObject => ({ metadata: { name: 'csi-abc' }, spec: { attacher: 'hostpath.csi.orch.io', source: { persistentVolumeName: 'pv1' }, nodeName: 'n1' }, status: { attached: true } });
  void it('resets the status on create (attached false), validates the spec and freezes it', () => {
    const ok = va();
    assert.deepEqual(create(volumeAttachmentDefinition, ok), []);
    assert.deepEqual(ok.status, { attached: false });
    const bad = create(volumeAttachmentDefinition, { metadata: { name: 'x' }, spec: { attacher: '', source: { persistentVolumeName: 'pv1', inlineVolumeSpec: {} } } });
    assert.deepEqual(bad, [
      'spec.attacher: Required value',
      'spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
      'spec.nodeName: Required value',
    ]);
    const moved = structuredClone(ok);
    (moved.spec as WireObject).nodeName = 'n2';
    assert.equal(update(volumeAttachmentDefinition, moved, ok).length, 1);
    const attached = { ...structuredClone(ok), status: { attached: true, attachmentMetadata: { devicePath: '/dev/x' } } };
    assert.deepEqual(update(volumeAttachmentDefinition, attached, ok), []);
    assert.deepEqual(volumeAttachmentDefinition.columns.slice(0, 4).map((c) => c.cell(attached, ctx.now)), ['hostpath.csi.orch.io', 'pv1', 'n1', true]);
  });
});
