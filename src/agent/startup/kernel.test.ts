import assert from 'node:assert/strict';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { OrchError, isInvalid } from '../../api/errors.js';
import { RecordingLog, asUnprivileged, makeTempDir, type TempDir } from './fixtures.js';
import { KERNEL_TUNABLES, KernelTunablesError, applyKernelTunables, applyOomScoreAdj, checkSwap, parseSwapDevices } from './kernel.js';

const SWAPS_HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir();
  // Searchable by others, for the tests that drop root's privileges.
  await chmod(dir.path, 0o755);
});
afterEach(async () => {
  await dir.remove();
});

void describe('checkSwap', () => {
  void test('passes when /proc/swaps has only its header', async () => {
    const procSwapsPath = await dir.write('swaps', SWAPS_HEADER);
    await checkSwap({ failSwapOn: true, procSwapsPath });
  });

  void test('refuses to start with swap on, naming every device and both ways out', async () => {
    const procSwapsPath = await dir.write(
      'swaps',
      `${SWAPS_HEADER}/dev/sda2                               partition\t8388604\t\t0\t\t-2\n/swap\\040file                          file\t\t1048572\t\t0\t\t-3\n`,
    );
    await assert.rejects(checkSwap({ failSwapOn: true, procSwapsPath }), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_SWAP_ON');
      assert.equal(err.category, 'invalid');
      assert.equal(err.subject, '--fail-swap-on');
      assert.match(err.message, /\/dev\/sda2, \/swap file/);
      assert.match(err.message, /failSwapOn: false/);
      assert.match(err.message, /--fail-swap-on=false/);
      assert.match(err.message, /swapoff/);
      return true;
    });
  });

  void test('does not look at swap when failSwapOn is false', async () => {
    const procSwapsPath = await dir.write('swaps', `${SWAPS_HEADER}/dev/sda2 partition 1 0 -2\n`);
    await checkSwap({ failSwapOn: false, procSwapsPath });
  });

  void test('a missing /proc/swaps means no swap', async () => {
    await checkSwap({ failSwapOn: true, procSwapsPath: join(dir.path, 'no-such-file') });
  });

  void test('an unreadable /proc/swaps is an error, not "no swap"', async () => {
    // A directory cannot be read as a file (EISDIR).
    await assert.rejects(checkSwap({ failSwapOn: true, procSwapsPath: dir.path }), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, 'STARTUP_SWAP_UNREADABLE');
      assert.equal(err.category, 'unavailable');
      return true;
    });
  });

  void test('parseSwapDevices skips the header and blank lines', () => {
    assert.deepEqual(parseSwapDevices(`${SWAPS_HEADER}\n/dev/zram0 partition 4 0 100\n\n`), ['/dev/zram0']);
    assert.deepEqual(parseSwapDevices(''), []);
  });
});

/** A fake /proc/sys with the given values (default: what the host of the kubelet would have). */
async function fakeProcSys(values: Record<string, string>): Promise<string> {
  const root = join(dir.path, 'sys');
  for (const { key } of KERNEL_TUNABLES) {
    const value = values[key];
    if (value !== undefined) await dir.write(join('sys', key), `${value}\n`);
  }
  return root;
}

const KUBELET_VALUES: Record<string, string> = Object.fromEntries(KERNEL_TUNABLES.map(({ key, expected }) => [key, String(expected)]));

void describe('applyKernelTunables', () => {
  void test('changes nothing when every tunable already has its value', async () => {
    const procSysRoot = await fakeProcSys(KUBELET_VALUES);
    const log = new RecordingLog();
    for (const protectKernelDefaults of [true, false]) {
      const summary = await applyKernelTunables({ protectKernelDefaults, procSysRoot, log });
      assert.deepEqual(summary.changed, []);
      assert.deepEqual(summary.failed, []);
      assert.equal(summary.unchanged.length, KERNEL_TUNABLES.length);
    }
    assert.deepEqual(log.warnings, []);
  });

  void test('with protectKernelDefaults, one error lists every difference with actual and expected values', async () => {
    const procSysRoot = await fakeProcSys({
      ...KUBELET_VALUES,
      'vm/overcommit_memory': '0',
      'kernel/panic': '0',
      'kernel/keys/root_maxkeys': '200',
    });
    await assert.rejects(applyKernelTunables({ protectKernelDefaults: true, procSysRoot, log: new RecordingLog() }), (err: unknown) => {
      assert.ok(err instanceof KernelTunablesError);
      assert.ok(isInvalid(err));
      assert.equal(err.code, 'STARTUP_KERNEL_TUNABLES');
      assert.equal(err.subject, '--protect-kernel-defaults');
      assert.deepEqual(
        err.differences.map(({ name, actual, expected }) => ({ name, actual, expected })),
        [
          { name: 'vm.overcommit_memory', actual: '0', expected: 1 },
          { name: 'kernel.panic', actual: '0', expected: 10 },
          { name: 'kernel.keys.root_maxkeys', actual: '200', expected: 1_000_000 },
        ],
      );
      assert.match(err.message, /3 kernel tunable\(s\) differ/);
      assert.match(err.message, /protectKernelDefaults: false/);
      assert.ok(err.message.includes('\n  - vm.overcommit_memory: actual value 0, expected value 1\n'), err.message);
      assert.ok(err.message.includes('\n  - kernel.panic: actual value 0, expected value 10\n'), err.message);
      assert.ok(err.message.endsWith('\n  - kernel.keys.root_maxkeys: actual value 200, expected value 1000000'), err.message);
      return true;
    });
    // Protecting means never writing.
    assert.equal(await readFile(join(procSysRoot, 'vm/overcommit_memory'), 'utf8'), '0\n');
  });

  void test('with protectKernelDefaults, a tunable that cannot be read is listed too', async () => {
    const { 'kernel/keys/root_maxbytes': _omitted, ...values } = KUBELET_VALUES;
    const procSysRoot = await fakeProcSys(values);
    await assert.rejects(applyKernelTunables({ protectKernelDefaults: true, procSysRoot, log: new RecordingLog() }), (err: unknown) => {
      assert.ok(err instanceof KernelTunablesError);
      assert.equal(err.differences.length, 1);
      assert.equal(err.differences[0]!.actual, undefined);
      assert.match(err.message, /\n {2}- kernel\.keys\.root_maxbytes: cannot read .*ENOENT.*; expected value 25000000$/);
      return true;
    });
  });

  void test('without protectKernelDefaults, writes every differing tunable and reports it', async () => {
    const procSysRoot = await fakeProcSys({ ...KUBELET_VALUES, 'vm/overcommit_memory': '0', 'kernel/panic': '100' });
    const log = new RecordingLog();
    const summary = await applyKernelTunables({ protectKernelDefaults: false, procSysRoot, log });
    assert.deepEqual(summary.changed, [
      { name: 'vm.overcommit_memory', from: '0', to: 1 },
      { name: 'kernel.panic', from: '100', to: 10 },
    ]);
    assert.equal(summary.unchanged.length, KERNEL_TUNABLES.length - 2);
    assert.deepEqual(summary.failed, []);
    assert.equal(await readFile(join(procSysRoot, 'vm/overcommit_memory'), 'utf8'), '1\n');
    assert.equal(await readFile(join(procSysRoot, 'kernel/panic'), 'utf8'), '10\n');
    assert.deepEqual(log.warnings, []);
    assert.equal(log.infos.length, 2);
  });

  void test('a tunable that cannot be written (read-only /proc/sys) is a warning naming it and the error', async () => {
    const procSysRoot = await fakeProcSys({ ...KUBELET_VALUES, 'vm/overcommit_memory': '0', 'kernel/panic_on_oops': '0' });
    await chmod(join(procSysRoot, 'vm/overcommit_memory'), 0o444);
    // Writable by the unprivileged user, as a writable tunable is to the agent.
    await chmod(join(procSysRoot, 'kernel/panic_on_oops'), 0o666);
    const log = new RecordingLog();
    const summary = await asUnprivileged(() => applyKernelTunables({ protectKernelDefaults: false, procSysRoot, log }));
    assert.deepEqual(summary.changed, [{ name: 'kernel.panic_on_oops', from: '0', to: 1 }]);
    assert.equal(summary.failed.length, 1);
    assert.equal(summary.failed[0]!.name, 'vm.overcommit_memory');
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /vm\.overcommit_memory is 0, expected 1, and could not be set .*EACCES/);
    assert.equal(await readFile(join(procSysRoot, 'vm/overcommit_memory'), 'utf8'), '0\n');
  });

  void test('without protectKernelDefaults, a missing tunable is a warning', async () => {
    const { 'vm/panic_on_oom': _omitted, ...values } = KUBELET_VALUES;
    const log = new RecordingLog();
    const summary = await applyKernelTunables({ protectKernelDefaults: false, procSysRoot: await fakeProcSys(values), log });
    assert.deepEqual(
      summary.failed.map((f) => f.name),
      ['vm.panic_on_oom'],
    );
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /vm\.panic_on_oom left unchecked: cannot read .*ENOENT/);
  });
});

void describe('applyOomScoreAdj', () => {
  void test('writes the value to oom_score_adj', async () => {
    const procSelf = join(dir.path, 'self');
    await dir.write('self/oom_score_adj', '0\n');
    const log = new RecordingLog();
    assert.deepEqual(await applyOomScoreAdj({ value: -999, procSelf, log }), { applied: true, current: -999 });
    assert.equal(await readFile(join(procSelf, 'oom_score_adj'), 'utf8'), '-999\n');
    assert.deepEqual(log.warnings, []);
  });

  void test('without the privilege to write, warns once naming the value and why, and continues', async () => {
    const procSelf = join(dir.path, 'self');
    const file = await dir.write('self/oom_score_adj', '0\n');
    await chmod(file, 0o444);
    const log = new RecordingLog();
    const result = await asUnprivileged(() => applyOomScoreAdj({ value: -999, procSelf, log }));
    assert.deepEqual(result, { applied: false, current: 0 });
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /cannot set oom_score_adj to -999 \(EACCES/);
    assert.match(log.warnings[0]!, /CAP_SYS_RESOURCE/);
    assert.match(log.warnings[0]!, /continues with oom_score_adj 0/);
  });

  void test('another failure (no such file) is a warning too, like the kubelet', async () => {
    const log = new RecordingLog();
    const result = await applyOomScoreAdj({ value: 100, procSelf: join(dir.path, 'missing'), log });
    assert.deepEqual(result, { applied: false, current: undefined });
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0]!, /cannot set oom_score_adj to 100 .*ENOENT/);
  });

  void test('rejects values outside [-1000, 1000] before touching anything', async () => {
    const procSelf = join(dir.path, 'self');
    await dir.write('self/oom_score_adj', '0\n');
    for (const value of [-1001, 1001, 1.5, Number.NaN]) {
      await assert.rejects(applyOomScoreAdj({ value, procSelf, log: new RecordingLog() }), (err: unknown) => {
        assert.ok(err instanceof OrchError);
        assert.equal(err.code, 'STARTUP_OOM_SCORE_ADJ_INVALID');
        assert.equal(err.category, 'invalid');
        assert.equal(err.subject, '--oom-score-adj');
        return true;
      });
    }
    for (const value of [-1000, 1000]) {
      assert.equal((await applyOomScoreAdj({ value, procSelf, log: new RecordingLog() })).applied, true);
    }
    assert.equal(await readFile(join(procSelf, 'oom_score_adj'), 'utf8'), '1000\n');
  });
});
