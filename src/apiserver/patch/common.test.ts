import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJson } from './common.js';

void describe('cloneJson', () => {
  void it('copies objects and arrays at every depth; the copy shares nothing with the original', () => {
    const original = { a: 1, b: 'x', c: null, d: true, e: [1, { f: [2, 3] }], g: { h: { i: 'deep' } }, u: undefined };
    const copy = cloneJson(original);
    assert.deepEqual(copy, original);
    assert.ok(Object.hasOwn(copy, 'u'), 'a member that is undefined stays');
    copy.e.push(4);
    (copy.e[1] as { f: number[] }).f.push(9);
    copy.g.h.i = 'changed';
    assert.deepEqual(original.e, [1, { f: [2, 3] }]);
    assert.equal(original.g.h.i, 'deep');
  });

  void it('keeps "__proto__" of parsed JSON an own member, not the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const copy = cloneJson(parsed);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.ok(Object.hasOwn(copy, '__proto__'));
    assert.deepEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: true });
    assert.equal((copy as { polluted?: unknown }).polluted, undefined);
  });

  void it('copies primitives, undefined and values that are not plain (a Date) faithfully', () => {
    const nothing: unknown = undefined;
    assert.equal(cloneJson(nothing), undefined);
    assert.equal(cloneJson('s'), 's');
    const when = new Date(0);
    const copied = cloneJson({ when }).when;
    assert.ok(copied instanceof Date && copied !== when && copied.getTime() === 0);
  });
});
