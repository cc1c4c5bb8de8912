/**
 * The configuration rules upstream's own validation and defaulting tests check, where the
 * agent differed: the shutdown periods, memoryThrottlingFactor, a taint's timeAdded, zero
 * reserved memory, serializeImagePulls defaulted from maxParallelImagePulls, the empty IP
 * flags, and nodeStatusReportFrequency following the file's nodeStatusUpdateFrequency only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveFeatureGates } from './feature-gates.js';
import { defaultCommandLineOptions } from './flags/table.js';
import { HEADER, problemsOf, resolveArgs, tempFiles } from './fixtures.js';
import { flagDefaults } from './resolve.js';
import { MILLISECOND, MINUTE, SECOND } from './schema.js';
import type { NodeagentConfiguration } from './types.js';
import { validateConfiguration } from './validate.js';

const base = { options: defaultCommandLineOptions(), version: 'v0.1.0', gates: resolveFeatureGates(null) };
const problems = (c: Partial<NodeagentConfiguration>): string[] =>
  validateConfiguration({ ...flagDefaults(), ...c }, base).problems.map((p) => `${p.field}: ${p.message}`);

void describe('upstream validation rules', () => {
  void it('wants each graceful shutdown period zero or at least a second', () => {
    assert.deepEqual(problems({ shutdownGracePeriod: 500 * MILLISECOND }), ['shutdownGracePeriod: must be zero or at least 1s, got 500ms']);
    assert.deepEqual(problems({ shutdownGracePeriod: 10 * SECOND, shutdownGracePeriodCriticalPods: 999 * MILLISECOND }),
      ['shutdownGracePeriodCriticalPods: must be zero or at least 1s, got 999ms']);
    assert.ok(problems({ shutdownGracePeriod: -SECOND }).includes('shutdownGracePeriod: must be zero or at least 1s, got -1s'));
    assert.deepEqual(problems({ shutdownGracePeriod: SECOND, shutdownGracePeriodCriticalPods: SECOND }), []);
    assert.deepEqual(problems({ shutdownGracePeriod: 0, shutdownGracePeriodCriticalPods: 0 }), []);
  });

  void it('wants memoryThrottlingFactor above 0 and at most 1.0 whatever the MemoryQoS gate says', () => {
    for (const factor of [0, -0.5, 1.01]) {
      assert.deepEqual(problems({ memoryThrottlingFactor: factor }), [`memoryThrottlingFactor: must be greater than 0 and at most 1.0, got ${factor}`]);
    }
    for (const factor of [0.1, 0.9, 1]) assert.deepEqual(problems({ memoryThrottlingFactor: factor }), []);
  });

  void it('refuses a registerWithTaints taint that gives timeAdded, naming the file', async () => {
    const dir = await tempFiles({
      'c.yaml': `${HEADER}registerWithTaints:\n- key: a\n  effect: NoSchedule\n  timeAdded: "2024-01-01T00:00:00Z"\n`,
      'ok.yaml': `${HEADER}registerWithTaints:\n- key: a\n  effect: NoSchedule\n`,
    });
    const found = await problemsOf(['--config=c.yaml', '--authorization-mode=AlwaysAllow', '--authentication-token-webhook=false'], { cwd: dir });
    assert.ok(found.some((p) => /^registerWithTaints\[0\]\.timeAdded: must not be set.*\(set by config file .*c\.yaml\)$/.test(p)), found.join('\n'));
    const r = await resolveArgs(['--config=ok.yaml', '--authorization-mode=AlwaysAllow', '--authentication-token-webhook=false'], { cwd: dir });
    assert.deepEqual(r.config.registerWithTaints, [{ key: 'a', value: '', effect: 'NoSchedule', timeAdded: null }]);
    assert.ok(!r.warnings.some((w) => w.includes('timeAdded')), r.warnings.join('\n'));
    // The flag's taints never have one.
    const flagged = await resolveArgs(['--register-with-taints=a=b:NoExecute']);
    assert.equal(flagged.config.registerWithTaints[0]?.timeAdded, null);
  });

  void it('refuses a zero reserved memory limit', async () => {
    const found = await problemsOf(['--reserved-memory=0:memory=0,hugepages-2Mi=0Mi']);
    assert.ok(found.some((p) => p.startsWith('reservedMemory[0].limits: memory must not be zero')), found.join('\n'));
    assert.ok(found.some((p) => p.startsWith('reservedMemory[0].limits: hugepages-2Mi must not be zero')), found.join('\n'));
    assert.deepEqual(problems({ reservedMemory: [{ numaNode: 0, limits: { memory: '1Gi' } }] }), []);
  });
});

void describe('upstream defaulting', () => {
  const API = ['--authorization-mode=AlwaysAllow', '--authentication-token-webhook=false'];

  void it('turns serializeImagePulls off when maxParallelImagePulls of 2 or more comes without it', async () => {
    const dir = await tempFiles({
      'parallel.yaml': `${HEADER}maxParallelImagePulls: 3\n`,
      'one.yaml': `${HEADER}maxParallelImagePulls: 1\n`,
      'both.yaml': `${HEADER}maxParallelImagePulls: 3\nserializeImagePulls: true\n`,
      'drop/10-parallel.conf': `${HEADER}maxParallelImagePulls: 4\n`,
    });
    const parallel = await resolveArgs(['--config=parallel.yaml', ...API], { cwd: dir });
    assert.equal(parallel.config.serializeImagePulls, false);
    assert.match(parallel.sources.get('serializeImagePulls') ?? '', /^maxParallelImagePulls \(config file .*parallel\.yaml\)$/);
    assert.equal((await resolveArgs(['--config=one.yaml', ...API], { cwd: dir })).config.serializeImagePulls, true);
    assert.equal((await resolveArgs(['--config-dir=drop', ...API], { cwd: dir })).config.serializeImagePulls, false);
    // Refused only when the user set both: in the file, or the flag over the file.
    for (const argv of [['--config=both.yaml'], ['--config=parallel.yaml', '--serialize-image-pulls=true']]) {
      const found = await problemsOf([...argv, ...API], { cwd: dir });
      assert.ok(found.some((p) => p.startsWith('maxParallelImagePulls: cannot be set when serializeImagePulls is true')), found.join('\n'));
    }
    assert.equal((await resolveArgs([])).config.serializeImagePulls, true);
  });

  void it('loads a file with kernelMemcgNotification: true (upstream\'s defaults test sets it) and a flag that sets it', async () => {
    const dir = await tempFiles({ 'memcg.yaml': `${HEADER}kernelMemcgNotification: true\n` });
    const fromFile = await resolveArgs(['--config=memcg.yaml', ...API], { cwd: dir });
    assert.equal(fromFile.config.kernelMemcgNotification, true);
    assert.equal(fromFile.warnings.filter((w) => w.startsWith('kernelMemcgNotification is accepted')).length, 1);
    assert.equal((await resolveArgs(['--kernel-memcg-notification', ...API])).config.kernelMemcgNotification, true);
  });

  void it('parses an empty --healthz-bind-address or --address, leaving the value as it was', async () => {
    const r = await resolveArgs(['--healthz-bind-address=', '--address=']);
    assert.equal(r.config.healthzBindAddress, '127.0.0.1');
    assert.equal(r.config.address, '0.0.0.0');
    assert.equal((await resolveArgs(['--address=10.0.0.1', '--address='])).config.address, '10.0.0.1');
    assert.equal((await resolveArgs(['--healthz-bind-address=::1'])).config.healthzBindAddress, '::1');
  });

  void it('makes nodeStatusReportFrequency follow nodeStatusUpdateFrequency only when the file sets it', async () => {
    const dir = await tempFiles({
      'update.yaml': `${HEADER}nodeStatusUpdateFrequency: 20s\n`,
      'both.yaml': `${HEADER}nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 1m\n`,
      'zero.yaml': `${HEADER}nodeStatusUpdateFrequency: 0s\n`,
      'drop/10-update.conf': `${HEADER}nodeStatusUpdateFrequency: 30s\n`,
    });
    const report = async (argv: readonly string[]): Promise<number> => (await resolveArgs([...argv, ...API], { cwd: dir })).config.nodeStatusReportFrequency;
    assert.equal(await report(['--config=update.yaml']), 20 * SECOND);
    assert.equal(await report(['--config=both.yaml']), MINUTE);
    assert.equal(await report(['--config=zero.yaml']), 5 * MINUTE);
    // The flag moves the update frequency only, also over the file's.
    assert.equal(await report(['--node-status-update-frequency=20s']), 5 * MINUTE);
    assert.equal(await report(['--config=update.yaml', '--node-status-update-frequency=40s']), 20 * SECOND);
    // Drop-ins are laid over without defaulting.
    assert.equal(await report(['--config-dir=drop']), 5 * MINUTE);
  });
});
