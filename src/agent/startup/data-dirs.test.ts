import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { DATA_DIRS, ensureDataDirs } from './data-dirs.js';

void describe('data directories', () => {
  void it('makes the root directory and its subdirectories, and leaves existing ones alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'data-dirs-'));
    try {
      const root = join(dir, 'fresh', 'root');
      await ensureDataDirs(root);
      for (const d of ['', ...DATA_DIRS]) assert.ok((await stat(join(root, d))).isDirectory(), d);
      await writeFile(join(root, 'pods', 'kept'), 'x');
      await ensureDataDirs(root);
      assert.ok((await stat(join(root, 'pods', 'kept'))).isFile());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('names the root directory it cannot make', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'data-dirs-'));
    try {
      await writeFile(join(dir, 'file'), 'x');
      await assert.rejects(ensureDataDirs(join(dir, 'file', 'root')), (err: unknown) => {
        assert.ok(isOrchError(err));
        assert.equal(err.code, 'STARTUP_DATA_DIRS');
        assert.match(err.message, /file\/root/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
