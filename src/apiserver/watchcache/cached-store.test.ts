/**
 * The watch cache over a real SQLite store (temp dir): which reads it answers and which go to the
 * store (counted by a wrapper), staleness rules (resourceVersion 0, N, a future N: 504 after the
 * wait), lists (limit ignored at 0, Exact/continue/limit-with-N delegated, the index), the
 * fallback to the store while not ready, and the re-list after the watch broke.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isOrchError, OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { openSqliteStore, StoreErrorCode, type ManagedStore, type StoredObject, type Watch, type WatchEvent } from '../storage/index.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';
import { withWatchCache, WatchCacheErrorCode, type CachedStore } from './index.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Counted {
  readonly store: ManagedStore;
  readonly calls: { get: number; list: number };
  /** The cache's lists (those without options) fail with unavailable while this is above 0 (decremented by each). */
  failLists: number;
  /** Ends every watch the cache holds on the store (as a broken connection would); with `error`, after an ERROR event. */
  breakWatches(error?: OrchError): Promise<void>;
}

/** The store with its reads counted, list failures on demand and watches that can be broken. */
function counted(inner: ManagedStore): Counted {
  const watches: { watch: Watch; onEvent: (event: WatchEvent) => void }[] = [];
  const c: Counted = {
    calls: { get: 0, list: 0 },
    failLists: 0,
    breakWatches: async (error) => {
      await Promise.all(watches.splice(0).map(async ({ watch, onEvent }) => {
        if (error !== undefined) onEvent({ type: 'ERROR', error });
        await watch.close();
      }));
    },
    store: {
      ...inner,
      create: (k, o, opt) => inner.create(k, o, opt),
      update: (k, opt, m) => inner.update(k, opt, m),
      delete: (k, opt) => inner.delete(k, opt),
      currentRevision: () => inner.currentRevision(),
      compact: (r) => inner.compact(r),
      close: () => inner.close(),
      get: (key, options) => {
        c.calls.get++;
        return inner.get(key, options);
      },
      list: (prefix, options) => {
        c.calls.list++;
        if (c.failLists > 0 && options === undefined) {
          c.failLists--;
          return Promise.reject(new OrchError(StoreErrorCode.unavailable, 'unavailable', 'database is locked', { subject: 'sqlite' }));
        }
        return inner.list(prefix, options);
      },
      watch: async (key, options) => {
        const watch = await inner.watch(key, options);
        watches.push({ watch, onEvent: options.onEvent });
        return watch;
      },
    },
  };
  return c;
}

async function setup(failLists = 0): Promise<{ base: Counted; cache: CachedStore; clock: FakeClock; logs: string[] }> {
  const dir = mkdtempSync(join(syncedTmpdir(), 'orch-watchcache-'));
  dirs.push(dir);
  const base = counted(await openSqliteStore({ dataDir: dir, bookmarkIntervalMs: 60_000, compactionIntervalMs: 3_600_000 }));
  base.failLists = failLists;
  const clock = new FakeClock();
  const logs: string[] = [];
  const cache = withWatchCache(base.store, { prefixes: ['/pods/', '/nodes/'], clock, log: (m) => logs.push(m) });
  return { base, cache, clock, logs };
}

const pod = (ns: string, name: string, node = ''): StoredObject => ({ metadata: { namespace: ns, name }, spec: { nodeName: node } });
const rvOf = (o: StoredObject): string => String((o.metadata as { resourceVersion?: string }).resourceVersion);
const nameOf = (o: StoredObject): string => String((o.metadata as { name?: string }).name);
const ready = (cache: CachedStore, prefix = '/pods/'): Promise<true> => waitFor(`the cache of ${prefix} ready`, () => cache.cacheStats()[prefix]?.ready === true);

async function rejection(promise: Promise<unknown>): Promise<OrchError> {
  try {
    await promise;
  } catch (err) {
    if (isOrchError(err)) return err;
    throw err;
  }
  return assert.fail('expected a rejection');
}

void describe('the watch cache', () => {
  void it('answers get and list at resourceVersion 0 from memory, and reads without one from the store', async () => {
    const { base, cache } = await setup();
    await base.store.create('/pods/default/a', pod('default', 'a', 'n1'));
    await ready(cache);
    const before = { ...base.calls };
    const got = await cache.get('/pods/default/a', { resourceVersion: '0' });
    assert.equal(nameOf(got), 'a');
    (got.metadata as Record<string, unknown>).name = 'changed';
    assert.equal(nameOf(await cache.get('/pods/default/a', { resourceVersion: '0' })), 'a', 'each read decodes a copy of its own');
    const listed = await cache.list('/pods/', { resourceVersion: '0' });
    assert.deepEqual(listed.items.map(nameOf), ['a']);
    assert.deepEqual(base.calls, before, 'no store read');
    await cache.get('/pods/default/a');
    await cache.list('/pods/');
    assert.deepEqual(base.calls, { get: before.get + 1, list: before.list + 1 }, 'consistent reads go to the store');
    // A write is seen at resourceVersion 0 once the watch delivered it (possibly stale until then).
    await base.store.create('/pods/default/b', pod('default', 'b'));
    await waitFor('b at resourceVersion 0', async () => (await cache.list('/pods/', { resourceVersion: '0' })).items.length === 2);
    await assert.rejects(cache.get('/pods/default/zz', { resourceVersion: '0' }), (err: unknown) => isOrchError(err) && err.code === StoreErrorCode.notFound);
    await cache.close();
  });

  void it('answers resourceVersion N with a state not older than N: waits for the watch, 504 after 3 s', async () => {
    const { base, cache, clock } = await setup();
    await ready(cache);
    const created = await base.store.create('/pods/default/a', pod('default', 'a'));
    const updated = await base.store.update('/pods/default/a', {}, (o) => ({ ...o, spec: { nodeName: 'n2' } }));
    const got = await cache.get('/pods/default/a', { resourceVersion: rvOf(updated) });
    assert.equal(rvOf(got), rvOf(updated));
    const list = await cache.list('/pods/', { resourceVersion: rvOf(created), resourceVersionMatch: 'NotOlderThan' });
    assert.ok(Number(list.resourceVersion) >= Number(rvOf(updated)));
    // A write to another resource: the cache of pods reaches its revision through a bookmark.
    const node = await base.store.create('/nodes/n1', { metadata: { name: 'n1' } });
    const atNode = await cache.list('/pods/', { resourceVersion: rvOf(node) });
    assert.equal(atNode.resourceVersion, rvOf(node));
    // A revision no one wrote yet: the read waits 3 s, then upstream's 504.
    const future = Number(rvOf(node)) + 100;
    const pending = rejection(cache.get('/pods/default/a', { resourceVersion: String(future) }));
    await clock.advance(2_900);
    let settled = false;
    void pending.then(() => { settled = true; });
    await settle();
    assert.equal(settled, false, 'still waiting before 3 s');
    await clock.advance(100);
    const err = await pending;
    assert.equal(err.code, WatchCacheErrorCode.tooLargeResourceVersion);
    assert.equal(err.category, 'timeout');
    assert.match(err.message, new RegExp(`^Too large resource version: ${future}, current: \\d+$`));
    const bad = await rejection(cache.get('/pods/default/a', { resourceVersion: 'abc' }));
    assert.equal(bad.code, WatchCacheErrorCode.invalidResourceVersion);
    await cache.close();
  });

  void it('lists as upstream: 0 ignores the limit, Exact, continue and N with a limit go to the store', async () => {
    const { base, cache } = await setup();
    for (const name of ['c', 'a', 'b']) await base.store.create(`/pods/ns1/${name}`, pod('ns1', name, name === 'b' ? 'n2' : 'n1'));
    const last = await base.store.create('/pods/ns2/d', pod('ns2', 'd', 'n1'));
    await ready(cache);
    const before = base.calls.list;
    const whole = await cache.list('/pods/', { resourceVersion: '0', limit: 1 });
    assert.deepEqual(whole.items.map(nameOf), ['a', 'b', 'c', 'd'], 'every item, in key order');
    assert.equal(whole.limitIgnored, true);
    assert.equal(whole.continue, undefined);
    assert.deepEqual((await cache.list('/pods/ns1/', { resourceVersion: '0' })).items.map(nameOf), ['a', 'b', 'c'], 'a namespace');
    assert.deepEqual((await cache.list('/pods/', { resourceVersion: rvOf(last) })).items.length, 4, 'N without a limit');
    assert.equal(base.calls.list, before, 'all from memory');
    const paged = await cache.list('/pods/', { resourceVersion: rvOf(last), limit: 2 });
    assert.equal(paged.items.length, 2);
    assert.ok(paged.continue !== undefined, 'N with a limit: the store pages it');
    await cache.list('/pods/', { continue: paged.continue });
    await cache.list('/pods/', { resourceVersion: rvOf(last), resourceVersionMatch: 'Exact' });
    assert.equal(base.calls.list, before + 3);
    // The index: a node's pods, kept up to date by the watch.
    const index = { name: 'pods field spec.nodeName', value: 'n1', of: (o: StoredObject) => String((o.spec as { nodeName?: string }).nodeName) };
    assert.deepEqual((await cache.list('/pods/', { resourceVersion: '0', index })).items.map(nameOf), ['a', 'c', 'd']);
    const moved = await base.store.update('/pods/ns1/a', {}, (o) => ({ ...o, spec: { nodeName: 'n2' } }));
    const after = await cache.list('/pods/ns1/', { resourceVersion: rvOf(moved), index });
    assert.deepEqual(after.items.map(nameOf), ['c']);
    assert.deepEqual((await cache.list('/pods/', { resourceVersion: rvOf(moved), index: { ...index, value: 'n2' } })).items.map(nameOf), ['a', 'b']);
    await base.store.delete('/pods/ns1/b');
    await waitFor('b gone from the index', async () => (await cache.list('/pods/', { resourceVersion: '0', index: { ...index, value: 'n2' } })).items.length === 1);
    await cache.close();
  });

  void it('sends reads to the store until it can list, logging the failures once and the recovery once', async () => {
    const { base, cache, clock, logs } = await setup(4);
    await base.store.create('/pods/default/a', pod('default', 'a'));
    await waitFor('the first failure', () => logs.length > 0);
    const gets = base.calls.get;
    assert.equal(nameOf(await cache.get('/pods/default/a', { resourceVersion: '0' })), 'a');
    assert.equal(base.calls.get, gets + 1, 'not ready: the store answers');
    const before = base.calls.list;
    assert.equal((await cache.list('/pods/', { resourceVersion: '0', limit: 500 })).limitIgnored, undefined, 'the store pages it');
    assert.equal(base.calls.list, before + 1);
    // Back-off: 500 ms, 1 s, 2 s ... (both caches fail; failLists counts every list).
    for (let i = 0; i < 6 && cache.cacheStats()['/pods/']?.ready !== true; i++) {
      await clock.advance(clock.untilNext() ?? 0);
      await settle(50);
    }
    await ready(cache);
    await ready(cache, '/nodes/');
    const failed = logs.filter((l) => l.includes('cannot list and watch'));
    assert.equal(failed.length, 2, `one line per cache for the run of failures: ${logs.join(' | ')}`);
    assert.match(failed[0] ?? '', /database is locked/);
    assert.equal(logs.filter((l) => l.includes('ready again')).length, 2);
    await cache.close();
  });

  void it('lists again after its watch broke, reading from the store meanwhile', async () => {
    const { base, cache, clock, logs } = await setup();
    await base.store.create('/pods/default/a', pod('default', 'a'));
    await ready(cache);
    await base.breakWatches();
    await waitFor('not ready', () => cache.cacheStats()['/pods/']?.ready === false);
    const written = await base.store.create('/pods/default/b', pod('default', 'b'));
    const gets = base.calls.get;
    await cache.get('/pods/default/b', { resourceVersion: '0' });
    assert.equal(base.calls.get, gets + 1, 'the store answered');
    await clock.advance(500);
    await ready(cache);
    const listed = await cache.list('/pods/', { resourceVersion: rvOf(written) });
    assert.deepEqual(listed.items.map(nameOf), ['a', 'b'], 'the re-list has what was written during the break');
    assert.equal(cache.cacheStats()['/pods/']?.objects, 2);
    // A watch ended by an ERROR (history compacted): logged once, listed again after the pause.
    await base.breakWatches(new OrchError(StoreErrorCode.rvTooOld, 'gone', 'resourceVersion 3 is too old', { subject: 'resourceVersion' }));
    await waitFor('the ended watch logged', () => logs.some((l) => l.includes('the watch ended: resourceVersion 3 is too old')));
    await clock.advance(2_000);
    await ready(cache);
    assert.equal(logs.filter((l) => l.includes('ready again')).length, 2, `both caches: ${logs.join(' | ')}`);
    await cache.close();
  });
});
