import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseFieldSelector, parseLabelSelector } from '../selectors/index.js';
import { openSqliteStore, type ManagedStore } from '../storage/index.js';
import { StatusError } from '../status/index.js';
import { object, objectMeta, str } from '../schema/index.js';
import { listObjects, metaOf, ResourceRegistry, type ResourceDefinition, type StrategyContext } from './index.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';

const def: ResourceDefinition = {
  group: 'test.orch.io', version: 'v1', kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget', shortNames: [], categories: [],
  namespaced: true, verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], storage: 'widgets',
  schema: object({ kind: str(), apiVersion: str(), metadata: objectMeta, color: str(), status: object({ state: str() }) }),
  statusSubresource: true, fieldLabels: ['color'], fields: (o) => ({ color: typeof o.color === 'string' ? o.color : '' }),
  columns: [], nameColumn: true, nameRule: 'subdomain', allowCreateOnUpdate: true, returnDeletedObject: false,
  strategy: {
    validateCreate: (o, errors) => {
      if (o.color === 'invalid') errors.invalid('color', o.color, 'is not a color');
    },
    validateUpdate: () => undefined,
  },
};

const ctx: StrategyContext = { user: { name: 'test', uid: '', groups: [] }, now: new Date('2024-05-01T10:00:00Z') };
const code = async (p: Promise<unknown>): Promise<number> => p.then(() => 0, (err: unknown) => (err instanceof StatusError ? err.httpCode : -1));
const everything = { labelSelector: parseLabelSelector(''), fieldSelector: parseFieldSelector('', ['color'], 'widgets') };

void describe('generic registry over SQLite', () => {
  let dir: string;
  let store: ManagedStore;
  let registry: ResourceRegistry;
  before(async () => {
    dir = mkdtempSync(join(syncedTmpdir(), 'orch-registry-'));
    store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
    registry = new ResourceRegistry({ def, store });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('creates with server-owned metadata, rejects duplicates (409) and invalid objects (422)', async () => {
    const created = await registry.create(ctx, 'ns', { metadata: { name: 'w1', uid: 'mine', labels: { a: 'b' } }, color: 'red' }, { dryRun: false });
    const meta = metaOf(created);
    assert.equal(meta.namespace, 'ns');
    assert.notEqual(meta.uid, 'mine');
    assert.equal(meta.creationTimestamp, '2024-05-01T10:00:00Z');
    assert.equal(created.kind, 'Widget');
    assert.equal(await code(registry.create(ctx, 'ns', { metadata: { name: 'w1' } }, { dryRun: false })), 409);
    assert.equal(await code(registry.create(ctx, 'ns', { metadata: { name: 'w2' }, color: 'invalid' }, { dryRun: false })), 422);
    assert.equal(await code(registry.create(ctx, 'ns', { metadata: {} }, { dryRun: false })), 422);
  });

  void it('keeps status on main updates, changes only status through /status, creates on update where allowed', async () => {
    const current = await registry.get('ns', 'w1');
    const updated = await registry.update(ctx, 'ns', 'w1', { ...current, color: 'blue', status: { state: 'ignored' } }, { dryRun: false });
    assert.equal(updated.object.color, 'blue');
    assert.equal(updated.object.status, undefined);
    const status = await registry.update(ctx, 'ns', 'w1', { ...updated.object, color: 'green', status: { state: 'ready' } }, { dryRun: false, subresource: 'status' });
    assert.deepEqual(status.object.status, { state: 'ready' });
    assert.equal(status.object.color, 'blue');
    const created = await registry.update(ctx, 'ns', 'fresh', { metadata: { name: 'fresh' } }, { dryRun: false });
    assert.equal(created.created, true);
    assert.equal(await code(registry.update(ctx, 'ns', 'w1', { ...current }, { dryRun: false })), 409, 'stale resourceVersion');
  });

  void it('pages filtered lists, and answers 410 for a continue token after compaction', async () => {
    for (let i = 0; i < 12; i++) await registry.create(ctx, 'paged', { metadata: { name: `p${String(i).padStart(2, '0')}` }, color: i % 3 === 0 ? 'red' : 'blue' }, { dryRun: false });
    const red = { ...everything, fieldSelector: parseFieldSelector('color=red', ['color'], 'widgets') };
    const first = await listObjects(registry, { ...red, namespace: 'paged', limit: 2 });
    assert.deepEqual(first.items.map((o) => metaOf(o).name), ['p00', 'p03']);
    assert.equal(first.remainingItemCount, undefined);
    const rest = await listObjects(registry, { ...red, namespace: 'paged', limit: 10, continue: first.continue ?? '' });
    assert.deepEqual(rest.items.map((o) => metaOf(o).name), ['p06', 'p09']);
    const plain = await listObjects(registry, { ...everything, namespace: 'paged', limit: 5 });
    assert.equal(plain.remainingItemCount, 7);
    await registry.create(ctx, 'paged', { metadata: { name: 'later' } }, { dryRun: false });
    await store.compact();
    assert.equal(await code(listObjects(registry, { ...everything, namespace: 'paged', limit: 5, continue: plain.continue ?? '' })), 410);
  });

  void it('answers a continue token it cannot read with a 400 naming the parameter, never a parser message', async () => {
    const notOurs = Buffer.from(JSON.stringify({ v: 1, rv: '5', t: 'bogus-store-token', s: 0 })).toString('base64url');
    for (const token of ['garbage!', Buffer.from('{"v":2}').toString('base64url'), notOurs]) {
      const err = await listObjects(registry, { ...everything, namespace: 'paged', limit: 5, continue: token }).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof StatusError, token);
      assert.equal(err.httpCode, 400, token);
      assert.match(err.message, /^invalid value for query parameter continue: ".*" is not a continue token of this list: pass the metadata\.continue of the previous page as it is/);
      assert.doesNotMatch(err.message, /JSON|Unexpected token|position/);
    }
  });

  void it('deletes through finalizers and checks preconditions', async () => {
    const held = await registry.create(ctx, 'ns', { metadata: { name: 'held', finalizers: ['x.io/f'] } }, { dryRun: false });
    assert.equal(await code(registry.delete(ctx, 'ns', 'held', { dryRun: false, uid: 'other' })), 409);
    const marked = await registry.delete(ctx, 'ns', 'held', { dryRun: false });
    assert.equal(marked.deleted, false);
    assert.equal(metaOf(marked.object).deletionTimestamp, '2024-05-01T10:00:00Z');
    const cleared = (await registry.patch(ctx, 'ns', 'held', 'merge', { metadata: { finalizers: null } }, { dryRun: false })).object;
    assert.equal(metaOf(cleared).uid, metaOf(held).uid);
    assert.equal(await code(registry.get('ns', 'held')), 404);
  });

  void it('deletes an object written between its read and its delete (a status update) instead of answering 409; a stale resourceVersion precondition still does', async () => {
    let writes = 0;
    // The admission step runs between the delete's read and its write: a status update lands there.
    const racing: ResourceRegistry = new ResourceRegistry({
      def, store,
      admission: async (operation, _def, namespace, name) => {
        if (operation !== 'delete' || writes >= 2) return;
        writes++;
        const current = await racing.get(namespace, name);
        await racing.update(ctx, namespace, name, { ...current, status: { state: `write ${String(writes)}` } }, { dryRun: false, subresource: 'status' });
      },
    });
    await racing.create(ctx, 'ns', { metadata: { name: 'raced' } }, { dryRun: false });
    const gone = await racing.delete(ctx, 'ns', 'raced', { dryRun: false });
    assert.equal(gone.deleted, true);
    assert.equal(writes, 2, 'two writes raced the delete, each before the store delete');
    assert.equal(await code(racing.get('ns', 'raced')), 404);

    const kept = await registry.create(ctx, 'ns', { metadata: { name: 'stale' } }, { dryRun: false });
    await registry.update(ctx, 'ns', 'stale', { ...kept, status: { state: 'newer' } }, { dryRun: false, subresource: 'status' });
    assert.equal(await code(registry.delete(ctx, 'ns', 'stale', { dryRun: false, resourceVersion: metaOf(kept).resourceVersion as string })), 409);
  });
});
