import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { OrchError } from './errors.js';
import {
  INVALID_KEY_VALUE,
  parseKeyValuePairs,
  validateDNS1035Label,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateLabelValue,
  validateQualifiedName,
} from './labels.js';

function checkValidity(name: string, validate: (v: string) => string[], valid: string[], invalid: string[]): void {
  void describe(name, () => {
    for (const value of valid) {
      void it(`accepts ${JSON.stringify(value)}`, () => {
        assert.deepEqual(validate(value), []);
      });
    }
    for (const value of invalid) {
      void it(`rejects ${JSON.stringify(value)}`, () => {
        assert.notDeepEqual(validate(value), []);
      });
    }
  });
}

const a63 = 'a'.repeat(63);
const subdomain253 = [a63, a63, a63, 'a'.repeat(61)].join('.');

checkValidity(
  'validateQualifiedName',
  validateQualifiedName,
  [
    'simple', 'now-with-dashes', '1-starts-with-num', '1234', 'simple/simple', 'now-with-dashes/simple',
    'now-with-dashes/now-with-dashes', 'now.with.dots/simple', 'now-with.dashes-and.dots/simple',
    '1-num.2-num/3-num', '1234/5678', '1.2.3.4/5678', 'Uppercase_Is_OK_123', 'example.com/Uppercase_Is_OK_123',
    'requests.storage-foo', a63, `${subdomain253}/${a63}`, 'a', 'A', 'a.b_c-d', 'node.orch.io/role',
  ],
  [
    '', 'nospecialchars%^=@', 'cantendwithadash-', '-cantstartwithadash-', 'only/one/slash', 'Example.com/abc',
    'example_com/abc', 'example.com/', '/simple', `${a63}a`, `${'a'.repeat(254)}/abc`, 'a..b/c', 'a.-b/c',
    '_underscore', 'dot.', 'spaces are bad', 'ünïcode',
  ],
);

checkValidity(
  'validateLabelValue',
  validateLabelValue,
  ['', 'simple', 'now-with-dashes', '1-starts-with-num', 'end-with-num-1', '1234', 'Upper_Case', 'a.b', a63],
  ['nospecialchars%^=@', 'Tama-nui-te-rā.is.Māori.sun', '\\backslashes', '-starts-with-dash', 'ends-with-dash-', '.starts.with.dot', 'ends.with.dot.', `${a63}a`, 'with space', 'a/b'],
);

checkValidity(
  'validateDNS1123Subdomain',
  validateDNS1123Subdomain,
  ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', 'a.a', 'ab.a', 'a1.a', 'a-1.a', '0.a', '1.2.3.4', 'a.b.c', subdomain253, `${'a'.repeat(100)}.b`],
  ['', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', 'a..b', '.a', 'a.', 'a.-b', 'a-.b', '*', 'a*', 'a/b', `${subdomain253}a`],
);

checkValidity(
  'validateDNS1123Label',
  validateDNS1123Label,
  ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', a63],
  ['', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', 'a.b', '.a', 'a.', 'a/b', 'a,b', 'a;b', `${a63}a`],
);

checkValidity(
  'validateDNS1035Label',
  validateDNS1035Label,
  ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', a63],
  ['0', '01', '012', '1a', '1-a', '', 'A', 'ABC', 'aBc', '-', 'a-', '-a', 'a_b', 'a.b', `${a63}a`],
);

void describe('validation messages', () => {
  void it('report each problem of a qualified name with its part', () => {
    assert.deepEqual(validateQualifiedName('Example.com/'), [
      "prefix part must be a lowercase DNS-1123 subdomain: labels of lowercase letters, digits and '-', separated by '.', each starting and ending with a letter or digit (e.g. 'example.com')",
      'name part must not be empty',
    ]);
    assert.deepEqual(validateQualifiedName(`${a63}b`), ['name part must be at most 63 characters (it has 64)']);
    assert.match(validateQualifiedName('a/b/c')[0] ?? '', /single '\/'.*not 2 '\/'/);
    assert.deepEqual(validateQualifiedName('/x'), ['prefix part must not be empty']);
  });

  void it('report both length and characters when both are wrong', () => {
    assert.equal(validateLabelValue(`-${a63}`).length, 2);
    assert.equal(validateDNS1123Label(`A${a63}`).length, 2);
  });
});

void describe('parseKeyValuePairs', () => {
  void it('reads an empty value as an empty map', () => {
    assert.deepEqual(parseKeyValuePairs('', '--node-labels'), new Map());
  });

  void it('reads pairs, trimming keys and values and skipping empty items', () => {
    assert.deepEqual(
      parseKeyValuePairs(' a = 1 ,b=2,,c=,d=x=y,', '--node-labels'),
      new Map([['a', '1'], ['b', '2'], ['c', ''], ['d', 'x=y']]),
    );
  });

  void it('lets a later key replace an earlier one, keeping the first position', () => {
    assert.deepEqual([...parseKeyValuePairs('a=1,b=2,a=3', '--system-reserved')], [['a', '3'], ['b', '2']]);
  });

  void it('keeps an empty key for later validation to report', () => {
    assert.deepEqual(parseKeyValuePairs('=v', '--node-labels'), new Map([['', 'v']]));
  });

  for (const text of ['a', 'a=1,b', 'a=1, ,b=2', ' ']) {
    void it(`rejects ${JSON.stringify(text)}, naming the item and the subject`, () => {
      assert.throws(
        () => parseKeyValuePairs(text, '--node-labels'),
        (err: unknown) => {
          assert.ok(err instanceof OrchError);
          assert.equal(err.code, INVALID_KEY_VALUE);
          assert.equal(err.category, 'invalid');
          assert.equal(err.subject, '--node-labels');
          assert.match(err.message, /^--node-labels: item ".*" is not of the form key=value/);
          return true;
        },
      );
    });
  }

  void it('quotes the offending item', () => {
    assert.throws(() => parseKeyValuePairs('a=1,oops', '--node-labels'), /item "oops"/);
  });
});
