import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { BackOff } from './backoff.js';

const clock = (): FakeClock => new FakeClock(1_000_000);

void describe('BackOff', () => {
  void it('starts at the initial delay and doubles up to the maximum', async () => {
    const c = clock();
    const b = new BackOff({ initialMs: 10_000, maxMs: 300_000 }, c);
    assert.equal(b.get('k'), 0);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.next('k', c.now());
      seen.push(b.get('k'));
      await c.advance(1000);
    }
    assert.deepEqual(seen, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  });

  void it('is in back-off since an event for the delay, measured from the event time', async () => {
    const c = clock();
    const b = new BackOff({ initialMs: 10_000, maxMs: 300_000 }, c);
    assert.equal(b.remainingSince('k', c.now()), 0, 'no entry: no back-off');
    b.next('k', c.now());
    const exited = c.now() + 2_000;
    await c.advance(5_000);
    assert.equal(b.remainingSince('k', exited), 7_000);
    await c.advance(7_000);
    assert.equal(b.remainingSince('k', exited), 0);
  });

  void it('measures pull back-off from the last update', async () => {
    const c = clock();
    const b = new BackOff({ initialMs: 10_000, maxMs: 300_000 }, c);
    b.next('img', c.now());
    await c.advance(4_000);
    assert.equal(b.remainingSinceUpdate('img'), 6_000);
    await c.advance(6_000);
    assert.equal(b.remainingSinceUpdate('img'), 0);
    b.next('img', c.now());
    assert.equal(b.remainingSinceUpdate('img'), 20_000);
  });

  void it('resets after clean running longer than the reset time (default twice the maximum)', async () => {
    const c = clock();
    const b = new BackOff({ initialMs: 10_000, maxMs: 300_000 }, c);
    b.next('k', c.now());
    b.next('k', c.now());
    assert.equal(b.get('k'), 20_000);
    await c.advance(600_001);
    assert.equal(b.remainingSince('k', c.now()), 0, 'an expired entry holds nothing');
    b.next('k', c.now());
    assert.equal(b.get('k'), 10_000, 'starts over');
    const short = new BackOff({ initialMs: 100, maxMs: 1000, resetAfterMs: 500 }, c);
    short.next('x', c.now());
    short.next('x', c.now());
    await c.advance(501);
    short.next('x', c.now());
    assert.equal(short.get('x'), 100);
  });

  void it('forgets a prefix and collects expired entries', async () => {
    const c = clock();
    const b = new BackOff({ initialMs: 10, maxMs: 100 }, c);
    b.next('uid1_a', c.now());
    b.next('uid1_b', c.now());
    b.next('uid2_a', c.now());
    b.forgetPrefix('uid1_');
    assert.equal(b.size(), 1);
    await c.advance(201);
    b.gc();
    assert.equal(b.size(), 0);
  });
});
