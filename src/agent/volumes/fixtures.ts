/**
 * Test helpers of the volumes module (imported by its tests only): a temporary root directory,
 * and a root check for the tests that mount (the logger is logging/testing.ts's FakeLogger).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { OrchError } from '../../api/errors.js';
import { isAtOrBelow, readMountInfo } from './mountinfo.js';

const execFileAsync = promisify(execFile);

/** A fresh temporary directory (its real path, so it compares with mountinfo). */
export async function makeTempDir(prefix: string): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), `${prefix}-`)));
}

/** Unmounts (lazily) whatever is still mounted below `dir`, then removes it. For after hooks. */
export async function removeTempDir(dir: string): Promise<void> {
  const left = (await readMountInfo()).filter((m) => isAtOrBelow(m.mountPoint, dir)).reverse();
  for (const m of left) await execFileAsync('umount', ['-l', m.mountPoint]);
  await rm(dir, { recursive: true, force: true });
}

/** Fails (never skips) when the test cannot mount. */
export function requireRoot(what: string): void {
  assert.equal(process.getuid?.(), 0, `${what} must run as root (it mounts tmpfs and bind mounts)`);
}

/** Asserts that `action` rejects with an OrchError of `code` whose message contains every one of `includes`. */
export async function assertRejectsWith(action: Promise<unknown>, code: string, includes: readonly string[] = []): Promise<void> {
  await assert.rejects(action, (err: unknown) => {
    assert.ok(err instanceof OrchError, `expected an OrchError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const text of includes) assert.ok(err.message.includes(text), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(text)}`);
    return true;
  });
}

/** This process's umask, read from /proc (process.umask() without an argument is deprecated). */
export async function currentUmask(): Promise<number> {
  const match = /^Umask:\s*([0-7]+)$/m.exec(await readFile('/proc/self/status', 'utf8'));
  assert.ok(match?.[1] !== undefined, 'no Umask line in /proc/self/status');
  return parseInt(match[1], 8);
}
