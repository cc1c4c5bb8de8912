/**
 * The SQLite store on disk after a crash: every write it acknowledged survives kill -9 of the
 * process that made it (a writer in a child process; the rest of the store's tests are
 * src/apiserver/storage/sqlite-store.test.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { openSqliteStore, type ManagedStore, type SqliteStoreOptions } from '../../src/apiserver/storage/index.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-sqlite-store-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const testOptions = { bookmarkIntervalMs: 100, ttlSweepIntervalMs: 100, compactionIntervalMs: 3_600_000 };

async function withSqlite(options: SqliteStoreOptions, body: (store: ManagedStore) => Promise<void>): Promise<void> {
  const store = await openSqliteStore(options);
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

/** Creates objects from 16 concurrent writers and prints each key once its create resolved. */
const WRITER = `
const [moduleUrl, dataDir] = process.argv.slice(1);
const { openSqliteStore } = await import(moduleUrl);
const store = await openSqliteStore({ dataDir });
let next = 0;
const writer = async () => {
  for (;;) {
    const n = next++;
    const key = '/things/ns/o' + n;
    await store.create(key, { metadata: { name: 'o' + n }, payload: 'x'.repeat(700) });
    process.stdout.write(key + '\\n');
  }
};
await Promise.all(Array.from({ length: 16 }, writer));
`;

void describe('sqlite store on disk', () => {
  void it('keeps every acknowledged write after kill -9', async () => {
    const dir = tempDir();
    const moduleUrl = new URL('../../src/apiserver/storage/index.js', import.meta.url).href;
    const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, moduleUrl, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => {
      resolve(signal);
    }));
    const acknowledged: string[] = [];
    const lines = createInterface({ input: child.stdout });
    const drained = new Promise((resolve) => lines.once('close', resolve));
    lines.on('line', (line) => {
      acknowledged.push(line);
      if (acknowledged.length === 2000) child.kill('SIGKILL');
    });
    assert.equal(await exited, 'SIGKILL', 'the writer was killed mid-stream');
    await drained;
    assert.ok(acknowledged.length >= 2000, `acknowledged ${acknowledged.length}`);
    await withSqlite({ dataDir: dir, ...testOptions }, async (store) => {
      for (const key of acknowledged) await store.get(key);
      const list = await store.list('/things/ns/');
      assert.ok(list.items.length >= acknowledged.length);
      assert.equal(list.resourceVersion, await store.currentRevision());
      assert.equal(Number(list.resourceVersion), list.items.length, 'one revision per create, none lost or reused');
    });
  });
});
