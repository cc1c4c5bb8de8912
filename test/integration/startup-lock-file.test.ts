import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { waitFor } from '../helpers/wait.js';
import { OrchError } from '../../src/api/errors.js';
import { RecordingLog, flockState, makeTempDir, type TempDir } from '../../src/agent/startup/fixtures.js';
import { acquireLockFile, type AcquireLockFileOptions, type LockFileHandle } from '../../src/agent/startup/index.js';

let dir: TempDir;
let lockPath: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  dir = await makeTempDir();
  lockPath = join(dir.path, 'run', 'nodeagent.lock');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await dir.remove();
});

/** Acquires in this process and releases at the end of the test; `handle()` is set once held. */
function acquire(overrides: Partial<AcquireLockFileOptions> = {}): {
  readonly done: Promise<LockFileHandle>;
  handle(): LockFileHandle | undefined;
  readonly contentions: () => number;
  readonly log: RecordingLog;
} {
  const log = new RecordingLog();
  let contentions = 0;
  let handle: LockFileHandle | undefined;
  const done = acquireLockFile({
    path: lockPath,
    exitOnLockContention: false,
    onContention: () => {
      contentions += 1;
    },
    log,
    ...overrides,
  }).then((h) => {
    handle = h;
    cleanups.push(() => h.release());
    return h;
  });
  return { done, handle: () => handle, contentions: () => contentions, log };
}

/** Waits until the kernel shows `count` processes blocked on the lock file. */
async function waitForWaiters(count: number): Promise<void> {
  await waitFor(`${count} blocked flock waiter(s) on ${lockPath}`, async () => (await flockState(lockPath)).waiters.length === count);
}

type Holder = ChildProcessByStdio<null, Readable, Readable>;

/** Another node process that takes the lock with this module, prints "held", and stays (or not). */
function spawnHolder(stay: boolean): { readonly child: Holder; readonly output: () => string } {
  const script = `
const { acquireLockFile } = await import(process.env.LOCK_MODULE);
await acquireLockFile({
  path: process.env.LOCK_PATH, exitOnLockContention: false, onContention() {},
  log: { info() {}, warn(message) { console.error(message); } },
});
console.log('held');
${stay ? 'setInterval(() => {}, 1 << 30);' : ''}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, LOCK_MODULE: new URL('../../src/agent/startup/lock-file.js', import.meta.url).href, LOCK_PATH: lockPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, output: () => output };
}

void describe('acquireLockFile', () => {
  void test('creates the file and its directory, holds the lock, and releases it idempotently', async () => {
    const a = acquire();
    const handle = await a.done;
    assert.equal((await flockState(lockPath)).holders.length, 1);
    const first = handle.release();
    assert.equal(handle.release(), first);
    await first;
    assert.deepEqual(await flockState(lockPath), { holders: [], waiters: [] });
    assert.deepEqual(a.log.warnings, []);
    assert.deepEqual(a.log.infos, [
      `lock file ${lockPath}: acquiring (this waits while another process holds the lock)`,
      `lock file ${lockPath} acquired`,
      `lock file ${lockPath} released`,
    ]);
  });

  void test('a second acquirer blocks until the first releases', async () => {
    const first = acquire();
    const handle = await first.done;
    const second = acquire();
    await waitForWaiters(1);
    assert.equal(second.handle(), undefined, 'the second acquirer must wait while the first holds the lock');
    await handle.release();
    await waitFor('the second acquirer to get the lock', () => second.handle());
    assert.equal(first.contentions(), 0, 'without exitOnLockContention nobody is told');
  });

  void test('with exitOnLockContention, the holder is told when another process starts waiting', async () => {
    const first = acquire({ exitOnLockContention: true });
    const handle = await first.done;
    const second = acquire();
    await waitFor('onContention of the holder', () => first.contentions() === 1);
    await waitForWaiters(1);
    assert.match(first.log.warnings[0]!, /another process signalled that it wants the lock/);
    // The composition root would exit; releasing has the same effect on the lock.
    await handle.release();
    await waitFor('the contender to get the lock', () => second.handle());
    assert.equal(first.contentions(), 1);
  });

  void test('a touch by another program counts as contention, once; our own acquisition and release do not', async () => {
    const quiet = acquire({ exitOnLockContention: true });
    await (await quiet.done).release();
    assert.equal(quiet.contentions(), 0);

    const touched = acquire({ exitOnLockContention: true });
    await touched.done;
    const later = new Date(Date.now() + 60_000);
    await utimes(lockPath, later, later);
    await waitFor('onContention after a touch', () => touched.contentions() === 1);
    await utimes(lockPath, new Date(), new Date());
    await (await touched.done).release();
    assert.equal(touched.contentions(), 1);
  });

  void test('a holder killed with SIGKILL releases the lock', async () => {
    const holder = spawnHolder(true);
    await waitFor('the holder process to take the lock', () => holder.output().includes('held'));
    const waiting = acquire();
    await waitForWaiters(1);
    assert.equal(waiting.handle(), undefined);
    holder.child.kill('SIGKILL');
    await waitFor('the lock after the holder was killed', () => waiting.handle());
  });

  void test('the held lock does not keep the process alive, and is released when it exits', async () => {
    const holder = spawnHolder(false);
    const exit = await waitFor('the holder process to exit on its own', () => holder.child.exitCode ?? undefined);
    assert.equal(exit, 0, holder.output());
    assert.match(holder.output(), /held/);
    const after = acquire();
    await waitFor('the lock after the holder exited', () => after.handle());
  });

  void test('losing the lock (the flock helper killed) counts as contention', async () => {
    const first = acquire({ exitOnLockContention: true });
    await first.done;
    const [helper] = (await flockState(lockPath)).holders;
    assert.ok(helper !== undefined, 'the flock helper holds the lock');
    process.kill(helper, 'SIGKILL');
    await waitFor('onContention after the lock was lost', () => first.contentions() === 1);
    assert.match(first.log.warnings[0]!, /the flock helper exited \(SIGKILL\) and the lock is no longer held/);
    const second = acquire();
    await waitFor('the lock, free again', () => second.handle());
  });

  void test('a missing flock command is an error naming it', async () => {
    await assert.rejects(acquire({ flockCommand: 'nodeagent-no-such-flock' }).done, (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_LOCK_FILE');
      assert.equal(err.category, 'unavailable');
      assert.equal(err.subject, '--lock-file');
      assert.match(err.message, /the command 'nodeagent-no-such-flock' was not found/);
      return true;
    });
  });

  void test('a helper that exits before acquiring is an error with its exit status', async () => {
    await assert.rejects(acquire({ flockCommand: 'false' }).done, (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_LOCK_FILE');
      assert.match(err.message, /the lock helper 'false' exited \(code 1\) before acquiring the lock/);
      return true;
    });
  });

  void test('a lock file that cannot be created is an error', async () => {
    // A regular file where the parent directory should be.
    await dir.write('run', 'not a directory');
    await assert.rejects(acquire().done, (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_LOCK_FILE');
      assert.match(err.message, /cannot create the lock file/);
      return true;
    });
  });
});
