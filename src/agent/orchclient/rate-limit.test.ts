import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { createTokenBucket, ORCHCLIENT_OPTIONS_INVALID } from './rate-limit.js';
import { ORCHCLIENT_ABORTED } from './status.js';

/** A hand-driven clock: sleepers wake when `advance` passes their time. */
function fakeClock(): {
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  advance: (ms: number) => Promise<void>;
  sleeps: number[];
} {
  let t = 1000;
  const sleeps: number[] = [];
  const sleepers: { at: number; wake: () => void }[] = [];
  return {
    now: () => t,
    sleeps,
    sleep: (ms, signal) => new Promise<void>((resolve, reject) => {
      sleeps.push(Math.round(ms));
      const entry = { at: t + ms, wake: resolve };
      sleepers.push(entry);
      signal?.addEventListener('abort', () => {
        sleepers.splice(sleepers.indexOf(entry), 1);
        reject(new Error('aborted'));
      }, { once: true });
    }),
    advance: async (ms) => {
      t += ms;
      for (const s of [...sleepers]) {
        if (s.at <= t) {
          sleepers.splice(sleepers.indexOf(s), 1);
          s.wake();
        }
      }
      await new Promise((r) => setImmediate(r));
    },
  };
}

void describe('the token bucket', () => {
  void it('lets a burst through, then one request every 1/qps seconds, in order', async () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ qps: 5, burst: 1, now: clock.now, sleep: clock.sleep });
    const done: number[] = [];
    const waits = Array.from({ length: 6 }, (_, i) => bucket.wait().then(() => done.push(i)));
    await clock.advance(0);
    assert.deepEqual(done, [0]);
    assert.deepEqual(clock.sleeps, [200, 400, 600, 800, 1000]);
    await clock.advance(199);
    assert.deepEqual(done, [0]);
    await clock.advance(1);
    assert.deepEqual(done, [0, 1]);
    await clock.advance(800);
    await Promise.all(waits);
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5]);
  });

  void it('saves up to burst tokens while idle, never more', async () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ qps: 10, burst: 3, now: clock.now, sleep: clock.sleep });
    for (let i = 0; i < 3; i++) await bucket.wait();
    assert.equal(bucket.tryAccept(), false);
    await clock.advance(60_000);
    assert.equal(bucket.tryAccept(), true);
    assert.equal(bucket.tryAccept(), true);
    assert.equal(bucket.tryAccept(), true);
    assert.equal(bucket.tryAccept(), false);
    assert.deepEqual(clock.sleeps, []);
    await clock.advance(100);
    assert.equal(bucket.tryAccept(), true);
  });

  void it('gives the token back when a waiter is aborted', async () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ qps: 1, burst: 1, now: clock.now, sleep: clock.sleep });
    await bucket.wait();
    const ac = new AbortController();
    const aborted = bucket.wait(ac.signal);
    ac.abort();
    await assert.rejects(aborted, (err: unknown) => err instanceof OrchError && err.code === ORCHCLIENT_ABORTED);
    await clock.advance(1000);
    assert.equal(bucket.tryAccept(), true, 'the aborted waiter\'s token is available again');
    await assert.rejects(bucket.wait(AbortSignal.abort()), (err: unknown) => err instanceof OrchError && err.code === ORCHCLIENT_ABORTED);
  });

  void it('refuses nonsense options', () => {
    for (const [qps, burst] of [[0, 1], [-1, 1], [5, 0], [5, 1.5], [Infinity, 1]] as const) {
      assert.throws(() => createTokenBucket({ qps, burst }), (err: unknown) => err instanceof OrchError && err.code === ORCHCLIENT_OPTIONS_INVALID);
    }
  });
});
