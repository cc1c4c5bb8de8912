import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { OrchError } from './errors.js';
import {
  HOUR,
  INVALID_DURATION,
  MICROSECOND,
  MILLISECOND,
  MINUTE,
  SECOND,
  durationFromMs,
  durationToMs,
  formatDuration,
  parseDuration,
  parseDurationField,
} from './duration.js';

const MAX_INT64 = 2 ** 63; // the largest int64, 2^63-1, as a double (which rounds it to 2^63)

function assertInvalid(fn: () => unknown, includes: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof OrchError);
    assert.equal(err.code, INVALID_DURATION);
    assert.equal(err.category, 'invalid');
    assert.ok(err.message.includes(includes), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(includes)}`);
    return true;
  });
}

void describe('parseDuration', () => {
  const valid: [string, number][] = [
    ['0', 0],
    ['-0', 0],
    ['+0', 0],
    ['0s', 0],
    ['5s', 5 * SECOND],
    ['30s', 30 * SECOND],
    ['1478s', 1478 * SECOND],
    ['-5s', -5 * SECOND],
    ['+5s', 5 * SECOND],
    ['5.0s', 5 * SECOND],
    ['5.6s', 5 * SECOND + 600 * MILLISECOND],
    ['5.s', 5 * SECOND],
    ['.5s', 500 * MILLISECOND],
    ['1.004s', SECOND + 4 * MILLISECOND],
    ['100.00100s', 100 * SECOND + MILLISECOND],
    ['10ns', 10],
    ['11us', 11 * MICROSECOND],
    ['12µs', 12 * MICROSECOND],
    ['12μs', 12 * MICROSECOND],
    ['13ms', 13 * MILLISECOND],
    ['300ms', 300 * MILLISECOND],
    ['15m', 15 * MINUTE],
    ['16h', 16 * HOUR],
    ['-1.5h', -90 * MINUTE],
    ['2h45m', 2 * HOUR + 45 * MINUTE],
    ['1m30.5s', 90 * SECOND + 500 * MILLISECOND],
    ['10.5s4m', 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND],
    ['-2m3.4s', -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)],
    ['1h2m3s4ms5us6ns', HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6],
    ['39h9m14.425s', 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND],
    ['4h0m0s', 4 * HOUR],
    ['52763797000ns', 52763797000],
    ['0.3333333333333333333h', 20 * MINUTE],
    ['0.100000000000000000000h', 6 * MINUTE],
    // Fraction digits beyond int64 are ignored, and the share is truncated through a double, as in Go.
    ['0.830103483285477580700h', 49 * MINUTE + 48 * SECOND + 372539827],
    ['8760h', 8760 * HOUR],
    ['9223372036854775807ns', MAX_INT64],
    ['9223372036854775.807us', MAX_INT64],
    ['9223372036s854ms775us807ns', MAX_INT64],
    ['-9223372036854775808ns', -MAX_INT64],
    ['-9223372036854775.808us', -MAX_INT64],
  ];
  for (const [text, ns] of valid) {
    void it(`parses ${JSON.stringify(text)}`, () => {
      assert.equal(parseDuration(text), ns);
    });
  }

  void it('keeps integers exact up to 2^53 ns', () => {
    assert.equal(parseDuration('9007199254740991ns'), Number.MAX_SAFE_INTEGER);
    assert.equal(parseDuration('2501h59m59.999999999s'), 2501 * HOUR + 59 * MINUTE + 59 * SECOND + 999999999);
  });

  const invalid: [string, string][] = [
    ['', 'empty'],
    ['3', 'missing its unit'],
    ['00', 'missing its unit'],
    ['1d', 'unknown unit "d"'],
    ['1h ', 'unknown unit "h "'],
    [' 1h', 'cannot start a number'],
    ['h', 'cannot start a number'],
    ['-', 'sign'],
    ['+', 'sign'],
    ['.', 'at least one digit'],
    ['-.', 'at least one digit'],
    ['.s', 'at least one digit'],
    ['+.s', 'at least one digit'],
    ['1h-1m', 'unknown unit "h-"'],
    ['1s2', 'missing its unit'],
    ['1e3s', 'unknown unit "e"'],
    ['9223372036854775808ns', 'out of range'],
    ['9223372036854ms775us808ns', 'out of range'],
    ['-9223372036854775809ns', 'out of range'],
    ['2562048h', 'out of range'],
    ['99999999999999999999ns', 'out of range'],
  ];
  for (const [text, message] of invalid) {
    void it(`rejects ${JSON.stringify(text)}`, () => {
      assertInvalid(() => parseDuration(text), message);
    });
  }

  void it('quotes the input and lists the allowed forms', () => {
    assertInvalid(() => parseDuration('1d'), 'invalid duration "1d": unknown unit "d"; expected a decimal number with a unit (ns, us, µs, ms, s, m, h)');
  });
});

void describe('parseDurationField', () => {
  void it('parses like parseDuration', () => {
    assert.equal(parseDurationField('2m0s', '--runtime-request-timeout'), 2 * MINUTE);
  });

  void it('names and carries the subject', () => {
    assert.throws(
      () => parseDurationField('10 s', 'syncFrequency'),
      (err: unknown) => {
        assert.ok(err instanceof OrchError);
        assert.equal(err.subject, 'syncFrequency');
        assert.equal(err.code, INVALID_DURATION);
        assert.match(err.message, /^invalid duration "10 s" for syncFrequency: unknown unit " s"/);
        return true;
      },
    );
  });
});

void describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [1, '1ns'],
    [999, '999ns'],
    [1100, '1.1µs'],
    [1500, '1.5µs'],
    [2200 * MICROSECOND, '2.2ms'],
    [100 * MILLISECOND, '100ms'],
    [300 * MILLISECOND, '300ms'],
    [3300 * MILLISECOND, '3.3s'],
    [90 * SECOND, '1m30s'],
    [4 * MINUTE + 5 * SECOND, '4m5s'],
    [4 * MINUTE + 5001 * MILLISECOND, '4m5.001s'],
    [5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND, '5h6m7.001s'],
    [8 * MINUTE + 1, '8m0.000000001s'],
    [4 * HOUR, '4h0m0s'],
    [2 * HOUR + 45 * MINUTE, '2h45m0s'],
    [-MINUTE, '-1m0s'],
    [-1500 * MICROSECOND, '-1.5ms'],
    [-1, '-1ns'],
    [MAX_INT64, '2562047h47m16.854775807s'],
    [-MAX_INT64, '-2562047h47m16.854775808s'],
    [1e30, '2562047h47m16.854775807s'],
    [1.4, '1ns'],
    [-0.6, '-1ns'],
  ];
  for (const [ns, text] of cases) {
    void it(`formats ${ns} as ${text}`, () => {
      assert.equal(formatDuration(ns), text);
    });
  }

  void it('round-trips what it prints', () => {
    for (const text of ['0s', '1.5µs', '300ms', '1m30s', '2h45m0s', '-1m0s', '8760h0m0s', '2562047h47m16.854775807s']) {
      assert.equal(formatDuration(parseDuration(text)), text);
    }
  });

  void it('rejects non-finite numbers', () => {
    assertInvalid(() => formatDuration(Number.NaN), 'finite');
    assertInvalid(() => formatDuration(Number.POSITIVE_INFINITY), 'finite');
  });
});

void describe('millisecond conversions', () => {
  void it('truncates toward zero like Duration.Milliseconds()', () => {
    assert.equal(durationToMs(1900 * MICROSECOND), 1);
    assert.equal(durationToMs(-1900 * MICROSECOND), -1);
    assert.ok(Object.is(durationToMs(-500 * MICROSECOND), 0));
    assert.equal(durationToMs(2 * MINUTE), 120_000);
    assert.equal(durationToMs(parseDuration('2501h')), 2501 * 3_600_000);
  });

  void it('converts milliseconds to nanoseconds', () => {
    assert.equal(durationFromMs(1.5), 1_500_000);
    assert.equal(durationFromMs(0.0003), 300);
    assert.ok(Object.is(durationFromMs(-0), 0));
  });
});
