import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isInvalid } from '../../api/errors.js';
import { decodeValue, encodeObject } from './codec.js';
import { checkKey, checkPrefix, decodeContinue, encodeContinue, parseResourceVersion, prefixRange, watchRange } from './keys.js';

void describe('keys', () => {
  void test('accepts keys and prefixes of non-empty segments only', () => {
    checkKey('/pods/default/web');
    checkKey('/nodes/node-1');
    checkPrefix('/pods/');
    checkPrefix('/pods/default/');
    for (const bad of ['', '/', 'pods/a', '/pods//a', '/pods/a/', '/pods/a\0b']) {
      assert.throws(() => {
        checkKey(bad);
      }, isInvalid, JSON.stringify(bad));
    }
    for (const bad of ['/', '/pods', '//', 'pods/', '/pods//']) {
      assert.throws(() => {
        checkPrefix(bad);
      }, isInvalid, JSON.stringify(bad));
    }
  });

  void test('ranges stop at the end of the prefix, so /pods/a/ never covers /pods/ab/', () => {
    const range = prefixRange('/pods/a/');
    assert.deepEqual(range, { start: '/pods/a/', end: '/pods/a0' });
    assert.ok('/pods/a/x' >= range.start && '/pods/a/x' < range.end);
    assert.ok(!('/pods/ab/x' < range.end));
    assert.deepEqual(watchRange('/pods/a/web'), { start: '/pods/a/web', end: '/pods/a/web\0' });
  });

  void test('parses resourceVersions as decimal revisions', () => {
    assert.equal(parseResourceVersion(undefined), undefined);
    assert.equal(parseResourceVersion(''), undefined);
    assert.equal(parseResourceVersion('0'), 0);
    assert.equal(parseResourceVersion('12345'), 12345);
    for (const bad of ['-1', '01', '1.5', 'abc', '99999999999999999999']) {
      assert.throws(() => parseResourceVersion(bad), isInvalid, bad);
    }
  });

  void test('continue tokens carry the revision and restart right after the last key, under the prefix', () => {
    const token = encodeContinue('/pods/', '/pods/ns/web', 42);
    assert.deepEqual(decodeContinue('/pods/', token), { revision: 42, start: '/pods/ns/web\0' });
    for (const bad of ['', 'not-base64!', Buffer.from('{"v":2,"rv":1,"after":"a"}').toString('base64url'), Buffer.from('{"v":1,"rv":0,"after":"a"}').toString('base64url')]) {
      assert.throws(() => decodeContinue('/pods/', bad), isInvalid, bad);
    }
  });
});

void describe('codec', () => {
  void test('never stores resourceVersion and always returns the given one', () => {
    const stored = encodeObject('/pods/a', { metadata: { name: 'a', resourceVersion: '7' }, spec: {} });
    assert.equal(stored, '{"metadata":{"name":"a"},"spec":{}}');
    assert.deepEqual(decodeValue('/pods/a', stored, 9), { metadata: { name: 'a', resourceVersion: '9' }, spec: {} });
    assert.deepEqual(decodeValue('/pods/a', '{}', 3), { metadata: { resourceVersion: '3' } });
    assert.throws(() => encodeObject('/pods/a', { metadata: 'x' }), isInvalid);
  });
});
