/**
 * Conformance of watches (from now, from an older revision, scoping, bookmarks, compacted
 * history, many watchers, cancellation) and of TTL expiry. Registered by conformance.ts.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { StoreErrorCode } from './errors.js';
import { eventually, nameOf, Recorder, rejectsWith, rvOf, thing, withStore, type StoreFactory } from './conformance-support.js';
import type { StoredObject, WatchEvent } from './types.js';

function spec(object: StoredObject): unknown {
  return object.spec;
}

export function describeWatchConformance(make: StoreFactory): void {
  void it('watches from now: ADDED, MODIFIED, DELETED with the last state at the deletion revision', () =>
    withStore(make, async (store) => {
      await store.create('/things/ns/old', thing('old'));
      const recorder = await Recorder.start(store, '/things/ns/');
      assert.equal(recorder.watch?.resourceVersion, await store.currentRevision());
      const a = await store.create('/things/ns/a', thing('a'));
      const a2 = await store.update('/things/ns/a', {}, (o) => ({ ...o, spec: { n: 7 } }));
      const gone = await store.delete('/things/ns/a');
      const seen = await recorder.waitForChanges(3);
      assert.deepEqual(seen, [`ADDED a ${rvOf(a)}`, `MODIFIED a ${rvOf(a2)}`, `DELETED a ${rvOf(gone)}`]);
      const deleted = recorder.events.find((e) => e.type === 'DELETED');
      assert.ok(deleted?.type === 'DELETED');
      assert.deepEqual(spec(deleted.object), { n: 7 });
      await recorder.close();
    }));

  void it('watches from an older resourceVersion, strictly after it, then live', () =>
    withStore(make, async (store) => {
      // A watch from now already runs: the older watch cannot simply join it.
      const live = await Recorder.start(store, '/things/');
      const a = await store.create('/things/ns/a', thing('a'));
      const b = await store.create('/things/ns/b', thing('b'));
      const b2 = await store.update('/things/ns/b', {}, (o) => ({ ...o, spec: { n: 1 } }));
      await live.waitForChanges(3);
      const recorder = await Recorder.start(store, '/things/ns/', { resourceVersion: rvOf(a) });
      assert.equal(recorder.watch?.resourceVersion, rvOf(a));
      const c = await store.create('/things/ns/c', thing('c'));
      const seen = await recorder.waitForChanges(3);
      assert.deepEqual(seen, [`ADDED b ${rvOf(b)}`, `MODIFIED b ${rvOf(b2)}`, `ADDED c ${rvOf(c)}`]);
      const joined = await Recorder.start(store, '/things/ns/', { resourceVersion: rvOf(c) });
      const d = await store.create('/things/ns/d', thing('d'));
      assert.deepEqual(await joined.waitForChanges(1), [`ADDED d ${rvOf(d)}`]);
      await live.waitForChanges(5);
      await Promise.all([recorder.close(), joined.close(), live.close()]);
    }));

  void it('scopes watches to a prefix or to one key', () =>
    withStore(make, async (store) => {
      const ns1 = await Recorder.start(store, '/things/ns1/');
      const one = await Recorder.start(store, '/things/ns1/a');
      await store.create('/things/ns10/x', thing('x'));
      await store.create('/things/ns2/y', thing('y'));
      await store.create('/things/ns1/b', thing('b'));
      const a = await store.create('/things/ns1/a', thing('a'));
      await store.create('/things/ns1/ab', thing('ab'));
      await ns1.waitForChanges(3);
      await one.waitForChanges(1);
      assert.deepEqual(ns1.changes().map((c) => c.split(' ')[1]), ['b', 'a', 'ab']);
      assert.deepEqual(one.changes(), [`ADDED a ${rvOf(a)}`]);
      await ns1.close();
      await one.close();
    }));

  void it('sends bookmarks only when asked, with resourceVersions that never go back and cover writes elsewhere', () =>
    withStore(make, async (store) => {
      const plain = await Recorder.start(store, '/things/ns/');
      const marked = await Recorder.start(store, '/things/ns/', { bookmarks: true });
      const a = await store.create('/things/ns/a', thing('a'));
      await eventually('a bookmark at or after the write', () => marked.bookmarks().some((rv) => rv >= Number(rvOf(a))));
      const outside = await store.create('/other/ns/z', thing('z'));
      await eventually('a bookmark covering a write outside the prefix', () =>
        marked.bookmarks().some((rv) => rv >= Number(rvOf(outside))),
      );
      const marks = marked.bookmarks();
      assert.deepEqual(marks, [...marks].sort((x, y) => x - y));
      const firstBookmark = marked.events.findIndex((e) => e.type === 'BOOKMARK' && Number(e.resourceVersion) >= Number(rvOf(a)));
      const added = marked.events.findIndex((e) => e.type === 'ADDED');
      assert.ok(added >= 0 && added < firstBookmark, 'the bookmark follows the event it covers');
      assert.deepEqual(plain.bookmarks(), []);
      await plain.close();
      await marked.close();
    }));

  void it('fails a watch from a compacted resourceVersion with gone', () =>
    withStore(make, async (store) => {
      const a = await store.create('/things/ns/a', thing('a'));
      await store.update('/things/ns/a', {}, (o) => ({ ...o, spec: { n: 1 } }));
      await store.update('/things/ns/a', {}, (o) => ({ ...o, spec: { n: 2 } }));
      await store.compact();
      await rejectsWith(store.watch('/things/ns/', { resourceVersion: rvOf(a), onEvent: () => undefined }), 'gone', StoreErrorCode.rvTooOld);
      const fromNow = await Recorder.start(store, '/things/ns/', { resourceVersion: await store.currentRevision() });
      await fromNow.close();
    }));

  void it('delivers the same events in the same order to many watchers', () =>
    withStore(make, async (store) => {
      const recorders = await Promise.all(Array.from({ length: 25 }, () => Recorder.start(store, '/things/')));
      const writes: Promise<StoredObject>[] = [];
      for (let i = 0; i < 20; i++) writes.push(store.create(`/things/ns${i % 3}/o${i}`, thing(`o${i}`)));
      await Promise.all(writes);
      await store.delete('/things/ns0/o0');
      const expected = await recorders[0]?.waitForChanges(21);
      assert.ok(expected !== undefined);
      const rvs = expected.map((c) => Number(c.split(' ')[2]));
      assert.deepEqual(rvs, [...rvs].sort((x, y) => x - y), 'in revision order');
      assert.equal(new Set(rvs).size, rvs.length);
      for (const recorder of recorders) assert.deepEqual(await recorder.waitForChanges(21), expected);
      await Promise.all(recorders.map((r) => r.close()));
    }));

  void it('stops delivering after close() or an aborted signal, and resolves done', () =>
    withStore(make, async (store) => {
      const closed = await Recorder.start(store, '/things/ns/');
      const controller = new AbortController();
      const aborted = await Recorder.start(store, '/things/ns/', { signal: controller.signal });
      const live = await Recorder.start(store, '/things/ns/');
      await closed.close();
      controller.abort();
      await closed.watch?.done;
      await aborted.watch?.done;
      await store.create('/things/ns/a', thing('a'));
      await live.waitForChanges(1);
      assert.deepEqual(closed.events, []);
      assert.deepEqual(aborted.events, []);
      await live.close();
      const early = new AbortController();
      early.abort();
      const never = await store.watch('/things/ns/', { signal: early.signal, onEvent: () => assert.fail('no event expected') });
      await never.done;
    }));

  void it('expires objects with a TTL, with a DELETED event, and keeps the others', () =>
    withStore(make, async (store) => {
      const recorder = await Recorder.start(store, '/things/ns/');
      await store.create('/things/ns/short', thing('short'), { ttlSeconds: 1 });
      await store.create('/things/ns/long', thing('long'), { ttlSeconds: 3600 });
      await store.create('/things/ns/forever', thing('forever'));
      await store.update('/things/ns/forever', {}, (o) => ({ ...o, spec: { n: 1 } }));
      // An update with ttlSeconds sets a new expiry; one without keeps the current one.
      await store.create('/things/ns/renewed', thing('renewed'), { ttlSeconds: 1 });
      await store.update('/things/ns/renewed', { ttlSeconds: 3600 }, (o) => o);
      await store.create('/things/ns/kept', thing('kept'), { ttlSeconds: 1 });
      await store.update('/things/ns/kept', {}, (o) => ({ ...o, spec: { n: 5 } }));
      const expired = (name: string) => (e: WatchEvent): boolean => e.type === 'DELETED' && nameOf(e.object) === name;
      await eventually('the expiry of short and kept', () => recorder.events.some(expired('short')) && recorder.events.some(expired('kept')), 15_000);
      await rejectsWith(store.get('/things/ns/short'), 'not-found');
      const names = (await store.list('/things/ns/')).items.map(nameOf);
      assert.deepEqual(names, ['forever', 'long', 'renewed']);
      await recorder.close();
    }));
}
