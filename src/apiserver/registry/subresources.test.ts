import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openSqliteStore, type ManagedStore } from '../storage/index.js';
import { int64, object, objectMeta, str } from '../schema/index.js';
import { metaOf, ResourceRegistry, type ResourceDefinition, type StrategyContext, type WireObject } from './index.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';

const base: ResourceDefinition = {
  group: 'test.orch.io', version: 'v1', kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget', shortNames: [], categories: [],
  namespaced: true, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], storage: 'gadgets',
  schema: object({ kind: str(), apiVersion: str(), metadata: objectMeta, grace: int64(), note: str(), status: object({ decision: str(), other: str() }) }),
  statusSubresource: true, fieldLabels: [], fields: () => ({}), columns: [], nameColumn: true, nameRule: 'subdomain', allowCreateOnUpdate: false, returnDeletedObject: false,
  strategy: {
    validateCreate: () => undefined,
    validateUpdate: () => undefined,
    gracePeriod: (o, requested) => requested ?? (typeof o.grace === 'number' ? o.grace : 0),
  },
  subresources: [{
    name: 'decision', kind: 'Gadget', verbs: ['get', 'update', 'patch'],
    merge: (written, stored) => ({ ...stored, status: { ...(stored.status as WireObject | undefined), decision: (written.status as WireObject | undefined)?.decision } }),
  }],
};

const ctx: StrategyContext = { user: { name: 'test', uid: 'u1', groups: ['g'] }, now: new Date('2024-05-01T10:00:00Z') };

void describe('registry: graceful deletion, merge subresources, reviews', () => {
  let dir: string;
  let store: ManagedStore;
  let registry: ResourceRegistry;
  before(async () => {
    dir = mkdtempSync(join(syncedTmpdir(), 'orch-registry-sub-'));
    store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
    registry = new ResourceRegistry({ def: base, store });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('marks an object with a grace period, shortens it, and removes it with 0', async () => {
    await registry.create(ctx, 'ns', { metadata: { name: 'g1' }, grace: 30 }, { dryRun: false });
    const marked = await registry.delete(ctx, 'ns', 'g1', { dryRun: false });
    assert.equal(marked.deleted, false);
    assert.equal(metaOf(marked.object).deletionTimestamp, '2024-05-01T10:00:30Z');
    assert.equal(metaOf(marked.object).deletionGracePeriodSeconds, 30);
    const written = await registry.update(ctx, 'ns', 'g1', { ...marked.object, note: 'still here' }, { dryRun: false });
    assert.equal(written.object.note, 'still here', 'a write during the grace period does not delete');
    assert.equal(metaOf((await registry.delete(ctx, 'ns', 'g1', { dryRun: false, gracePeriodSeconds: 60 })).object).deletionGracePeriodSeconds, 30);
    assert.equal(metaOf((await registry.delete(ctx, 'ns', 'g1', { dryRun: false, gracePeriodSeconds: 5 })).object).deletionTimestamp, '2024-05-01T10:00:05Z');
    assert.equal((await registry.delete(ctx, 'ns', 'g1', { dryRun: true, gracePeriodSeconds: 0 })).deleted, true);
    assert.equal((await registry.delete(ctx, 'ns', 'g1', { dryRun: false, gracePeriodSeconds: 0 })).deleted, true);
    await assert.rejects(registry.get('ns', 'g1'), /not found/);
  });

  void it('writes through a merge subresource only what its rule takes', async () => {
    const created = await registry.create(ctx, 'ns', { metadata: { name: 'g2' }, note: 'a' }, { dryRun: false });
    const decided = await registry.update(ctx, 'ns', 'g2', { ...created, note: 'b', status: { decision: 'yes', other: 'x' } }, { dryRun: false, subresource: 'decision' });
    assert.deepEqual([decided.object.note, decided.object.status], ['a', { decision: 'yes' }]);
    await assert.rejects(registry.update(ctx, 'ns', 'g2', decided.object, { dryRun: false, subresource: 'nope' }), /not found/);
  });

  void it('answers reviews without storing them', async () => {
    const review = new ResourceRegistry({
      def: { ...base, plural: 'gadgetreviews', storage: 'gadgetreviews', review: (o, c) => Promise.resolve({ ...o, status: { decision: c.user.name } }) },
      store,
    });
    const answered = await review.create(ctx, 'ns', { note: 'q' }, { dryRun: false });
    assert.deepEqual(answered.status, { decision: 'test' });
    assert.equal(metaOf(answered).namespace, 'ns');
    assert.equal(metaOf(answered).uid, undefined, 'no metadata is generated');
    assert.equal((await store.list('/gadgetreviews/')).items.length, 0);
  });
});
