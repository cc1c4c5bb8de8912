import assert from 'node:assert/strict';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { OrchError } from '../../src/api/errors.js';
import { RecordingLog, makeTempDir, type TempDir } from '../../src/agent/startup/fixtures.js';
import { raiseOpenFileLimit, readOpenFileLimits, type OpenFileLimits } from '../../src/agent/startup/index.js';

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await dir.remove();
});

async function ownLimits(): Promise<OpenFileLimits> {
  const limits = await readOpenFileLimits(`/proc/${process.pid}/limits`);
  if (typeof limits === 'string') assert.fail(limits);
  return limits;
}

const FAKE_PID = 4242;

/** A fake /proc/<pid>/limits, as the kernel formats it. */
async function fakeLimits(soft: number, hard: number): Promise<string> {
  await dir.write(
    `proc/${FAKE_PID}/limits`,
    'Limit                     Soft Limit           Hard Limit           Units     \n' +
      'Max processes             63704                63704                processes \n' +
      `Max open files            ${soft}                 ${hard}                 files     \n` +
      'Max locked memory         8388608              8388608              bytes     \n',
  );
  return join(dir.path, 'proc');
}

/**
 * A stand-in for prlimit that behaves like the real one without CAP_SYS_RESOURCE: it refuses
 * `--nofile=N:N`, accepts `--nofile=S:` (soft only) and updates the fake limits file. Every call's
 * arguments are appended to `<script>.calls`.
 */
async function fakePrlimit(hard: number): Promise<{ command: string; calls: () => Promise<string[]> }> {
  const limitsPath = join(dir.path, `proc/${FAKE_PID}/limits`);
  const command = await dir.write(
    'bin/prlimit',
    `#!/bin/sh
echo "$*" >> "$0.calls"
case "$3" in
  --nofile=*:)
    soft=\${3#--nofile=}; soft=\${soft%:}
    printf 'Max open files            %s                 ${hard}                 files     \\n' "$soft" > '${limitsPath}'
    exit 0 ;;
  *)
    echo "prlimit: failed to set the NOFILE resource limit: Operation not permitted" >&2
    exit 1 ;;
esac
`,
  );
  await chmod(command, 0o755);
  const calls = async (): Promise<string[]> => (await readFile(`${command}.calls`, 'utf8')).trim().split('\n');
  return { command, calls };
}

void describe('raiseOpenFileLimit', () => {
  void test('sets both limits of this process with the real prlimit (value at the current hard limit)', async () => {
    const before = await ownLimits();
    const log = new RecordingLog();
    const result = await raiseOpenFileLimit({ maxOpenFiles: before.hard, log });
    assert.deepEqual(log.warnings, [], 'the real prlimit (util-linux) is required for this test');
    assert.deepEqual(result, { outcome: 'raised', limits: { soft: before.hard, hard: before.hard } });
    assert.deepEqual(await ownLimits(), { soft: before.hard, hard: before.hard });
    assert.match(log.infos[0]!, new RegExp(`open-file limit set to ${before.hard} \\(was soft ${before.soft}, hard ${before.hard}\\)`));
  });

  void test('a missing prlimit command is a warning naming it, with the limits that stay', async () => {
    const before = await ownLimits();
    const log = new RecordingLog();
    const result = await raiseOpenFileLimit({ maxOpenFiles: 1_000_000, prlimitCommand: 'nodeagent-no-such-prlimit', log });
    assert.deepEqual(result, { outcome: 'unchanged', limits: before });
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /the command 'nodeagent-no-such-prlimit' was not found/);
    assert.match(log.warnings[0]!, /util-linux/);
    assert.match(log.warnings[0]!, new RegExp(`the limit stays soft ${before.soft}, hard ${before.hard}`));
  });

  void test('when the hard limit cannot be raised (EPERM), raises the soft limit to the hard one and warns', async () => {
    const procRoot = await fakeLimits(1024, 4096);
    const prlimit = await fakePrlimit(4096);
    const log = new RecordingLog();
    const result = await raiseOpenFileLimit({ maxOpenFiles: 1_000_000, pid: FAKE_PID, prlimitCommand: prlimit.command, procRoot, log });
    assert.deepEqual(result, { outcome: 'soft-only', limits: { soft: 4096, hard: 4096 } });
    assert.deepEqual(await prlimit.calls(), [`--pid ${FAKE_PID} --nofile=1000000:1000000`, `--pid ${FAKE_PID} --nofile=4096:`]);
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /cannot raise the hard open-file limit to 1000000 .*Operation not permitted/);
    assert.match(log.warnings[0]!, /CAP_SYS_RESOURCE/);
    assert.match(log.warnings[0]!, /soft limit was raised to 4096/);
  });

  void test('a failure that no retry can fix (value within the hard limit) is one warning', async () => {
    const procRoot = await fakeLimits(1024, 4096);
    const prlimit = await fakePrlimit(4096);
    const log = new RecordingLog();
    const result = await raiseOpenFileLimit({ maxOpenFiles: 2048, pid: FAKE_PID, prlimitCommand: prlimit.command, procRoot, log });
    assert.deepEqual(result, { outcome: 'unchanged', limits: { soft: 1024, hard: 4096 } });
    assert.deepEqual(await prlimit.calls(), [`--pid ${FAKE_PID} --nofile=2048:2048`]);
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /cannot set the open-file limit to 2048 .*Operation not permitted.*stays soft 1024, hard 4096/);
  });

  void test('rejects a negative or fractional value; 0 leaves the limits alone', async () => {
    for (const maxOpenFiles of [-1, 1.5, Number.NaN]) {
      await assert.rejects(raiseOpenFileLimit({ maxOpenFiles, prlimitCommand: 'nodeagent-no-such-prlimit', log: new RecordingLog() }), (err: unknown) => {
        assert.ok(err instanceof OrchError);
        assert.equal(err.code, 'STARTUP_MAX_OPEN_FILES_INVALID');
        assert.equal(err.category, 'invalid');
        assert.equal(err.subject, '--max-open-files');
        return true;
      });
    }
    const log = new RecordingLog();
    const result = await raiseOpenFileLimit({ maxOpenFiles: 0, prlimitCommand: 'nodeagent-no-such-prlimit', log });
    assert.equal(result.outcome, 'unchanged');
    assert.deepEqual(log.warnings, []);
  });
});

void describe('readOpenFileLimits', () => {
  void test('reads numbers and unlimited, and describes a missing line or file', async () => {
    await dir.write('a', 'Max open files            unlimited            unlimited            files     \n');
    assert.deepEqual(await readOpenFileLimits(join(dir.path, 'a')), { soft: Infinity, hard: Infinity });
    await dir.write('b', 'Max processes 1 1 processes\n');
    const noLine = await readOpenFileLimits(join(dir.path, 'b'));
    assert.ok(typeof noLine === 'string');
    assert.match(noLine, /no "Max open files" line/);
    const noFile = await readOpenFileLimits(join(dir.path, 'c'));
    assert.ok(typeof noFile === 'string');
    assert.match(noFile, /cannot read .*ENOENT/);
  });
});
