import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { createRateLimiter } from './rate-limit.js';
import { ORCHCLIENT_ABORTED } from './status.js';

const aborted = (err: unknown): boolean => err instanceof OrchError && err.code === ORCHCLIENT_ABORTED;

void describe('the REST rate limiter', () => {
  void it('delays a request beyond the burst by 1/qps, on the shared token bucket', async () => {
    const clock = new FakeClock();
    const limiter = createRateLimiter({ qps: 5, burst: 1, clock });
    await limiter.wait();
    let second = false;
    const waiting = limiter.wait().then(() => { second = true; });
    await settle();
    assert.deepEqual(clock.pending().map((t) => Math.round(t.delayMs)), [200]);
    assert.equal(limiter.tryAccept(), false);
    await clock.advance(200);
    await waiting;
    assert.equal(second, true);
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
