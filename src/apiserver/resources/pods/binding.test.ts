import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ResourceRegistry, type StrategyContext, type WireObject } from '../../registry/index.js';
import { StatusError } from '../../status/index.js';
import { openSqliteStore, type ManagedStore } from '../../storage/index.js';
import { bindFromBody, bindPod, podDefinition } from './index.js';
import { syncedTmpdir } from '../../../../test/helpers/tempdir.js';

const ctx: StrategyContext = { user: { name: 'test', uid: '', groups: [] }, now: new Date('2024-05-01T10:00:00Z') };

function pod(name: string, spec: WireObject = {}): WireObject {
  return { metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}

async function refusal(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StatusError);
    return err;
  }
  throw new Error('no refusal');
}

void describe('pods/binding', () => {
  let dir: string;
  let store: ManagedStore;
  let pods: ResourceRegistry;
  before(async () => {
    dir = mkdtempSync(join(syncedTmpdir(), 'orch-binding-'));
    store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
    pods = new ResourceRegistry({ def: podDefinition, store });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('assigns an unbound pod: nodeName, annotations, PodScheduled True', async () => {
    await pods.create(ctx, 'default', pod('web'), { dryRun: false });
    const status = await bindFromBody(pods, ctx, 'default', 'web', {
      apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web', annotations: { 'scheduler.orch.io/why': 'room' } }, target: { kind: 'Node', name: 'n1' },
    }, false);
    assert.deepEqual(status, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const bound = await pods.get('default', 'web');
    assert.equal((bound.spec as WireObject).nodeName, 'n1');
    assert.deepEqual((bound.metadata as WireObject).annotations, { 'scheduler.orch.io/why': 'room' });
    assert.deepEqual((bound.status as WireObject).conditions, [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z' }]);
  });

  void it('refuses a pod already assigned, deleting or gated (409 on pods/binding), and a wrong uid', async () => {
    const assigned = await refusal(bindPod(pods, ctx, { namespace: 'default', name: 'web', node: 'n2' }, false));
    assert.equal(assigned.httpCode, 409);
    assert.equal(assigned.message, 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"');
    await pods.create(ctx, 'default', pod('gated', { schedulingGates: [{ name: 'wait' }] }), { dryRun: false });
    assert.match((await refusal(bindPod(pods, ctx, { namespace: 'default', name: 'gated', node: 'n1' }, false))).message, /pod gated has non-empty \.spec\.schedulingGates/);
    await pods.create(ctx, 'default', { ...pod('going'), metadata: { name: 'going', finalizers: ['orch.io/hold'] } }, { dryRun: false });
    await pods.delete(ctx, 'default', 'going', { dryRun: false });
    assert.match((await refusal(bindPod(pods, ctx, { namespace: 'default', name: 'going', node: 'n1' }, false))).message, /pod going is being deleted, cannot be assigned to a host/);
    await pods.create(ctx, 'default', pod('other'), { dryRun: false });
    const uid = await refusal(bindPod(pods, ctx, { namespace: 'default', name: 'other', node: 'n1', uid: 'not-its-uid' }, false));
    assert.equal(uid.httpCode, 409);
    assert.match(uid.message, /Precondition failed: UID in precondition: not-its-uid/);
    assert.equal((await refusal(bindPod(pods, ctx, { namespace: 'default', name: 'missing', node: 'n1' }, false))).httpCode, 404);
  });

  void it('validates the Binding as upstream: the URL\'s name, target.kind Node or empty, target.name required', async () => {
    const body = (metadata: WireObject, target: WireObject): WireObject => ({ apiVersion: 'v1', kind: 'Binding', metadata, target });
    assert.equal((await refusal(bindFromBody(pods, ctx, 'default', 'other', body({ name: 'web' }, { name: 'n1' }), false))).httpCode, 400);
    const invalid = await refusal(bindFromBody(pods, ctx, 'default', 'other', body({ name: 'other' }, { kind: 'Pod' }), false));
    assert.equal(invalid.httpCode, 422);
    assert.deepEqual(invalid.details?.causes?.map((c) => c.field), ['target.kind', 'target.name']);
    await bindFromBody(pods, ctx, 'default', 'other', body({ name: 'other' }, { name: 'n1' }), true);
    assert.equal(((await pods.get('default', 'other')).spec as WireObject).nodeName, undefined, 'dry run writes nothing');
  });
});
