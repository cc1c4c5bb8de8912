import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoizeByObject } from './memo.js';

void describe('memoizeByObject', () => {
  void it('computes once per object, again for another object, and not after a throw', () => {
    let calls = 0;
    const size = memoizeByObject((o: { n: number }) => {
      calls++;
      if (o.n < 0) throw new Error('negative');
      return o.n * 2;
    });
    const a = { n: 1 };
    assert.equal(size(a), 2);
    assert.equal(size(a), 2);
    assert.equal(calls, 1);
    assert.equal(size({ n: 1 }), 2);
    assert.equal(calls, 2);
    const bad = { n: -1 };
    assert.throws(() => size(bad), /negative/);
    assert.throws(() => size(bad), /negative/);
    assert.equal(calls, 4);
  });
});
