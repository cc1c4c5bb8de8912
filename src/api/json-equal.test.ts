import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonEqual } from './json-equal.js';

void describe('jsonEqual', () => {
  void it('compares values as the JSON they would be written as, key order ignored', () => {
    assert.ok(jsonEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }));
    assert.ok(jsonEqual(null, null));
    assert.ok(!jsonEqual({ a: 1 }, { a: 2 }));
    assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 2 }));
    assert.ok(!jsonEqual({ a: 1, b: 2 }, { a: 1 }));
    assert.ok(!jsonEqual([1, 2], [2, 1]));
    assert.ok(!jsonEqual([1], { 0: 1 }));
    assert.ok(!jsonEqual({ 0: 1 }, [1]));
    assert.ok(!jsonEqual({ a: null }, { a: {} }));
    assert.ok(!jsonEqual('1', 1));
  });

  void it('takes a key holding undefined as absent, as JSON.stringify does', () => {
    assert.ok(jsonEqual({ a: 1, b: undefined }, { a: 1 }));
    assert.ok(jsonEqual({ a: 1 }, { a: 1, b: undefined }));
    assert.ok(!jsonEqual({ a: undefined, b: 1 }, { a: 1, b: 1 }));
    assert.ok(!jsonEqual({ a: null }, {}));
  });
});
