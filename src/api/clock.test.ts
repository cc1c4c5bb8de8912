import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { realClock, sleepKeepingAlive, sleepOn, timerDelay } from './clock.js';
import { FakeClock, FAKE_CLOCK_START } from './fake-clock.js';

void describe('the real clock', () => {
  void it('reads Date.now, fires a timer once and cancels one', async () => {
    const before = Date.now();
    const now = realClock.now();
    assert.ok(now >= before && now <= Date.now());
    const fired: string[] = [];
    const done = new Promise<void>((resolve) => {
      // Kept alive: an unref'd timer alone would let the test's event loop end.
      realClock.setTimer(1, () => {
        fired.push('a');
        resolve();
      }, { keepAlive: true });
    });
    realClock.setTimer(0, () => fired.push('cancelled')).cancel();
    await done;
    assert.deepEqual(fired, ['a']);
  });

  void it('ends a sleep at once when its signal is or becomes aborted', async () => {
    await realClock.sleep(60_000, AbortSignal.abort());
    const ac = new AbortController();
    const sleeping = realClock.sleep(60_000, ac.signal);
    ac.abort();
    await sleeping;
  });

  void it('reads NaN and negative delays as 0', () => {
    assert.equal(timerDelay(-5), 0);
    assert.equal(timerDelay(Number.NaN), 0);
    assert.equal(timerDelay(12.5), 12.5);
  });
});

void describe('the fake clock', () => {
  void it('stands still until advanced, then fires due timers in time order, ties in the order set', async () => {
    const clock = new FakeClock();
    assert.equal(clock.now(), FAKE_CLOCK_START);
    const fired: string[] = [];
    clock.setTimer(300, () => fired.push(`c@${clock.now() - FAKE_CLOCK_START}`));
    clock.setTimer(100, () => fired.push(`a@${clock.now() - FAKE_CLOCK_START}`));
    clock.setTimer(100, () => fired.push(`b@${clock.now() - FAKE_CLOCK_START}`));
    const cancelled = clock.setTimer(200, () => fired.push('cancelled'));
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [100, 100, 200, 300]);
    cancelled.cancel();
    await clock.advance(299);
    assert.deepEqual(fired, ['a@100', 'b@100']);
    assert.equal(clock.now(), FAKE_CLOCK_START + 299);
    assert.equal(clock.untilNext(), 1);
    await clock.advance(1);
    assert.deepEqual(fired, ['a@100', 'b@100', 'c@300']);
    assert.equal(clock.untilNext(), undefined);
    assert.deepEqual(clock.delays, [300, 100, 100, 200]);
  });

  void it('fires timers set within the advanced span, by callbacks and by the promise chains they start', async () => {
    const clock = new FakeClock(0);
    const ticks: number[] = [];
    const loop = async (): Promise<void> => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(1000);
        await Promise.resolve();
        ticks.push(clock.now());
      }
    };
    const running = loop();
    const chained: number[] = [];
    clock.setTimer(500, () => {
      chained.push(clock.now());
      clock.setTimer(500, () => chained.push(clock.now()));
    });
    await clock.advance(3500);
    assert.deepEqual(ticks, [1000, 2000, 3000]);
    assert.deepEqual(chained, [500, 1000]);
    await clock.advance(2000);
    await running;
    assert.deepEqual(ticks, [1000, 2000, 3000, 4000, 5000]);
  });

  void it('ends a sleep on abort and forgets its timer; set() jumps without firing', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    const sleeping = sleepOn(clock, 10_000, ac.signal);
    assert.equal(clock.pending().length, 1);
    ac.abort();
    await sleeping;
    assert.equal(clock.pending().length, 0);
    let fired = false;
    clock.setTimer(10, () => { fired = true; }, { keepAlive: true });
    assert.equal(clock.pending()[0]?.keepAlive, true);
    clock.set(1_000_000);
    assert.equal(fired, false, 'a jump fires nothing');
    await clock.advance(0);
    assert.equal(fired, true, 'what is due fires at the next advance');
  });

  void it('keeps the process alive during sleepKeepingAlive, and resolves when it is due', async () => {
    const clock = new FakeClock(0);
    let done = false;
    const sleeping = sleepKeepingAlive(clock, 500).then(() => { done = true; });
    assert.deepEqual(clock.pending(), [{ dueAt: 500, delayMs: 500, keepAlive: true }]);
    await clock.advance(499);
    assert.equal(done, false);
    await clock.advance(1);
    await sleeping;
    assert.equal(done, true);
  });
});
