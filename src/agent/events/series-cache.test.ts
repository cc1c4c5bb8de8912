import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatMicroTime } from '../../api/time.js';
import { buildEvent, nodeReference } from './event-object.js';
import { createSeriesCache, FINISH_MS } from './series-cache.js';

const T0 = Date.UTC(2026, 0, 1);

function event(reason: string, at: number): ReturnType<typeof buildEvent> {
  return buildEvent({
    regarding: nodeReference('n1'), type: 'Normal', reason, action: 'A', note: 'x', reportingController: 'nodeagent', reportingInstance: 'n1',
  }, BigInt(at) * 1_000_000n, formatMicroTime(at));
}

void describe('series cache', () => {
  void it('keeps an event within the window after its last occurrence, not after its first', () => {
    const cache = createSeriesCache();
    assert.equal(cache.observe(event('R', T0), T0).length, 1);
    assert.equal(cache.observe(event('R', T0 + FINISH_MS), T0 + FINISH_MS)[0]!.series?.count, 2);
    assert.deepEqual(cache.observe(event('R', T0 + 2 * FINISH_MS), T0 + 2 * FINISH_MS), []);
    // Past the window: the old series' final count, then a new event.
    const writes = cache.observe(event('R', T0 + 3 * FINISH_MS + 1), T0 + 3 * FINISH_MS + 1);
    assert.deepEqual(writes.map((w) => w.series?.count), [3, undefined]);
    assert.notEqual(writes[0]!.metadata.name, writes[1]!.metadata.name);
  });

  void it('sweeps idle series (final count only when unsent) and old single events', () => {
    const cache = createSeriesCache();
    cache.observe(event('A', T0), T0);
    cache.observe(event('B', T0), T0);
    cache.observe(event('B', T0 + 1), T0 + 1);
    cache.observe(event('C', T0), T0);
    cache.observe(event('C', T0 + 1), T0 + 1);
    cache.observe(event('C', T0 + 2), T0 + 2);
    assert.deepEqual(cache.sweep(T0 + FINISH_MS), []);
    const final = cache.sweep(T0 + FINISH_MS + 3);
    assert.deepEqual(final.map((w) => [w.reason, w.series?.count]), [['C', 3]]);
    assert.equal(cache.size, 0);
  });

  void it('returns copies and bounds its size, ending the least recent entry', () => {
    const cache = createSeriesCache({ maxEntries: 2 });
    const [first] = cache.observe(event('A', T0), T0);
    first!.series = { count: 99, lastObservedTime: 'x' };
    cache.observe(event('A', T0 + 1), T0 + 1);
    cache.observe(event('A', T0 + 2), T0 + 2);
    cache.observe(event('B', T0), T0);
    const writes = cache.observe(event('C', T0), T0);
    assert.deepEqual(writes.map((w) => [w.reason, w.series?.count]), [['A', 3], ['C', undefined]]);
    assert.equal(cache.size, 2);
    assert.deepEqual(cache.drain(), []);
  });
});
