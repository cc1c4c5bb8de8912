import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PodStartSlots, Semaphore, defaultPodStartConcurrency } from './semaphore.js';

interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Lets every queued microtask and promise continuation run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

void describe('Semaphore', () => {
  void it('runs at most `limit` tasks at once, the others in arrival order', async () => {
    const sem = new Semaphore(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const done = gates.map((g, i) =>
      sem.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await settle();
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(sem.load(), { running: 2, waiting: 2 });
    gates[1]!.open();
    await settle();
    assert.deepEqual(started, [0, 1, 2]);
    assert.deepEqual(sem.load(), { running: 2, waiting: 1 });
    gates[0]!.open();
    gates[2]!.open();
    gates[3]!.open();
    assert.deepEqual(await Promise.all(done), [0, 1, 2, 3]);
    assert.deepEqual(started, [0, 1, 2, 3]);
    assert.deepEqual(sem.load(), { running: 0, waiting: 0 });
  });

  void it('frees the slot of a task that fails, and passes the error on', async () => {
    const sem = new Semaphore(1);
    const failing = sem.run(() => Promise.reject(new Error('boom')));
    const next = sem.run(() => Promise.resolve('next'));
    await assert.rejects(failing, /boom/);
    assert.equal(await next, 'next');
    assert.deepEqual(sem.load(), { running: 0, waiting: 0 });
  });

  void it('never has more than the limit running under load', async () => {
    const sem = new Semaphore(3);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sem.run(async () => {
          running++;
          peak = Math.max(peak, running);
          for (let k = 0; k < i % 4; k++) await Promise.resolve();
          running--;
        }),
      ),
    );
    assert.equal(peak, 3);
  });

  void it('hold: a slot kept across steps until given back, once however often it is given back', async () => {
    const sem = new Semaphore(1);
    const release = await sem.hold();
    let second = false;
    const waiting = sem.hold().then((r) => {
      second = true;
      return r;
    });
    await settle();
    assert.equal(second, false);
    assert.deepEqual(sem.load(), { running: 1, waiting: 1 });
    release();
    release(); // the second call gives back nothing more
    const releaseSecond = await waiting;
    assert.deepEqual(sem.load(), { running: 1, waiting: 0 });
    releaseSecond();
    assert.deepEqual(sem.load(), { running: 0, waiting: 0 });
  });

  void it('limit 0: no bound', async () => {
    const sem = new Semaphore(0);
    const gates = [gate(), gate(), gate()];
    const done = gates.map((g) => sem.run(() => g.promise));
    await settle();
    assert.deepEqual(sem.load(), { running: 3, waiting: 0 });
    for (const g of gates) g.open();
    await Promise.all(done);
  });

  void it('the default is four per CPU', () => {
    assert.ok(defaultPodStartConcurrency() >= 4);
    assert.equal(defaultPodStartConcurrency() % 4, 0);
  });
});

void describe('PodStartSlots', () => {
  void it('a pod\'s slot is held from hold() until release(); releasing it again, or before hold(), gives back nothing', async () => {
    const slots = new PodStartSlots({ limit: 1 });
    const first = slots.slot();
    const second = slots.slot();
    const unheld = slots.slot();
    unheld.release();
    await first.hold();
    let secondHeld = false;
    const holding = second.hold().then(() => {
      secondHeld = true;
    });
    await settle();
    assert.equal(secondHeld, false, 'the only slot is taken');
    first.release();
    first.release();
    await holding;
    const third = slots.slot();
    let thirdHeld = false;
    const thirdHolding = third.hold().then(() => {
      thirdHeld = true;
    });
    await settle();
    assert.equal(thirdHeld, false, 'a second release of the first gave back nothing');
    second.release();
    await thirdHolding;
    third.release();
  });
});
