import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StrategyContext, WireObject } from '../../registry/index.js';
import { FieldErrors } from '../../status/index.js';
import { persistentVolumeClaimDefinition as pvcDef, persistentVolumeDefinition as pvDef } from './index.js';

const ctx: StrategyContext = { user: { name: 'u', uid: '', groups: [] }, now: new Date('2024-05-01T12:00:00Z') };
const local = (extra: WireObject = {}): WireObject => ({
  metadata: { name: 'pv1' },
  spec: {
    capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], local: { path: '/mnt/disks/1' },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'orch.io/hostname', operator: 'In', values: ['n1'] }] }] } },
    ...extra,
  },
});
const claim = (spec: WireObject = {}): WireObject => ({ metadata: { name: 'c', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });

function causes(run: (errors: FieldErrors) => void): string[] {
  const errors = new FieldErrors();
  run(errors);
  return errors.list.map((e) => `${e.field}: ${e.message}`);
}
const createProblems = (def: typeof pvDef, o: WireObject): string[] => {
  def.strategy.prepareForCreate?.(o, ctx);
  return causes((e) => { def.strategy.validateCreate(o, e, ctx); });
};

void describe('PersistentVolume', () => {
  void it('defaults the reclaim policy, volume mode and phase, and accepts a local volume with node affinity', () => {
    const pv = local({ persistentVolumeReclaimPolicy: '' });
    assert.deepEqual(createProblems(pvDef, pv), []);
    const spec = pv.spec as WireObject;
    assert.equal(spec.persistentVolumeReclaimPolicy, 'Retain');
    assert.equal(spec.volumeMode, 'Filesystem');
    assert.deepEqual(pv.status, { phase: 'Pending', lastPhaseTransitionTime: '2024-05-01T12:00:00Z' });
  });

  void it('reports every problem at once, each naming its field', () => {
    const bad = { metadata: { name: 'bad' }, spec: { capacity: { storage: '0', cpu: '1' }, accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'Everywhere'], local: { path: '/a/../b' }, persistentVolumeReclaimPolicy: 'Keep', volumeMode: 'Disk', storageClassName: 'Not_A_Name' } };
    const problems = createProblems(pvDef, bad);
    const fields = problems.map((p) => p.split(':')[0]);
    for (const f of ['spec.accessModes', 'spec.capacity', 'spec.capacity[storage]', 'spec.persistentVolumeReclaimPolicy', 'spec.local.path', 'spec.nodeAffinity', 'spec.volumeMode', 'spec.storageClassName']) {
      assert.ok(fields.includes(f), `${f} in ${problems.join('\n')}`);
    }
    assert.ok(problems.includes('spec.nodeAffinity: Required value: Local volume requires node affinity'));
    assert.ok(problems.includes('spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes'));
    assert.deepEqual(createProblems(pvDef, { metadata: { name: 'x' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } }), ['spec: Required value: must specify a volume type']);
    const two = createProblems(pvDef, { metadata: { name: 'x' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' }, csi: { driver: 'd', volumeHandle: 'h' } } });
    assert.deepEqual(two, ['spec.csi: Forbidden: may not specify more than 1 volume type']);
  });

  void it('checks the CSI source and node affinity as upstream', () => {
    const problems = createProblems(pvDef, {
      metadata: { name: 'x' },
      spec: {
        capacity: { storage: '1Gi' }, accessModes: ['ReadWriteMany'], csi: { driver: 'Not Valid', nodePublishSecretRef: { name: 's' } },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Exists', values: ['a'] }, { key: 'k', operator: 'Near' }] }] } },
      },
    });
    assert.ok(problems.some((p) => p.startsWith('spec.csi.driver: Invalid value: "Not Valid"')), problems.join('\n'));
    assert.ok(problems.includes('spec.csi.volumeHandle: Required value'));
    assert.ok(problems.includes('spec.csi.nodePublishSecretRef.namespace: Required value'));
    assert.ok(problems.includes("spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    assert.ok(problems.includes('spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator'));
  });

  void it('keeps the source and volume mode, lets claimRef and the phase change, and stamps phase transitions', () => {
    const old = local();
    pvDef.strategy.prepareForCreate?.(old, ctx);
    const changed = structuredClone(old);
    (changed.spec as WireObject).local = { path: '/elsewhere' };
    (changed.spec as WireObject).claimRef = { namespace: 'default', name: 'c', uid: 'u1' };
    const problems = causes((e) => { pvDef.strategy.validateUpdate(changed, old, e, ctx); });
    assert.deepEqual(problems, ['spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation']);
    const status = { ...structuredClone(old), status: { phase: 'Available' } };
    pvDef.strategy.prepareForUpdate?.(status, old, { ...ctx, subresource: 'status', now: new Date('2024-05-01T13:00:00Z') });
    assert.deepEqual(status.status, { phase: 'Available', lastPhaseTransitionTime: '2024-05-01T13:00:00Z' });
  });

  void it('prints upstream\'s columns: capacity, modes, policy, status, claim, class', () => {
    const pv = local({ claimRef: { namespace: 'ns', name: 'data' }, storageClassName: 'fast', accessModes: ['ReadWriteMany', 'ReadWriteOnce'] });
    pvDef.strategy.prepareForCreate?.(pv, ctx);
    (pv.spec as WireObject).capacity = { storage: '1024Mi' };
    const cells = pvDef.columns.map((c) => c.cell(pv, ctx.now));
    assert.deepEqual(cells.slice(0, 7), ['1Gi', 'RWO,RWX', 'Retain', 'Pending', 'ns/data', 'fast', '']);
  });
});

void describe('PersistentVolumeClaim', () => {
  void it('defaults and validates the spec, every problem naming its field', () => {
    const ok = claim();
    assert.deepEqual(createProblems(pvcDef, ok), []);
    assert.deepEqual(ok.status, { phase: 'Pending' });
    const bad = claim({ accessModes: [], resources: { requests: { storage: '-1' } }, storageClassName: 'UPPER', volumeMode: 'Raw', selector: { matchExpressions: [{ key: 'a', operator: 'In' }] }, dataSource: { kind: 'Snapshot', name: 's' } });
    const problems = createProblems(pvcDef, bad);
    assert.ok(problems.includes('spec.accessModes: Required value: at least 1 access mode is required'), problems.join('\n'));
    assert.ok(problems.includes('spec.resources[storage]: Invalid value: "-1": must be greater than zero'));
    assert.ok(problems.some((p) => p.startsWith('spec.storageClassName: Invalid value: "UPPER"')));
    assert.ok(problems.includes('spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"'));
    assert.ok(problems.includes("spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"));
    assert.ok(problems.includes('spec.dataSource: Invalid value: "Snapshot": must be \'PersistentVolumeClaim\' when referencing the default apiGroup'));
    assert.deepEqual(createProblems(pvcDef, claim({ resources: {} })), ['spec.resources[storage]: Required value']);
  });

  void it('is immutable but for the binding and a larger request once bound', () => {
    const old = claim({ storageClassName: 'local' });
    pvcDef.strategy.prepareForCreate?.(old, ctx);
    const bind = structuredClone(old);
    (bind.spec as WireObject).volumeName = 'pv1';
    assert.deepEqual(causes((e) => { pvcDef.strategy.validateUpdate(bind, old, e, ctx); }), []);
    const grow = structuredClone(bind);
    ((grow.spec as WireObject).resources as WireObject).requests = { storage: '2Gi' };
    assert.deepEqual(causes((e) => { pvcDef.strategy.validateUpdate(grow, bind, e, ctx); }), ['spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims']);
    const bound = { ...structuredClone(bind), status: { phase: 'Bound' } };
    const grown = { ...structuredClone(grow), status: { phase: 'Bound' } };
    assert.deepEqual(causes((e) => { pvcDef.strategy.validateUpdate(grown, bound, e, ctx); }), []);
    const shrunk: WireObject = structuredClone(bound);
    ((shrunk.spec as WireObject).resources as WireObject).requests = { storage: '512Mi' };
    assert.deepEqual(causes((e) => { pvcDef.strategy.validateUpdate(shrunk, bound, e, ctx); }), ['spec.resources.requests.storage: Forbidden: field can not be less than previous value']);
    const reclassed = structuredClone(bind);
    (reclassed.spec as WireObject).storageClassName = 'other';
    assert.equal(causes((e) => { pvcDef.strategy.validateUpdate(reclassed, bind, e, ctx); }).length, 1);
    const unclassed = claim();
    pvcDef.strategy.prepareForCreate?.(unclassed, ctx);
    const classed = structuredClone(unclassed);
    (classed.spec as WireObject).storageClassName = 'standard';
    assert.deepEqual(causes((e) => { pvcDef.strategy.validateUpdate(classed, unclassed, e, ctx); }), [], 'a class may be given to a claim that had none');
  });

  void it('prints the volume\'s capacity and modes once bound', () => {
    const c = claim({ volumeName: 'pv1', storageClassName: 'fast' });
    c.status = { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] };
    assert.deepEqual(pvcDef.columns.slice(0, 5).map((col) => col.cell(c, ctx.now)), ['Bound', 'pv1', '10Gi', 'RWO', 'fast']);
    const pending = claim();
    pending.status = { phase: 'Pending' };
    assert.deepEqual(pvcDef.columns.slice(0, 4).map((col) => col.cell(pending, ctx.now)), ['Pending', '', '', '']);
  });
});
