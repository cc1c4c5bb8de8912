/**
 * Server-side apply over the storage objects' schemas: the list and struct types upstream's Go
 * types declare where they differ from the default (a granular claim reference inside otherwise
 * atomic object references, atomic label and node selectors, a set of lifecycle modes, CSINode
 * drivers keyed by name, atomic access modes and topologies).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldManager } from '../../fieldmanager/index.js';
import { persistentVolumeClaimSchema, persistentVolumeSchema } from '../persistentvolumes/index.js';
import type { ObjectSchema } from '../../schema/index.js';
import { StatusError } from '../../status/index.js';
import { csiDriverSchema, csiNodeSchema, storageClassSchema } from './index.js';

type Obj = Record<string, unknown>;
const at = (s: number): Date => new Date(Date.UTC(2024, 4, 1, 10, 0, s));
const managers = (o: Obj): Obj[] => ((o.metadata as Obj).managedFields ?? []) as Obj[];
const fieldsOf = (o: Obj, manager: string): unknown => managers(o).find((e) => e.manager === manager)?.fieldsV1;

function applier(schema: ObjectSchema, apiVersion: string, kind: string): (live: Obj | undefined, config: Obj, manager: string, s: number, force?: boolean) => Obj {
  const fm = new FieldManager({ schema, apiVersion, kind, statusSubresource: true });
  return (live, config, manager, s, force = false) => fm.apply(live, { apiVersion, kind, ...config }, { manager, force, subresource: '', now: at(s), raw: config });
}

void describe('server-side apply of the storage objects', () => {
  void it('PersistentVolume: the claim reference is granular, access modes and node affinity atomic', () => {
    const apply = applier(persistentVolumeSchema, 'v1', 'PersistentVolume');
    const spec = {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } },
    };
    let pv = apply(undefined, { metadata: { name: 'pv' }, spec }, 'admin', 0);
    assert.deepEqual(fieldsOf(pv, 'admin'), {
      'f:spec': { 'f:accessModes': {}, 'f:capacity': { 'f:storage': {} }, 'f:hostPath': { 'f:path': {} }, 'f:nodeAffinity': { 'f:required': {} } },
    });
    // A binder that sets the claim's name and another that sets its uid own one field each.
    pv = apply(pv, { metadata: { name: 'pv' }, spec: { claimRef: { namespace: 'ns', name: 'data' } } }, 'binder', 1);
    pv = apply(pv, { metadata: { name: 'pv' }, spec: { claimRef: { uid: 'u-1' } } }, 'uid-writer', 2);
    assert.deepEqual((pv.spec as Obj).claimRef, { namespace: 'ns', name: 'data', uid: 'u-1' });
    assert.deepEqual(fieldsOf(pv, 'uid-writer'), { 'f:spec': { 'f:claimRef': { 'f:uid': {} } } });
    // Changing the access modes another manager applied is one conflict on the whole list.
    assert.throws(() => apply(pv, { metadata: { name: 'pv' }, spec: { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] } }, 'other', 3), (err: unknown) =>
      err instanceof StatusError && /conflict with "admin": \.spec\.accessModes$/.test(err.message));
  });

  void it('PersistentVolumeClaim: the selector and data source are atomic, status conditions keyed by type', () => {
    const apply = applier(persistentVolumeClaimSchema, 'v1', 'PersistentVolumeClaim');
    const pvc = apply(undefined, {
      metadata: { name: 'data', namespace: 'ns' },
      spec: { accessModes: ['ReadWriteOnce'], selector: { matchLabels: { tier: 'fast' } }, dataSource: { kind: 'PersistentVolumeClaim', name: 'src' }, resources: { requests: { storage: '1Gi' } } },
    }, 'kubectl', 0);
    assert.deepEqual(fieldsOf(pvc, 'kubectl'), {
      'f:spec': { 'f:accessModes': {}, 'f:dataSource': {}, 'f:resources': { 'f:requests': { 'f:storage': {} } }, 'f:selector': {} },
    });
    const fm = new FieldManager({ schema: persistentVolumeClaimSchema, apiVersion: 'v1', kind: 'PersistentVolumeClaim', statusSubresource: true });
    const bound = structuredClone(pvc);
    bound.status = { phase: 'Bound', conditions: [{ type: 'Resizing', status: 'True' }] };
    fm.update(pvc, bound, 'orch-controller-manager', 'status', at(1));
    assert.deepEqual(managers(bound).find((e) => e.subresource === 'status')?.fieldsV1, {
      'f:status': { 'f:conditions': { '.': {}, 'k:{"type":"Resizing"}': { '.': {}, 'f:status': {}, 'f:type': {} } }, 'f:phase': {} },
    });
  });

  void it('StorageClass, CSIDriver, CSINode: atomic topologies, a set of lifecycle modes, drivers keyed by name', () => {
    const sc = applier(storageClassSchema, 'storage.orch.io/v1', 'StorageClass')(undefined, {
      metadata: { name: 'local' }, provisioner: 'orch.io/no-provisioner', parameters: { a: 'b' },
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['a'] }] }],
    }, 'kubectl', 0);
    assert.deepEqual(fieldsOf(sc, 'kubectl'), { 'f:allowedTopologies': {}, 'f:parameters': { 'f:a': {} }, 'f:provisioner': {} });
    const applyDriver = applier(csiDriverSchema, 'storage.orch.io/v1', 'CSIDriver');
    let driver = applyDriver(undefined, { metadata: { name: 'csi.example.com' }, spec: { volumeLifecycleModes: ['Persistent'] } }, 'a', 0);
    driver = applyDriver(driver, { metadata: { name: 'csi.example.com' }, spec: { volumeLifecycleModes: ['Ephemeral'] } }, 'b', 1);
    assert.deepEqual((driver.spec as Obj).volumeLifecycleModes, ['Persistent', 'Ephemeral'], 'a set: both managers\' items kept');
    assert.deepEqual(fieldsOf(driver, 'b'), { 'f:spec': { 'f:volumeLifecycleModes': { 'v:"Ephemeral"': {} } } });
    const applyNode = applier(csiNodeSchema, 'storage.orch.io/v1', 'CSINode');
    let node = applyNode(undefined, { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'one', nodeID: 'n1', topologyKeys: ['zone'] }] } }, 'nodeagent', 0);
    node = applyNode(node, { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'two', nodeID: 'n1' }] } }, 'other', 1);
    assert.deepEqual(((node.spec as Obj).drivers as Obj[]).map((d) => d.name), ['one', 'two']);
    assert.deepEqual(fieldsOf(node, 'nodeagent'), { 'f:spec': { 'f:drivers': { 'k:{"name":"one"}': { '.': {}, 'f:name': {}, 'f:nodeID': {}, 'f:topologyKeys': {} } } } });
  });
});
