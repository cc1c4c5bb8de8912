import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { checkPayloadPath, DATA_DIR_NAME, timestampedPrefix, writeAtomically, type AtomicWriterCache, type FileProjection } from './atomic-writer.js';
import { assertRejectsWith, makeTempDir, removeTempDir } from './fixtures.js';
import { VOLUME_INVALID } from './types.js';

function file(text: string, mode = 0o644): FileProjection {
  return { data: Buffer.from(text), mode };
}

function payloadOf(entries: Record<string, string | FileProjection>): Map<string, FileProjection> {
  return new Map(Object.entries(entries).map(([k, v]) => [k, typeof v === 'string' ? file(v) : v]));
}

/** Hidden payload directories (`..<timestamp>.xxxxxx`) in `dir`. */
async function payloadDirs(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith('..') && n !== DATA_DIR_NAME).sort();
}

void describe('atomic writer', () => {
  let tmp = '';
  let n = 0;
  /** A fresh volume directory. */
  const volume = async (): Promise<string> => {
    const dir = join(tmp, `v${++n}`);
    await mkdir(dir);
    return dir;
  };
  const clock = new FakeClock(Date.UTC(2024, 4, 1, 12, 0, 0));

  before(async () => {
    tmp = await makeTempDir('atomic');
  });
  after(async () => {
    await removeTempDir(tmp);
  });

  void it('names payload directories by UTC time, as upstream', () => {
    assert.equal(timestampedPrefix(Date.UTC(2006, 0, 2, 15, 4, 5)), '..2006_01_02_15_04_05.');
  });

  void it('first write: a timestamped directory, ..data to it, top-level links through ..data', async () => {
    const dir = await volume();
    const wrote = await writeAtomically({ dir, payload: payloadOf({ a: 'A', 'sub/dir/b': 'B' }), clock, subject: 'volume "v"' });
    assert.equal(wrote, true);
    const [ts] = await payloadDirs(dir);
    assert.match(ts ?? '', /^\.\.2024_05_01_12_00_00\.[A-Za-z0-9]{6}$/);
    assert.equal(await readlink(join(dir, DATA_DIR_NAME)), ts);
    assert.equal(await readlink(join(dir, 'a')), join(DATA_DIR_NAME, 'a'));
    assert.equal(await readlink(join(dir, 'sub')), join(DATA_DIR_NAME, 'sub')); // top-level entries only
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A');
    assert.equal(await readFile(join(dir, 'sub/dir/b'), 'utf8'), 'B');
    assert.equal((await stat(join(dir, ts ?? ''))).mode & 0o777, 0o755);
    assert.deepEqual((await readdir(dir)).sort(), [ts, DATA_DIR_NAME, 'a', 'sub'].sort());
  });

  void it('does not rewrite an unchanged payload', async () => {
    const dir = await volume();
    await writeAtomically({ dir, payload: payloadOf({ a: 'A', b: 'B' }), clock, subject: 'v' });
    const before = await payloadDirs(dir);
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ b: 'B', a: 'A' }), clock, subject: 'v' }), false);
    assert.deepEqual(await payloadDirs(dir), before);
  });

  void it('update: swaps ..data to a new directory, removes the old one and the links of removed keys', async () => {
    const dir = await volume();
    await writeAtomically({ dir, payload: payloadOf({ a: 'A', gone: 'G', 'nested/x': 'X' }), clock, subject: 'v' });
    const [first] = await payloadDirs(dir);
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ a: 'A2', added: 'N' }), clock, subject: 'v' }), true);
    const dirs = await payloadDirs(dir);
    assert.equal(dirs.length, 1);
    assert.notEqual(dirs[0], first);
    assert.equal(await readlink(join(dir, DATA_DIR_NAME)), dirs[0]);
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A2');
    assert.equal(await readFile(join(dir, 'added'), 'utf8'), 'N');
    await assert.rejects(lstat(join(dir, 'gone')), { code: 'ENOENT' });
    await assert.rejects(lstat(join(dir, 'nested')), { code: 'ENOENT' });
    assert.equal((await readdir(dir)).includes('..data_tmp'), false);
  });

  void it('removing every key leaves an empty payload', async () => {
    const dir = await volume();
    await writeAtomically({ dir, payload: payloadOf({ a: 'A' }), clock, subject: 'v' });
    assert.equal(await writeAtomically({ dir, payload: new Map(), clock, subject: 'v' }), true);
    assert.deepEqual((await readdir(dir)).filter((e) => !e.startsWith('..')), []);
    assert.deepEqual(await readdir(join(dir, DATA_DIR_NAME)), []);
  });

  void it('sets each file mode exactly (the umask does not narrow it) and rewrites on a mode change', async () => {
    const dir = await volume();
    await writeAtomically({ dir, payload: payloadOf({ open: file('o', 0o777), secret: file('s', 0o400), dflt: 'd' }), clock, subject: 'v' });
    assert.equal((await stat(join(dir, 'open'))).mode & 0o777, 0o777);
    assert.equal((await stat(join(dir, 'secret'))).mode & 0o777, 0o400);
    assert.equal((await stat(join(dir, 'dflt'))).mode & 0o777, 0o644);
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ open: file('o', 0o777), secret: file('s', 0o440), dflt: 'd' }), clock, subject: 'v' }), true);
    assert.equal((await stat(join(dir, 'secret'))).mode & 0o777, 0o440);
  });

  void it('rewrites when ..data dangles, and removes payload directories a crash left', async () => {
    const dir = await volume();
    await writeAtomically({ dir, payload: payloadOf({ a: 'A' }), clock, subject: 'v' });
    const [ts] = await payloadDirs(dir);
    await rm(join(dir, ts ?? ''), { recursive: true });
    await mkdir(join(dir, '..2000_01_01_00_00_00.crash1'));
    await writeFile(join(dir, '..2000_01_01_00_00_00.crash1', 'a'), 'old');
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ a: 'A' }), clock, subject: 'v' }), true);
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A');
    assert.equal((await payloadDirs(dir)).length, 1);
  });

  void it('with a cache: an unchanged payload is confirmed without a write; a file changed on disk is noticed and written again', async () => {
    const dir = await volume();
    const cache: AtomicWriterCache = new Map();
    const payload = payloadOf({ a: 'A', 'sub/b': file('B', 0o600) });
    assert.equal(await writeAtomically({ dir, payload, clock, subject: 'v', cache }), true);
    assert.equal(cache.get(dir)?.dataDir, await readlink(join(dir, DATA_DIR_NAME)));
    const first = await payloadDirs(dir);
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ 'sub/b': file('B', 0o600), a: 'A' }), clock, subject: 'v', cache }), false);
    assert.deepEqual(await payloadDirs(dir), first);
    // The same size, other bytes: only the ctime tells.
    await writeFile(join(dir, 'a'), 'X');
    assert.equal(await writeAtomically({ dir, payload, clock, subject: 'v', cache }), true);
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A');
    await chmod(join(dir, 'sub/b'), 0o644);
    assert.equal(await writeAtomically({ dir, payload, clock, subject: 'v', cache }), true);
    assert.equal((await stat(join(dir, 'sub/b'))).mode & 0o777, 0o600);
    await rm(join(dir, 'a'));
    assert.equal(await writeAtomically({ dir, payload, clock, subject: 'v', cache }), false); // the payload is intact: only the link is made again
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A');
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ a: 'A2' }), clock, subject: 'v', cache }), true);
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A2');
    assert.equal(cache.get(dir)?.files.size, 1);
  });

  void it('with a cache: a volume written before (e.g. by an earlier agent) is read back once, then recorded', async () => {
    const dir = await volume();
    await writeAtomically({ dir, payload: payloadOf({ a: 'A' }), clock, subject: 'v' });
    const cache: AtomicWriterCache = new Map();
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ a: 'A' }), clock, subject: 'v', cache }), false);
    assert.equal(cache.get(dir)?.dataDir, await readlink(join(dir, DATA_DIR_NAME)));
    const [ts] = await payloadDirs(dir);
    await rm(join(dir, ts ?? ''), { recursive: true });
    assert.equal(await writeAtomically({ dir, payload: payloadOf({ a: 'A' }), clock, subject: 'v', cache }), true);
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A');
  });

  void it('validates paths before writing anything', async () => {
    const dir = await volume();
    const bad: [string, string][] = [
      ['', 'must not be empty'],
      ['/etc/passwd', 'must be relative'],
      ['a/../../b', "must not contain '..'"],
      ['..data', "must not start with '..'"],
      ['..x/y', "must not start with '..'"],
      ['x'.repeat(256), 'longer than 255'],
      [`${'a/'.repeat(2100)}b`, 'longer than 4096'],
    ];
    for (const [path, why] of bad) {
      await assertRejectsWith(writeAtomically({ dir, payload: payloadOf({ [path]: 'x' }), clock, subject: 'volume "v"' }), VOLUME_INVALID, ['volume "v"', why]);
    }
    await assertRejectsWith(writeAtomically({ dir, payload: payloadOf({ a: 'x', 'a/b': 'y' }), clock, subject: 'v' }), VOLUME_INVALID, ['both a file and a directory']);
    assert.deepEqual(await readdir(dir), []);
    assert.equal(checkPayloadPath('a//b/./c', 's'), 'a/b/c');
    assert.equal(checkPayloadPath('a..b/..c', 's'), 'a..b/..c'); // only a leading '..' is reserved
  });
});
