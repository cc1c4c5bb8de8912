import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareCodeUnits, compareKeys } from './order.js';

void test('compareCodeUnits orders by code units: upper case before lower, hyphen and digits before letters', () => {
  assert.deepEqual(['b', 'B', 'a-b', 'a1', 'ab', 'A'].sort(compareCodeUnits), ['A', 'B', 'a-b', 'a1', 'ab', 'b']);
  assert.equal(compareCodeUnits('x', 'x'), 0);
  assert.equal(compareCodeUnits('', 'a'), -1);
  assert.equal(compareCodeUnits('b', 'a'), 1);
});

void test('compareKeys orders entries by their key only', () => {
  const entries: [string, number][] = [['b', 1], ['a', 2], ['B', 3]];
  assert.deepEqual(entries.sort(compareKeys), [['B', 3], ['a', 2], ['b', 1]]);
});
