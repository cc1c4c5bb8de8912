import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from './errors.js';
import { FakeClock, settle } from './fake-clock.js';
import { API_TOKEN_BUCKET_INVALID, createTokenBucket, NO_LIMIT } from './token-bucket.js';

void describe('the token bucket', () => {
  void it('starts full, then refills qps tokens a second up to burst', async () => {
    const clock = new FakeClock();
    const bucket = createTokenBucket({ qps: 10, burst: 3, clock });
    assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, true, false]);
    assert.equal(bucket.delayMs(), 100);
    await clock.advance(60_000);
    assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, true, false], 'never more than burst saved up');
    await clock.advance(50);
    assert.equal(bucket.delayMs(), 50);
    await clock.advance(50);
    assert.equal(bucket.delayMs(), 0);
    assert.equal(bucket.tryTake(), true);
  });

  void it('serves waiters in arrival order, one every 1/qps seconds, each waiting its delay', async () => {
    const clock = new FakeClock();
    const bucket = createTokenBucket({ qps: 5, burst: 1, clock });
    const done: number[] = [];
    const waits = Array.from({ length: 6 }, (_, i) => bucket.wait().then((ok) => { if (ok) done.push(i); }));
    await settle();
    assert.deepEqual(done, [0]);
    assert.deepEqual(clock.pending().map((t) => Math.round(t.delayMs)), [200, 400, 600, 800, 1000]);
    assert.ok(clock.pending().every((t) => t.keepAlive), 'a waiting request keeps the process alive');
    await clock.advance(199);
    assert.deepEqual(done, [0]);
    await clock.advance(1);
    assert.deepEqual(done, [0, 1]);
    await clock.advance(800);
    await Promise.all(waits);
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5]);
  });

  void it('gives the token back when a waiter is aborted, and refuses to wait on an aborted signal', async () => {
    const clock = new FakeClock();
    const bucket = createTokenBucket({ qps: 1, burst: 1, clock });
    assert.equal(await bucket.wait(), true);
    const ac = new AbortController();
    const aborted = bucket.wait(ac.signal);
    ac.abort();
    assert.equal(await aborted, false);
    assert.equal(clock.pending().length, 0);
    await clock.advance(1000);
    assert.equal(bucket.tryTake(), true, "the aborted waiter's token is available again");
    assert.equal(await bucket.wait(AbortSignal.abort()), false);
  });

  void it('neither adds nor removes tokens when the clock goes back', () => {
    const clock = new FakeClock(10_000);
    const bucket = createTokenBucket({ qps: 1, burst: 1, clock });
    assert.equal(bucket.tryTake(), true);
    clock.set(5_000);
    assert.equal(bucket.tryTake(), false);
    clock.set(10_500);
    assert.equal(bucket.tryTake(), false, 'the time before the step is not counted twice');
    clock.set(11_000);
    assert.equal(bucket.tryTake(), true);
  });

  void it('refuses a qps not above 0 and a burst not an integer of at least 1; NO_LIMIT never refuses', async () => {
    const clock = new FakeClock();
    for (const [qps, burst] of [[0, 1], [-1, 1], [5, 0], [5, 1.5], [Infinity, 1], [Number.NaN, 1]] as const) {
      assert.throws(() => createTokenBucket({ qps, burst, clock }), (err: unknown) => err instanceof OrchError && err.code === API_TOKEN_BUCKET_INVALID);
    }
    for (let i = 0; i < 1000; i++) assert.equal(NO_LIMIT.tryTake(), true);
    assert.equal(NO_LIMIT.delayMs(), 0);
    assert.equal(await NO_LIMIT.wait(), true);
  });
});
