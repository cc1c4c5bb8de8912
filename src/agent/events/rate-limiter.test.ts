import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInvalid } from '../../api/errors.js';
import { createTokenBucket } from './rate-limiter.js';

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

function takeAll(bucket: { tryTake(): boolean }): number {
  let n = 0;
  while (n < 10_000 && bucket.tryTake()) n++;
  return n;
}

void describe('token bucket', () => {
  void it('starts full with burst tokens and refills at qps', () => {
    const c = clock();
    const bucket = createTokenBucket({ qps: 50, burst: 100, now: c.now });
    assert.equal(takeAll(bucket), 100);
    assert.equal(bucket.delayMs(), 20);
    c.advance(19);
    assert.equal(bucket.tryTake(), false);
    c.advance(1);
    assert.equal(bucket.delayMs(), 0);
    assert.equal(bucket.tryTake(), true);
    c.advance(1000);
    assert.equal(takeAll(bucket), 50);
  });

  void it('never saves more than burst tokens', () => {
    const c = clock();
    const bucket = createTokenBucket({ qps: 2, burst: 3, now: c.now });
    c.advance(3_600_000);
    assert.equal(takeAll(bucket), 3);
    assert.equal(bucket.delayMs(), 500);
  });

  void it('treats qps 0 as unlimited and ignores the burst', () => {
    const bucket = createTokenBucket({ qps: 0, burst: 0, now: clock().now });
    assert.equal(takeAll(bucket), 10_000);
    assert.equal(bucket.delayMs(), 0);
  });

  void it('reads a burst of 0 with a positive qps as 1', () => {
    const c = clock();
    const bucket = createTokenBucket({ qps: 1, burst: 0, now: c.now });
    assert.equal(takeAll(bucket), 1);
    c.advance(1000);
    assert.equal(takeAll(bucket), 1);
  });

  void it('ignores a clock that goes back', () => {
    const c = clock();
    const bucket = createTokenBucket({ qps: 1, burst: 1, now: c.now });
    assert.equal(bucket.tryTake(), true);
    c.advance(-5000);
    assert.equal(bucket.tryTake(), false);
    c.advance(1000);
    assert.equal(bucket.tryTake(), true);
  });

  void it('rejects negative or non-finite numbers with EVENTS_INVALID_OPTIONS', () => {
    for (const [qps, burst] of [[-1, 10], [1, -1], [Number.NaN, 1], [Number.POSITIVE_INFINITY, 1]] as const) {
      assert.throws(() => createTokenBucket({ qps, burst, now: () => 0 }), (err: unknown) => {
        assert.ok(isInvalid(err));
        assert.equal((err as { code: string }).code, 'EVENTS_INVALID_OPTIONS');
        return true;
      });
    }
  });
});
