import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Disposers } from './disposers.js';
import { FakeClock } from './fake-clock.js';

void describe('Disposers', () => {
  void it('runs every step newest first, each after the previous one settled', async () => {
    const order: string[] = [];
    const d = new Disposers();
    d.push(() => { order.push('first'); });
    d.push(async () => {
      await Promise.resolve();
      order.push('second');
    });
    d.push(() => { order.push('third'); });
    await d.dispose();
    assert.deepEqual(order, ['third', 'second', 'first']);
    await d.dispose();
    assert.equal(order.length, 3, 'a second dispose runs nothing again');
  });

  void it('runs the remaining steps after a failure and reports every failure', async () => {
    const order: string[] = [];
    const d = new Disposers();
    d.push(() => { order.push('first'); });
    d.push(() => { throw new Error('a'); });
    d.push(() => Promise.reject(new Error('b')));
    await assert.rejects(d.dispose(), (err: unknown) => {
      assert.ok(err instanceof AggregateError);
      assert.deepEqual(err.errors.map((e: unknown) => (e as Error).message), ['b', 'a']);
      return true;
    });
    assert.deepEqual(order, ['first']);
  });

  void it('reports a step that does not settle by its deadline by name, and runs the rest', async () => {
    const clock = new FakeClock(0);
    const order: string[] = [];
    const overdue: string[] = [];
    const d = new Disposers();
    d.push(() => { order.push('first'); }, 'the first');
    d.push(() => new Promise(() => undefined), 'the plugin connections');
    d.push(() => { order.push('third'); });
    const done = d.dispose({ clock, stepMs: 5_000, onOverdue: (name) => { overdue.push(name); } });
    await clock.advance(4_999);
    assert.deepEqual([order, overdue], [['third'], []]);
    await clock.advance(1);
    await done;
    assert.deepEqual([order, overdue], [['third', 'first'], ['the plugin connections']]);
    assert.equal(clock.pending().length, 0, 'no deadline timer is left');
  });
});
