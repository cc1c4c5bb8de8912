import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { OrchError } from './errors.js';
import {
  INVALID_QUANTITY,
  QUANTITY_OUT_OF_RANGE,
  compareQuantities,
  formatQuantity,
  parseByteSize,
  parseQuantity,
  quantityMilliValue,
  quantityValue,
  type QuantityFormat,
} from './quantity.js';

function assertError(fn: () => unknown, code: string, includes: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof OrchError);
    assert.equal(err.code, code);
    assert.equal(err.category, 'invalid');
    assert.ok(err.message.includes(includes), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(includes)}`);
    return true;
  });
}

void describe('parseQuantity and formatQuantity', () => {
  // input, format, canonical text, Value(), MilliValue() (null: beyond int64)
  const cases: [string, QuantityFormat, string, number, number | null][] = [
    ['0', 'DecimalSI', '0', 0, 0],
    ['-0', 'DecimalSI', '0', 0, 0],
    ['0Mi', 'BinarySI', '0', 0, 0],
    ['10Mi', 'BinarySI', '10Mi', 10 * 2 ** 20, 10 * 2 ** 20 * 1000],
    ['1Gi', 'BinarySI', '1Gi', 2 ** 30, 2 ** 30 * 1000],
    ['1024Mi', 'BinarySI', '1Gi', 2 ** 30, 2 ** 30 * 1000],
    ['100Ki', 'BinarySI', '100Ki', 102400, 102400000],
    ['1.5Gi', 'BinarySI', '1536Mi', 1536 * 2 ** 20, 1536 * 2 ** 20 * 1000],
    ['1.5Ki', 'BinarySI', '1536', 1536, 1536000],
    ['1.1Ki', 'BinarySI', '1126400m', 1127, 1126400],
    ['0.5Ki', 'BinarySI', '512', 512, 512000],
    ['0.0001Ki', 'DecimalSI', '102400u', 1, 103],
    ['7Ei', 'BinarySI', '7Ei', 7 * 2 ** 60, null],
    ['200m', 'DecimalSI', '200m', 1, 200],
    ['1000m', 'DecimalSI', '1', 1, 1000],
    ['0.5', 'DecimalSI', '500m', 1, 500],
    ['.5', 'DecimalSI', '500m', 1, 500],
    ['+1', 'DecimalSI', '1', 1, 1000],
    ['1.', 'DecimalSI', '1', 1, 1000],
    ['007', 'DecimalSI', '7', 7, 7000],
    ['1.5G', 'DecimalSI', '1500M', 1.5e9, 1.5e12],
    ['1.G', 'DecimalSI', '1G', 1e9, 1e12],
    ['5M', 'DecimalSI', '5M', 5e6, 5e9],
    ['1k', 'DecimalSI', '1k', 1000, 1e6],
    ['12n', 'DecimalSI', '12n', 1, 1],
    ['3u', 'DecimalSI', '3u', 1, 1],
    ['1.2345', 'DecimalSI', '1234500u', 2, 1235],
    ['0.9n', 'DecimalSI', '1n', 1, 1],
    ['1E', 'DecimalSI', '1E', 1e18, null],
    ['1e3', 'DecimalExponent', '1e3', 1000, 1e6],
    ['1E3', 'DecimalExponent', '1e3', 1000, 1e6],
    ['1e+3', 'DecimalExponent', '1e3', 1000, 1e6],
    ['12e6', 'DecimalExponent', '12e6', 12e6, 12e9],
    ['1.5e3', 'DecimalExponent', '1500', 1500, 1.5e6],
    ['100e0', 'DecimalExponent', '100', 100, 1e5],
    ['1e-3', 'DecimalExponent', '1e-3', 1, 1],
    ['1.5e-10', 'DecimalExponent', '1e-9', 1, 1],
    ['-1.5', 'DecimalSI', '-1500m', -2, -1500],
    ['-1Gi', 'BinarySI', '-1Gi', -(2 ** 30), -(2 ** 30) * 1000],
    ['-0.1m', 'DecimalSI', '-100u', -1, -1],
  ];
  for (const [text, format, canonical, value, milli] of cases) {
    void it(`reads ${JSON.stringify(text)} as ${canonical}`, () => {
      const q = parseQuantity(text);
      assert.equal(q.format, format);
      assert.equal(formatQuantity(q), canonical);
      assert.equal(quantityValue(q), value);
      if (milli === null) assertError(() => quantityMilliValue(q), QUANTITY_OUT_OF_RANGE, 'int64');
      else assert.equal(quantityMilliValue(q), milli);
    });
  }

  void it('holds the value exactly as mantissa × 10^exponent', () => {
    assert.deepEqual(parseQuantity('1.5G'), { mantissa: 15n, exponent: 8, format: 'DecimalSI' });
    assert.deepEqual(parseQuantity('1500M'), { mantissa: 15n, exponent: 8, format: 'DecimalSI' });
    assert.deepEqual(parseQuantity('0.000000001'), { mantissa: 1n, exponent: -9, format: 'DecimalSI' });
    assert.deepEqual(parseQuantity('18446744073709551616'), { mantissa: 18446744073709551616n, exponent: 0, format: 'DecimalSI' });
  });

  void it('caps binary quantities at 2^63-1, silently, but not decimal ones', () => {
    for (const text of ['8Ei', '1024Ei', '99999999999999999999Ki']) {
      const q = parseQuantity(text);
      assert.equal(q.mantissa, (1n << 63n) - 1n, text);
      assert.equal(formatQuantity(q), '9223372036854775807');
    }
    assert.equal(formatQuantity(parseQuantity('-8Ei')), '-9223372036854775807');
    assert.equal(formatQuantity(parseQuantity('18446744073709551616')), '18446744073709551616');
  });

  void it('prints a decimal quantity past "E" with an exponent', () => {
    assert.equal(formatQuantity(parseQuantity('1000E')), '1e21');
    assert.equal(formatQuantity(parseQuantity('10000E')), '10e21');
  });

  void it('handles extreme exponents without building huge numbers', () => {
    const big = parseQuantity('1e2147483647');
    assert.equal(formatQuantity(big), '10e2147483646');
    assert.equal(formatQuantity(parseQuantity('5e-2147483647')), '1e-9');
    assertError(() => quantityValue(big), QUANTITY_OUT_OF_RANGE, 'int64');
  });

  void it('formats quantities that were not normalized', () => {
    assert.equal(formatQuantity({ mantissa: 15360n, exponent: -1, format: 'BinarySI' }), '1536');
    assert.equal(formatQuantity({ mantissa: 0n, exponent: 5, format: 'BinarySI' }), '0');
  });

  void it('names the subject and carries it', () => {
    assert.throws(
      () => parseQuantity('10 Mi', 'containerLogMaxSize'),
      (err: unknown) => {
        assert.ok(err instanceof OrchError);
        assert.equal(err.subject, 'containerLogMaxSize');
        assert.match(err.message, /^invalid quantity "10 Mi" for containerLogMaxSize: unknown suffix " Mi"; expected/);
        return true;
      },
    );
  });

  const invalid: [string, string][] = [
    ['', 'empty'],
    [' 1', 'does not start with a number'],
    ['-', 'does not start with a number'],
    ['.', 'does not start with a number'],
    ['Ki', 'does not start with a number'],
    ['e3', 'does not start with a number'],
    ['--1', 'does not start with a number'],
    ['1 ', 'unknown suffix " "'],
    ['1K', 'unknown suffix "K"'],
    ['1KiB', 'unknown suffix "KiB"'],
    ['1ki', 'unknown suffix "ki"'],
    ['1e', 'unknown suffix "e"'],
    ['1e3e', 'unknown suffix "e3e"'],
    ['1ee3', 'unknown suffix "ee3"'],
    ['1Mi3', 'unknown suffix "Mi3"'],
    ['1.5.5', 'unknown suffix ".5"'],
    ['1,5', 'unknown suffix ",5"'],
    ['1e2147483648', 'exponent 2147483648 is out of range'],
  ];
  for (const [text, message] of invalid) {
    void it(`rejects ${JSON.stringify(text)}`, () => {
      assertError(() => parseQuantity(text), INVALID_QUANTITY, message);
    });
  }
});

void describe('quantity values out of range', () => {
  void it('refuses what does not fit in an int64', () => {
    assertError(() => quantityValue(parseQuantity('18446744073709551616')), QUANTITY_OUT_OF_RANGE, 'int64');
    assertError(() => quantityMilliValue(parseQuantity('10E')), QUANTITY_OUT_OF_RANGE, 'milli-value');
    assert.equal(quantityValue(parseQuantity('9223372036854775807')), 2 ** 63); // the nearest double
    assert.equal(quantityValue(parseQuantity('-9223372036854775808')), -(2 ** 63));
  });
});

void describe('compareQuantities', () => {
  const cases: [string, string, -1 | 0 | 1][] = [
    ['1Gi', '1024Mi', 0],
    ['1Gi', '1G', 1],
    ['1k', '999', 1],
    ['999', '1k', -1],
    ['0.5', '500m', 0],
    ['1e21', '1000E', 0],
    ['1n', '0', 1],
    ['-1', '0', -1],
    ['-2', '-1', -1],
    ['-1.5', '-1500m', 0],
    ['1e2147483647', '9E', 1],
    ['123456789', '123456790', -1],
    ['0Mi', '0', 0],
  ];
  for (const [a, b, expected] of cases) {
    void it(`compares ${a} with ${b}`, () => {
      assert.equal(compareQuantities(parseQuantity(a), parseQuantity(b)), expected);
    });
  }
});

void describe('parseByteSize', () => {
  const cases: [string, number][] = [
    ['0', 0],
    ['512', 512],
    ['1K', 1000],
    ['1.5K', 1500],
    ['1k', 1000],
    ['2Ki', 2048],
    ['3M', 3_000_000],
    ['5Mi', 5 * 2 ** 20],
    ['6Gi', 6 * 2 ** 30],
    ['1.5', 2],
    ['7Pi', 7 * 2 ** 50],
  ];
  for (const [text, bytes] of cases) {
    void it(`reads ${JSON.stringify(text)} as ${bytes} bytes`, () => {
      assert.equal(parseByteSize(text), bytes);
    });
  }

  void it('rejects negative, oversized and malformed sizes, quoting the input and naming the subject', () => {
    assertError(() => parseByteSize('-1'), INVALID_QUANTITY, 'must not be negative');
    assertError(() => parseByteSize('8Pi'), INVALID_QUANTITY, 'at most 9007199254740991 bytes');
    assertError(() => parseByteSize('K'), INVALID_QUANTITY, 'invalid quantity "K"');
    assertError(() => parseByteSize('1KB'), INVALID_QUANTITY, 'unknown suffix "KB"');
    assert.throws(
      () => parseByteSize('-2Ki', '--log-json-info-buffer-size'),
      (err: unknown) => err instanceof OrchError && err.subject === '--log-json-info-buffer-size' && err.message.includes('for --log-json-info-buffer-size'),
    );
  });
});
