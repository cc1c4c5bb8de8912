/**
 * The SQLite store: the shared conformance suite, plus what only a file-backed store has to
 * prove: the revision and the history survive a reopen, retention compaction, and one owner per
 * file (that acknowledged writes survive kill -9 is test/integration/store-sqlite-crash.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isGone, isUnavailable } from '../../api/errors.js';
import { openSqliteStore, type ManagedStore, type SqliteStoreOptions, type WatchEvent } from './index.js';
import { runStoreConformance } from './conformance.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { syncedTmpdir } from '../../../test/helpers/tempdir.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(syncedTmpdir(), 'orch-sqlite-store-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const testOptions = { bookmarkIntervalMs: 100, ttlSweepIntervalMs: 100, compactionIntervalMs: 3_600_000 };

runStoreConformance('sqlite', async () => {
  const dir = tempDir();
  const store = await openSqliteStore({ dataDir: dir, ...testOptions });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

async function withSqlite(options: SqliteStoreOptions, body: (store: ManagedStore) => Promise<void>): Promise<void> {
  const store = await openSqliteStore(options);
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

void describe('sqlite store on disk', () => {
  void it('keeps the revision and the change history across a reopen', async () => {
    const dir = tempDir();
    let firstRv = '';
    let lastRv = '';
    await withSqlite({ dataDir: dir, ...testOptions }, async (store) => {
      await store.create('/things/ns/pre', { metadata: { name: 'pre' } });
      firstRv = await store.currentRevision();
      await store.create('/things/ns/a', { metadata: { name: 'a' } });
      await store.create('/things/ns/b', { metadata: { name: 'b' } });
      await store.delete('/things/ns/a');
      lastRv = await store.currentRevision();
    });
    await withSqlite({ dataDir: dir, ...testOptions }, async (store) => {
      assert.equal(await store.currentRevision(), lastRv);
      const events: WatchEvent[] = [];
      const watch = await store.watch('/things/ns/', { resourceVersion: firstRv, onEvent: (e) => events.push(e) });
      await waitFor('the replayed history', () => events.length === 3);
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED', 'DELETED']);
      await watch.close();
      const c = await store.create('/things/ns/c', { metadata: { name: 'c' } });
      assert.equal((c.metadata as { resourceVersion: string }).resourceVersion, String(Number(lastRv) + 1));
    });
  });

  void it('replays a resumed watch from the recent changes in memory (skipping what its index rules out), and from the change log when it starts before them', async () => {
    await withSqlite({ dataDir: tempDir(), ...testOptions, recentChanges: 3 }, async (store) => {
      const start = Number(await store.currentRevision());
      await store.create('/things/ns/a', { metadata: { name: 'a' }, node: 'n1' });
      await store.create('/things/ns/b', { metadata: { name: 'b' }, node: 'n2' });
      await store.update('/things/ns/a', {}, (o) => ({ ...o, node: 'n2' }));
      await store.delete('/things/ns/b');
      await store.create('/things/ns/c', { metadata: { name: 'c' }, node: 'n1' });
      const index = { name: 'node', value: 'n1', of: (o: Record<string, unknown>) => String(o.node) };
      const resume = async (after: number, withIndex: boolean): Promise<string[]> => {
        const events: WatchEvent[] = [];
        const watch = await store.watch('/things/', { resourceVersion: String(after), onEvent: (e) => events.push(e), ...(withIndex ? { index } : {}) });
        // A change after the replay marks its end.
        await store.update('/things/ns/c', {}, (o) => ({ ...o, seen: after }));
        await waitFor('the replay and the live change', () => events.some((e) => e.type === 'MODIFIED' && (e.object.metadata as { name: string }).name === 'c'));
        await watch.close();
        await store.update('/things/ns/c', {}, (o) => ({ ...o, seen: undefined }));
        return events.slice(0, -1).map((e) => (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED' ? `${e.type} ${(e.object.metadata as { name: string }).name}` : e.type));
      };
      // The last 3 changes are in memory: a moved away from n1 concerns n1's watcher, b's deletion does not.
      const fromMemory = start + 2;
      assert.deepEqual(await resume(fromMemory, false), ['MODIFIED a', 'DELETED b', 'ADDED c']);
      // Each resume wrote c twice: a's change is no longer in memory.
      await store.create('/things/ns/d', { metadata: { name: 'd' }, node: 'n2' });
      await store.create('/things/ns/e', { metadata: { name: 'e' }, node: 'n1' });
      const now = Number(await store.currentRevision());
      assert.deepEqual(await resume(now - 2, true), ['ADDED e']);
      // From before the recent changes: the change log, every change of the range.
      assert.deepEqual(await resume(fromMemory, true), [
        'MODIFIED a', 'DELETED b', 'ADDED c', 'MODIFIED c', 'MODIFIED c', 'ADDED d', 'ADDED e', 'MODIFIED c', 'MODIFIED c',
      ]);
    });
  });

  void it('compacts the history beyond the retained revisions and age', async () => {
    const dir = tempDir();
    await withSqlite({ dataDir: dir, ...testOptions, historyRevisions: 5, historyMs: 0, compactionIntervalMs: 20 }, async (store) => {
      for (let i = 0; i < 20; i++) await store.create(`/things/ns/o${i}`, { metadata: { name: `o${i}` } });
      const current = Number(await store.currentRevision());
      await waitFor('the compaction of old revisions', async () => {
        try {
          const watch = await store.watch('/things/ns/', { resourceVersion: '2', onEvent: () => undefined });
          await watch.close();
          return false;
        } catch (err) {
          if (isGone(err)) return true;
          throw err;
        }
      });
      const recent = await store.watch('/things/ns/', { resourceVersion: String(current - 5), onEvent: () => undefined });
      await recent.close();
    });
  });

  void it('lets one process own the file at a time', async () => {
    const dir = tempDir();
    await withSqlite({ dataDir: dir, ...testOptions }, async (store) => {
      await store.create('/things/ns/a', { metadata: { name: 'a' } });
      await assert.rejects(openSqliteStore({ dataDir: dir }), (err: unknown) => isUnavailable(err));
    });
  });
});
