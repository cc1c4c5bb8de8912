import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { StatusError } from '../status/index.js';
import { decodeBody } from './body.js';

function refusal(text: string, type: string): string {
  try {
    decodeBody(Buffer.from(text), type);
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    assert.equal(err.httpCode, 400);
    return err.message;
  }
  assert.fail('expected the body to be refused');
}

void describe('request body limits', () => {
  void it('refuses a JSON or YAML body nesting too deep, saying where', () => {
    const deep = `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    assert.match(refusal(deep, 'application/json'), /nesting too deep at line 1:\d+ \(more than 100 levels\)/);
    assert.match(refusal(deep, 'application/yaml'), /nesting too deep at line 1:\d+ \(more than 100 levels\)/);
    assert.match(refusal(`${'- '.repeat(20_000)}x`, 'application/yaml'), /nesting too deep/);
  });

  void it('does not count brackets inside strings, and reads ordinary bodies', () => {
    assert.deepEqual(decodeBody(Buffer.from(JSON.stringify({ a: '['.repeat(500) })), 'application/json'), { a: '['.repeat(500) });
    assert.deepEqual(decodeBody(Buffer.from('a: [1, {b: 2}]'), 'application/yaml'), { a: [1, { b: 2 }] });
  });

  void it('refuses a YAML alias bomb', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${Array.from({ length: 10 }, () => (i === 0 ? '*a' : `*b${i - 1}`)).join(', ')}]`)];
    assert.match(refusal(bomb.join('\n'), 'application/yaml'), /aliases/);
  });
});
