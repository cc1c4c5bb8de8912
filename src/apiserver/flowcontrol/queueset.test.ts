import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { QueueSet, type Admission } from './queueset.js';
import { dealHand, flowHash } from './shuffle.js';

function released(a: Admission): () => void {
  if (a.kind !== 'dispatched') assert.fail(`expected a seat, the request was rejected: ${a.reason}`);
  return a.release;
}

void describe('shuffle sharding', () => {
  void it('deals distinct queues within the deck, the same hand for the same flow', () => {
    for (let i = 0; i < 200; i += 1) {
      const hash = flowHash('fs', `user-${i}`);
      const hand = dealHand(hash, 64, 6);
      assert.equal(new Set(hand).size, 6);
      assert.ok(hand.every((q) => q >= 0 && q < 64));
      assert.deepEqual(dealHand(hash, 64, 6), hand);
    }
    assert.equal(dealHand(12345n, 3, 6).length, 3, 'a hand is never larger than the deck');
  });
});

void describe('QueueSet', () => {
  void it('dispatches up to the concurrency limit, queues the rest, and starts them as seats free', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ concurrencyLimit: 2, queues: 8, handSize: 2, queueLengthLimit: 10 }, clock, 15_000);
    const a = released(await qs.admit(1n));
    released(await qs.admit(2n));
    const third = qs.admit(3n);
    assert.equal(qs.executing, 2);
    assert.equal(qs.inQueue, 1);
    await clock.advance(250);
    a();
    const got = await third;
    assert.equal(got.kind, 'dispatched');
    assert.equal(got.waitedMs, 250);
    assert.equal(qs.inQueue, 0);
  });

  void it('turns a request away when its queue is full, and after the longest wait', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ concurrencyLimit: 1, queues: 1, handSize: 1, queueLengthLimit: 2 }, clock, 15_000);
    released(await qs.admit(1n));
    const w1 = qs.admit(1n);
    const w2 = qs.admit(1n);
    assert.deepEqual(await qs.admit(1n), { kind: 'rejected', reason: 'queue-full', waitedMs: 0 });
    await clock.advance(15_000);
    assert.deepEqual(await w1, { kind: 'rejected', reason: 'time-out', waitedMs: 15_000 });
    assert.equal((await w2).kind, 'rejected');
    assert.equal(qs.inQueue, 0);
  });

  void it('rejects at once beyond the limit when it has no queues (upstream\'s Reject), and on cancellation', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ concurrencyLimit: 1, queues: 0, handSize: 0, queueLengthLimit: 0 }, clock, 15_000);
    const first = released(await qs.admit(1n));
    assert.deepEqual(await qs.admit(2n), { kind: 'rejected', reason: 'concurrency-limit', waitedMs: 0 });
    first();
    assert.equal((await qs.admit(2n)).kind, 'dispatched');

    const queued = new QueueSet({ concurrencyLimit: 1, queues: 4, handSize: 2, queueLengthLimit: 5 }, clock, 15_000);
    released(await queued.admit(1n));
    const stop = new AbortController();
    const waiting = queued.admit(9n, stop.signal);
    stop.abort();
    assert.equal((await waiting).kind, 'rejected');
    assert.equal(queued.inQueue, 0);
  });

  void it('serves a quiet flow fairly next to a heavy one (the heavy flow cannot starve it)', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ concurrencyLimit: 1, queues: 64, handSize: 1, queueLengthLimit: 1000 }, clock, 60_000);
    const heavy = flowHash('fs', 'heavy');
    const quiet = flowHash('fs', 'quiet');
    assert.notDeepEqual(dealHand(heavy, 64, 1), dealHand(quiet, 64, 1), 'the test needs the flows on different queues');
    const blocker = released(await qs.admit(heavy));
    const order: string[] = [];
    const all: Promise<void>[] = [];
    for (let i = 0; i < 50; i += 1) {
      all.push(qs.admit(heavy).then((a) => {
        order.push('heavy');
        if (a.kind === 'dispatched') a.release();
      }));
    }
    all.push(qs.admit(quiet).then((a) => {
      order.push('quiet');
      if (a.kind === 'dispatched') a.release();
    }));
    blocker();
    await Promise.all(all);
    assert.ok(order.indexOf('quiet') <= 2, `the quiet flow came at ${order.indexOf('quiet')} of ${order.length}`);
  });

  void it('takes new limits: more seats start waiting requests at once', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ concurrencyLimit: 1, queues: 4, handSize: 2, queueLengthLimit: 5 }, clock, 15_000);
    released(await qs.admit(1n));
    const waiting = qs.admit(2n);
    qs.reconfigure({ concurrencyLimit: 2, queues: 8, handSize: 2, queueLengthLimit: 5 });
    assert.equal((await waiting).kind, 'dispatched');
    assert.equal(qs.executing, 2);
    assert.equal(qs.limit, 2);
  });
});
