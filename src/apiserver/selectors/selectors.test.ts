import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../status/index.js';
import { parseFieldSelector, parseLabelSelector } from './index.js';

const labels = { app: 'web', tier: 'front', version: '3' };

void describe('label selectors', () => {
  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web, db)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['missing notin (db)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['app=web,tier=front', true],
    ['app=web, tier=back', false],
    ['version>2', true],
    ['version<2', false],
    ['example.com/key', false],
    ['app in (web,)', true],
  ];
  for (const [text, want] of cases) {
    void it(`${JSON.stringify(text)} matches: ${want}`, () => {
      assert.equal(parseLabelSelector(text).matches(labels), want);
    });
  }

  void it('parses requirements with their operators', () => {
    const s = parseLabelSelector('a=b,c notin (x,y),!d,e');
    assert.deepEqual(s.requirements.map((r) => r.operator), ['=', 'notin', '!', 'exists']);
    assert.deepEqual(s.requirements[1]?.values, ['x', 'y']);
  });

  for (const bad of ['a=b=c', 'a in x', 'a in (x', '-bad=1', 'a=-x-', '=x', 'a>b', 'a,,b']) {
    void it(`rejects ${JSON.stringify(bad)} with 400`, () => {
      assert.throws(() => parseLabelSelector(bad), (err: unknown) => err instanceof StatusError && err.httpCode === 400);
    });
  }
});

void describe('field selectors', () => {
  const fields = { 'metadata.name': 'a', 'metadata.namespace': 'ns', reason: 'Started', note: 'x,y=z' };
  void it('matches =, == and !=', () => {
    assert.equal(parseFieldSelector('metadata.name=a', ['reason'], 'events').matches(fields), true);
    assert.equal(parseFieldSelector('reason==Started,metadata.namespace!=other', ['reason'], 'events').matches(fields), true);
    assert.equal(parseFieldSelector('reason!=Started', ['reason'], 'events').matches(fields), false);
    assert.equal(parseFieldSelector('', [], 'events').empty, true);
  });
  void it('unescapes values', () => {
    assert.equal(parseFieldSelector('note=x\\,y\\=z', ['note'], 'events').matches(fields), true);
  });
  void it('reports the exact value of a field', () => {
    assert.equal(parseFieldSelector('metadata.namespace=ns,reason!=x', ['reason'], 'e').exact('metadata.namespace'), 'ns');
  });
  void it('rejects unknown field labels and bad syntax with 400', () => {
    for (const bad of ['spec.foo=1', 'reason', 'reason=a=b', 'reason=\\q']) {
      assert.throws(() => parseFieldSelector(bad, ['reason'], 'events'), (err: unknown) => err instanceof StatusError && err.httpCode === 400);
    }
  });
});
