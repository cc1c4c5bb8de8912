import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Disposers } from './disposers.js';

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
});
