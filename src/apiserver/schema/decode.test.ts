import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { array, int32, microTime, object, stringMap, str, time } from './types.js';
import { canonicalTime, decodeStrict } from './decode.js';

const schema = object({
  name: str(),
  count: int32(),
  at: time(),
  micro: microTime(),
  labels: stringMap(),
  items: array(object({ key: str() })),
});

void describe('strict decoding', () => {
  void it('lists unknown fields with their paths and drops them', () => {
    const r = decodeStrict(schema, { name: 'a', extra: 1, items: [{ key: 'k', nope: true }] });
    assert.deepEqual(r.unknown, ['extra', 'items[0].nope']);
    assert.deepEqual(r.value, { name: 'a', items: [{ key: 'k' }] });
    assert.deepEqual(r.typeErrors, []);
  });
  void it('reports wrong types, out-of-range int32 and bad times', () => {
    const r = decodeStrict(schema, { name: 1, count: 2 ** 31, at: 'noon', labels: { a: 1 }, items: {} });
    assert.equal(r.typeErrors.length, 5, r.typeErrors.join('\n'));
    assert.match(r.typeErrors[0] ?? '', /^name: expected string, got number$/);
  });
  void it('drops nulls and empty lists and maps, canonicalizes times to UTC', () => {
    const r = decodeStrict(schema, { name: null, labels: {}, items: [], at: '2024-05-01T12:00:00+02:00', micro: '2024-05-01T10:00:00.1Z' });
    assert.deepEqual(r.value, { at: '2024-05-01T10:00:00Z', micro: '2024-05-01T10:00:00.100000Z' });
  });
  void it('parses RFC 3339 only', () => {
    assert.equal(canonicalTime('2024-05-01T10:00:00.123456789Z', 6), '2024-05-01T10:00:00.123456Z');
    assert.equal(canonicalTime('2024-05-01T10:00:00.5-01:30', 0), '2024-05-01T11:30:00Z');
    for (const bad of ['2024-05-01', '2024-05-01 10:00:00Z', '2024-13-01T10:00:00Z', 'x']) assert.equal(canonicalTime(bad, 0), undefined, bad);
  });
});
