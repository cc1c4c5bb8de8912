/**
 * The one conformance suite every Store implementation passes (node:test). Integration tests
 * call `runStoreConformance('sqlite', factory)`; each test gets a fresh, empty store.
 * CRUD and lists are here, watches and TTL in conformance-watch.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { StoreErrorCode } from './errors.js';
import { nameOf, rejectsWith, rvOf, thing, withStore, type StoreFactory } from './conformance-support.js';
import { describeWatchConformance } from './conformance-watch.js';
import type { ManagedStore, StoredObject } from './types.js';

export type { StoreFactory, StoreHarness } from './conformance-support.js';

function specN(object: StoredObject): number {
  return (object.spec as { n: number }).n;
}

const bump = (object: StoredObject): StoredObject => ({ ...object, spec: { n: specN(object) + 1 } });

async function seed(store: ManagedStore, prefix: string, names: readonly string[]): Promise<Map<string, string>> {
  const rvs = new Map<string, string>();
  for (const name of names) rvs.set(name, rvOf(await store.create(`${prefix}${name}`, thing(name))));
  return rvs;
}

function describeCrudConformance(make: StoreFactory): void {
  void it('creates and gets objects, with increasing resourceVersions set by the store', () =>
    withStore(make, async (store) => {
      const a = await store.create('/things/ns/a', { ...thing('a'), metadata: { name: 'a', resourceVersion: '999' } });
      const b = await store.create('/things/ns/b', thing('b'));
      assert.ok(Number(rvOf(b)) > Number(rvOf(a)));
      assert.equal(await store.currentRevision(), rvOf(b));
      const got = await store.get('/things/ns/a');
      assert.deepEqual(got, a);
      assert.deepEqual(got.spec, { n: 0 });
    }));

  void it('rejects a second create (already-exists), a missing key (not-found) and malformed keys (invalid)', () =>
    withStore(make, async (store) => {
      await store.create('/things/ns/a', thing('a'));
      await rejectsWith(store.create('/things/ns/a', thing('a')), 'already-exists', StoreErrorCode.alreadyExists);
      await rejectsWith(store.get('/things/ns/missing'), 'not-found', StoreErrorCode.notFound);
      await rejectsWith(store.get('things/a'), 'invalid', StoreErrorCode.invalidKey);
      await rejectsWith(store.get('/things/a/'), 'invalid', StoreErrorCode.invalidKey);
      await rejectsWith(store.list('/things'), 'invalid', StoreErrorCode.invalidKey);
      await rejectsWith(store.create('/things/ns/x', [] as unknown as StoredObject), 'invalid', StoreErrorCode.invalidObject);
    }));

  void it('updates with and without an expected resourceVersion; a stale one is a conflict', () =>
    withStore(make, async (store) => {
      const created = await store.create('/things/ns/a', thing('a'));
      const first = await store.update('/things/ns/a', {}, bump);
      assert.equal(specN(first), 1);
      assert.ok(Number(rvOf(first)) > Number(rvOf(created)));
      const second = await store.update('/things/ns/a', { expectedResourceVersion: rvOf(first) }, bump);
      assert.equal(specN(second), 2);
      await rejectsWith(store.update('/things/ns/a', { expectedResourceVersion: rvOf(first) }, bump), 'conflict', StoreErrorCode.conflict);
      assert.deepEqual(await store.get('/things/ns/a'), second);
      await rejectsWith(store.update('/things/ns/missing', {}, bump), 'not-found', StoreErrorCode.notFound);
    }));

  void it('updates from a cached copy: a current one is written, a stale one loses to the fresh state, whose preconditions and mutation decide', () =>
    withStore(make, async (store) => {
      const key = '/things/ns/a';
      const copy = (o: StoredObject): StoredObject => structuredClone(o);
      const created = await store.create(key, thing('a'));
      const one = await store.update(key, { cachedExisting: copy(created) }, bump);
      assert.equal(specN(one), 1);
      // Stale (n=0): the update runs again on the state that won (n=1).
      const two = await store.update(key, { cachedExisting: copy(created) }, bump);
      assert.equal(specN(two), 2);
      // The expected resourceVersion is the current one; the copy's is older: no conflict.
      const three = await store.update(key, { expectedResourceVersion: rvOf(two), cachedExisting: copy(one) }, bump);
      assert.equal(specN(three), 3);
      // A mutation that refuses the stale copy is tried on the fresh state.
      const four = await store.update(key, { cachedExisting: copy(created) }, (o) => {
        if (rvOf(o) !== rvOf(three)) throw new Error('stale');
        return bump(o);
      });
      assert.equal(specN(four), 4);
      // Unchanged against a stale copy is not unchanged: the fresh state decides, and is written.
      const five = await store.update(key, { cachedExisting: copy(created) }, (o) => ({ ...o, spec: { n: 0 } }));
      assert.equal(specN(five), 0);
      assert.ok(Number(rvOf(five)) > Number(rvOf(four)));
      assert.deepEqual(await store.get(key), five);
      await rejectsWith(store.update(key, { expectedResourceVersion: rvOf(one), cachedExisting: copy(one) }, bump), 'conflict', StoreErrorCode.conflict);
      await store.delete(key);
      await rejectsWith(store.update(key, { cachedExisting: copy(five) }, bump), 'not-found', StoreErrorCode.notFound);
      assert.equal(await store.get(key).then(() => 'there', () => 'gone'), 'gone');
    }));

  void it('writes nothing for an update that changes nothing', () =>
    withStore(make, async (store) => {
      const created = await store.create('/things/ns/a', thing('a'));
      const same = await store.update('/things/ns/a', {}, (current) => current);
      assert.equal(rvOf(same), rvOf(created));
      assert.equal(await store.currentRevision(), rvOf(created));
    }));

  void it('retries guaranteed updates under concurrent writers so that no increment is lost', () =>
    withStore(make, async (store) => {
      await store.create('/things/ns/counter', thing('counter'));
      let calls = 0;
      const writers = Array.from({ length: 20 }, () =>
        store.update('/things/ns/counter', {}, async (current) => {
          calls += 1;
          await nextTurn();
          return bump(current);
        }),
      );
      await Promise.all(writers);
      assert.equal(specN(await store.get('/things/ns/counter')), 20);
      assert.ok(calls > 20, `expected retries, mutate ran ${calls} times`);
    }));

  void it('deletes with resourceVersion and uid preconditions, returning the last state at the deletion revision', () =>
    withStore(make, async (store) => {
      const created = await store.create('/things/ns/a', thing('a'));
      const stale = String(Number(rvOf(created)) + 1000);
      await rejectsWith(store.delete('/things/ns/a', { expectedResourceVersion: stale }), 'conflict', StoreErrorCode.conflict);
      await rejectsWith(store.delete('/things/ns/a', { expectedUid: 'other' }), 'conflict', StoreErrorCode.preconditionFailed);
      const deleted = await store.delete('/things/ns/a', { expectedResourceVersion: rvOf(created), expectedUid: 'uid-a' });
      assert.equal(nameOf(deleted), 'a');
      assert.ok(Number(rvOf(deleted)) > Number(rvOf(created)));
      assert.equal(await store.currentRevision(), rvOf(deleted));
      await rejectsWith(store.get('/things/ns/a'), 'not-found', StoreErrorCode.notFound);
      await rejectsWith(store.delete('/things/ns/a'), 'not-found', StoreErrorCode.notFound);
    }));
}

function describeListConformance(make: StoreFactory): void {
  void it('lists in key order, scoped to the prefix, at the current revision', () =>
    withStore(make, async (store) => {
      await seed(store, '/things/ns/', ['c', 'a', 'b']);
      await seed(store, '/things/ns2/', ['z']);
      await store.create('/thingsx/ns/q', thing('q'));
      const list = await store.list('/things/ns/');
      assert.deepEqual(list.items.map(nameOf), ['a', 'b', 'c']);
      assert.equal(list.resourceVersion, await store.currentRevision());
      assert.equal(list.continue, undefined);
      assert.deepEqual((await store.list('/things/')).items.map(nameOf), ['a', 'b', 'c', 'z']);
      assert.deepEqual((await store.list('/nothing/')).items, []);
    }));

  void it('pages with limit and continue at the first page revision, across concurrent writes', () =>
    withStore(make, async (store) => {
      const names = Array.from({ length: 25 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
      const rvs = await seed(store, '/things/ns/', [...names].reverse());
      const first = await store.list('/things/ns/', { limit: 10 });
      assert.equal(first.items.length, 10);
      assert.equal(first.remainingItemCount, 15);
      assert.ok(first.continue !== undefined);
      // Writes between pages must not show in later pages.
      await store.create('/things/ns/item-15b', thing('item-15b'));
      await store.update('/things/ns/item-12', {}, bump);
      await store.delete('/things/ns/item-22');
      await store.create('/things/ns/item-99', thing('item-99'));
      const second = await store.list('/things/ns/', { limit: 10, continue: first.continue });
      assert.equal(second.remainingItemCount, 5);
      assert.ok(second.continue !== undefined);
      const third = await store.list('/things/ns/', { limit: 10, continue: second.continue });
      assert.equal(third.continue, undefined);
      assert.equal(third.remainingItemCount, undefined);
      for (const page of [second, third]) assert.equal(page.resourceVersion, first.resourceVersion);
      const items = [...first.items, ...second.items, ...third.items];
      assert.deepEqual(items.map(nameOf), names);
      for (const item of items) assert.equal(rvOf(item), rvs.get(nameOf(item)));
      const now = await store.list('/things/ns/');
      assert.equal(now.items.length, 26);
      assert.ok(Number(now.resourceVersion) > Number(first.resourceVersion));
    }));

  void it('reads an exact older revision; a future revision is a timeout; a garbled token is invalid', () =>
    withStore(make, async (store) => {
      const rvs = await seed(store, '/things/ns/', ['a', 'b']);
      const before = rvs.get('b') ?? '';
      await store.delete('/things/ns/a');
      await store.update('/things/ns/b', {}, bump);
      const old = await store.list('/things/ns/', { resourceVersion: before, resourceVersionMatch: 'Exact' });
      assert.equal(old.resourceVersion, before);
      assert.deepEqual(old.items.map((o) => [nameOf(o), rvOf(o), specN(o)]), [['a', rvs.get('a'), 0], ['b', before, 0]]);
      const notOlder = await store.list('/things/ns/', { resourceVersion: before, resourceVersionMatch: 'NotOlderThan' });
      assert.deepEqual(notOlder.items.map(nameOf), ['b']);
      const future = String(Number(await store.currentRevision()) + 100);
      await rejectsWith(store.list('/things/ns/', { resourceVersion: future }), 'timeout', StoreErrorCode.rvTooLarge);
      await rejectsWith(store.list('/things/ns/', { resourceVersion: future, resourceVersionMatch: 'Exact' }), 'timeout', StoreErrorCode.rvTooLarge);
      await rejectsWith(store.list('/things/ns/', { limit: 1, continue: 'garbage' }), 'invalid', StoreErrorCode.invalidContinue);
      await rejectsWith(store.list('/things/ns/', { resourceVersion: 'abc' }), 'invalid', StoreErrorCode.invalidResourceVersion);
    }));

  void it('answers gone for a continue token or an exact revision that was compacted', () =>
    withStore(make, async (store) => {
      const rvs = await seed(store, '/things/ns/', ['a', 'b', 'c']);
      const first = await store.list('/things/ns/', { limit: 1 });
      await store.update('/things/ns/a', {}, bump);
      await store.update('/things/ns/b', {}, bump);
      const compacted = await store.compact();
      assert.equal(compacted, await store.currentRevision());
      await rejectsWith(store.list('/things/ns/', { limit: 1, continue: first.continue ?? '' }), 'gone', StoreErrorCode.continueExpired);
      await rejectsWith(
        store.list('/things/ns/', { resourceVersion: rvs.get('c') ?? '', resourceVersionMatch: 'Exact' }),
        'gone',
        StoreErrorCode.rvTooOld,
      );
      const fresh = await store.list('/things/ns/', { limit: 2 });
      assert.deepEqual(fresh.items.map(specN), [1, 1]);
      assert.equal(fresh.remainingItemCount, 1);
    }));
}

/** Registers the whole suite under `describe(name)`. */
export function runStoreConformance(name: string, makeStore: StoreFactory): void {
  void describe(`Store conformance: ${name}`, () => {
    void describe('objects', () => {
      describeCrudConformance(makeStore);
    });
    void describe('lists', () => {
      describeListConformance(makeStore);
    });
    void describe('watches and expiry', () => {
      describeWatchConformance(makeStore);
    });
  });
}
