import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { createRateLimiter } from './rate-limit.js';
import { ORCHCLIENT_ABORTED } from './status.js';

const aborted = (err: unknown): boolean => err instanceof OrchError && err.code === ORCHCLIENT_ABORTED;

void describe('the REST rate limiter', () => {
  void it('lets a burst through, then delays each request by 1/qps more than the one before, in order', async () => {
    const clock = new FakeClock();
    const limiter = createRateLimiter({ qps: 5, burst: 1, clock });
    const done: number[] = [];
    const waits = Array.from({ length: 6 }, (_, i) => limiter.wait().then(() => done.push(i)));
    await settle();
    assert.deepEqual(done, [0]);
    assert.deepEqual(clock.pending().map((t) => Math.round(t.delayMs)), [200, 400, 600, 800, 1000]);
    await clock.advance(199);
    assert.deepEqual(done, [0]);
    await clock.advance(1);
    assert.deepEqual(done, [0, 1]);
    await clock.advance(800);
    await Promise.all(waits);
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5]);
  });

  void it('saves up to burst tokens while idle, never more', async () => {
    const clock = new FakeClock();
    const limiter = createRateLimiter({ qps: 10, burst: 3, clock });
    for (let i = 0; i < 3; i++) await limiter.wait();
    assert.equal(limiter.tryAccept(), false);
    await clock.advance(60_000);
    assert.deepEqual([limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept(), limiter.tryAccept()], [true, true, true, false]);
    assert.deepEqual(clock.delays, [], 'nothing waited');
    await clock.advance(100);
    assert.equal(limiter.tryAccept(), true);
  });

  void it('rejects with ORCHCLIENT_ABORTED and gives the token back when a waiter is aborted', async () => {
    const clock = new FakeClock();
    const limiter = createRateLimiter({ qps: 1, burst: 1, clock });
    await limiter.wait();
    const ac = new AbortController();
    const waiting = limiter.wait(ac.signal);
    ac.abort();
    await assert.rejects(waiting, aborted);
    assert.deepEqual(clock.pending(), []);
    await clock.advance(1000);
    assert.equal(limiter.tryAccept(), true, "the aborted waiter's token is available again");
    await assert.rejects(limiter.wait(AbortSignal.abort()), aborted);
  });
});
