import assert from 'node:assert/strict';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { OrchError } from '../../src/api/errors.js';
import { RecordingLog, flockState, makeTempDir, type TempDir } from '../../src/agent/startup/fixtures.js';
import { KERNEL_TUNABLES, runStartupChecks, type StartupChecksOptions, type StartupHost } from '../../src/agent/startup/index.js';

const FAKE_PID = 4242;

let dir: TempDir;
let host: StartupHost;
let lockFile: string;

beforeEach(async () => {
  dir = await makeTempDir();
  lockFile = join(dir.path, 'nodeagent.lock');
  await dir.write('swaps', 'Filename\tType\tSize\tUsed\tPriority\n');
  for (const { key, expected } of KERNEL_TUNABLES) await dir.write(join('sys', key), `${expected}\n`);
  await dir.write('sys/vm/overcommit_memory', '0\n');
  await dir.write('self/oom_score_adj', '0\n');
  await dir.write(`proc/${FAKE_PID}/limits`, 'Max open files            1024                 1048576              files     \n');
  // A prlimit that succeeds without doing anything (the fake limits file stays as it is).
  const prlimit = await dir.write('bin/prlimit', '#!/bin/sh\nexit 0\n');
  await chmod(prlimit, 0o755);
  host = {
    procSwapsPath: join(dir.path, 'swaps'),
    procSysRoot: join(dir.path, 'sys'),
    procSelf: join(dir.path, 'self'),
    procRoot: join(dir.path, 'proc'),
    pid: FAKE_PID,
    prlimitCommand: prlimit,
  };
});
afterEach(async () => {
  await dir.remove();
});

function options(log: RecordingLog, overrides: Partial<StartupChecksOptions> = {}): StartupChecksOptions {
  return {
    lockFile,
    exitOnLockContention: false,
    onLockContention: () => {
      assert.fail('no contention expected');
    },
    failSwapOn: true,
    protectKernelDefaults: false,
    oomScoreAdj: -999,
    maxOpenFiles: 1_000_000,
    log,
    host,
    ...overrides,
  };
}

void describe('runStartupChecks', () => {
  void test('runs the checks in the kubelet order: lock file, swap, tunables, OOM score, open files', async () => {
    const log = new RecordingLog();
    const result = await runStartupChecks(options(log));
    try {
      assert.deepEqual(log.infos, [
        `lock file ${lockFile}: acquiring (this waits while another process holds the lock)`,
        `lock file ${lockFile} acquired`,
        'kernel tunable vm.overcommit_memory set to 1 (was 0)',
        'oom_score_adj set to -999',
        'open-file limit set to 1000000 (was soft 1024, hard 1048576)',
      ]);
      assert.deepEqual(log.warnings, []);
      assert.deepEqual(result.kernelTunables.changed, [{ name: 'vm.overcommit_memory', from: '0', to: 1 }]);
      assert.deepEqual(result.oomScoreAdj, { applied: true, current: -999 });
      assert.equal(result.openFiles.outcome, 'raised');
      assert.equal(await readFile(join(dir.path, 'self/oom_score_adj'), 'utf8'), '-999\n');
      assert.ok(result.lock !== undefined);
      assert.equal((await flockState(lockFile)).holders.length, 1);
    } finally {
      await result.lock?.release();
    }
  });

  void test('a failing check releases the lock it took and stops there', async () => {
    await dir.write('swaps', 'Filename\tType\tSize\tUsed\tPriority\n/dev/sdb1 partition 1024 0 -2\n');
    const log = new RecordingLog();
    await assert.rejects(runStartupChecks(options(log)), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_SWAP_ON');
      return true;
    });
    assert.deepEqual(await flockState(lockFile), { holders: [], waiters: [] });
    // Nothing after the swap check ran.
    assert.equal(await readFile(join(dir.path, 'sys/vm/overcommit_memory'), 'utf8'), '0\n');
    assert.equal(await readFile(join(dir.path, 'self/oom_score_adj'), 'utf8'), '0\n');
  });

  void test('without a lock file there is no lock; exitOnLockContention then is invalid', async () => {
    const result = await runStartupChecks(options(new RecordingLog(), { lockFile: '' }));
    assert.equal(result.lock, undefined);
    await assert.rejects(runStartupChecks(options(new RecordingLog(), { lockFile: undefined, exitOnLockContention: true })), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_LOCK_FILE_REQUIRED');
      assert.equal(err.category, 'invalid');
      assert.equal(err.subject, '--exit-on-lock-contention');
      return true;
    });
  });
});
