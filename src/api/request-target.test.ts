import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseRequestTarget } from './request-target.js';

void describe('parseRequestTarget', () => {
  void it('keeps a path that starts with // as a path', () => {
    for (const raw of ['//', '///', '//:', '//@', '//:99999/pods', '//evil.example/pods?x=1']) {
      const url = parseRequestTarget(raw);
      assert.ok(url !== undefined, raw);
      assert.equal(url.host, 'request.invalid', raw);
      assert.equal(`${url.pathname}${url.search}`, raw);
    }
  });

  void it('reads the query of an ordinary target', () => {
    const url = parseRequestTarget('/pods?watch=1&x=%20');
    assert.ok(url !== undefined);
    assert.equal(url.pathname, '/pods');
    assert.equal(url.searchParams.get('x'), ' ');
  });

  void it('refuses a target that is not in origin form', () => {
    assert.equal(parseRequestTarget('*'), undefined);
    assert.equal(parseRequestTarget('http://x/pods'), undefined);
    assert.equal(parseRequestTarget(''), undefined);
  });
});
