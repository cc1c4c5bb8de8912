import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import {
  byEvictionPriority, conditionsLastObservedAt, conditionsObservedSince, conditionsOf, parseThresholds, thresholdQuantity, thresholdsMet,
  type ThresholdConfig,
} from './thresholds.js';
import type { Observation, Signal } from './types.js';

const NONE: ThresholdConfig = { evictionHard: {}, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, enforceNodeAllocatable: [] };
const obs = (entries: [Signal, number, number][]): Map<Signal, Observation> => new Map(entries.map(([s, available, capacity]) => [s, { available, capacity, time: 1 }]));

void describe('eviction thresholds', () => {
  void it('parse quantities and float32 percentages, ignore 0% and 100%, and copy hard memory thresholds to allocatable memory', () => {
    const t = parseThresholds({
      ...NONE,
      evictionHard: { 'memory.available': '1024Mi', 'nodefs.available': '10%', 'imagefs.available': '0%', 'pid.available': '100%' },
      evictionSoft: { 'memory.available': '2Gi' },
      evictionSoftGracePeriod: { 'memory.available': '1m30s' },
      evictionMinimumReclaim: { 'nodefs.available': '500Mi' },
      enforceNodeAllocatable: ['pods'],
    });
    assert.deepEqual(t.map((x) => [x.signal, x.value.text, x.gracePeriodMs, x.minReclaim?.text]), [
      ['memory.available', '1Gi', 0, undefined],
      ['nodefs.available', '10%', 0, '500Mi'],
      ['memory.available', '2Gi', 90_000, undefined],
      ['allocatableMemory.available', '1Gi', 0, undefined],
    ]);
    // 10% of 1000 bytes is 100 (0.1f is a hair above 0.1, truncated), as upstream's float32 arithmetic.
    const tenPercent = t[1]?.value;
    assert.ok(tenPercent !== undefined && 'percentage' in tenPercent);
    assert.equal(tenPercent.percentage, Math.fround(0.1));
    assert.equal(thresholdQuantity(tenPercent, 1000), 100);
    assert.equal(thresholdQuantity(tenPercent, 123_456_789_000), 12_345_679_083);
  });

  void it('fail naming the field', () => {
    const fails = (c: Partial<ThresholdConfig>, pattern: RegExp): void => {
      assert.throws(() => parseThresholds({ ...NONE, ...c }), (err: unknown) => err instanceof OrchError && err.code === 'EVICTION_THRESHOLD_INVALID' && pattern.test(err.message));
    };
    fails({ evictionHard: { 'memory.free': '1Gi' } }, /^evictionHard: unsupported eviction signal memory.free$/);
    fails({ evictionHard: { 'memory.available': '0' } }, /^evictionHard: eviction threshold memory.available must be positive: 0$/);
    fails({ evictionSoft: { 'memory.available': '1Gi' } }, /^evictionSoftGracePeriod: grace period must be specified/);
    fails({ evictionMinimumReclaim: { 'nodefs.available': '0%' } }, /^evictionMinimumReclaim: eviction percentage minimum reclaim nodefs.available must be positive/);
  });

  void it('are met below the threshold, and stay met until the minimum reclaim is recovered too', () => {
    const [t] = parseThresholds({ ...NONE, evictionHard: { 'nodefs.available': '100Mi' }, evictionMinimumReclaim: { 'nodefs.available': '50Mi' } });
    assert.ok(t !== undefined);
    const mi = 1024 * 1024;
    const at = (available: number, enforce: boolean): number => thresholdsMet([t], obs([['nodefs.available', available * mi, 1000 * mi]]), enforce).length;
    assert.deepEqual([at(99, false), at(100, false), at(120, false), at(120, true), at(150, true)], [1, 0, 0, 1, 0]);
    assert.equal(thresholdsMet([t], obs([]), false).length, 0, 'no observation: not met');
  });

  void it('raise the conditions of their signals, kept for the transition period after the last observation', () => {
    const t = parseThresholds({ ...NONE, evictionHard: { 'pid.available': '10', 'imagefs.available': '1Gi', 'memory.available': '1Gi' } });
    assert.deepEqual(conditionsOf(t), ['MemoryPressure', 'DiskPressure', 'PIDPressure']);
    assert.deepEqual(byEvictionPriority(t).map((x) => x.signal), ['memory.available', 'pid.available', 'imagefs.available']);
    const seen = conditionsLastObservedAt(['DiskPressure'], new Map([['MemoryPressure', 0]]), 1000);
    assert.deepEqual(conditionsObservedSince(seen, 5000, 4999), ['MemoryPressure', 'DiskPressure']);
    assert.deepEqual(conditionsObservedSince(seen, 5000, 5000), ['DiskPressure']);
    assert.deepEqual(conditionsObservedSince(seen, 5000, 6000), []);
  });
});
