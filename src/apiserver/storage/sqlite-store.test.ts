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
