import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatMicroTime, formatTime } from './time.js';

void describe('API time formats', () => {
  void it('formats metav1.Time with whole seconds, cutting the fraction', () => {
    assert.equal(formatTime(Date.UTC(2006, 0, 2, 15, 4, 5)), '2006-01-02T15:04:05Z');
    assert.equal(formatTime(Date.UTC(2006, 0, 2, 15, 4, 5, 999)), '2006-01-02T15:04:05Z');
    assert.equal(formatTime(0), '1970-01-01T00:00:00Z');
  });

  void it('formats metav1.MicroTime with six digits, keeping the microseconds of a fractional millisecond', () => {
    assert.equal(formatMicroTime(Date.UTC(2006, 0, 2, 15, 4, 5)), '2006-01-02T15:04:05.000000Z');
    assert.equal(formatMicroTime(Date.UTC(2006, 0, 2, 15, 4, 5, 123)), '2006-01-02T15:04:05.123000Z');
    assert.equal(formatMicroTime(Date.UTC(2006, 0, 2, 15, 4, 5, 123) + 0.456), '2006-01-02T15:04:05.123456Z');
    assert.equal(formatMicroTime(Date.UTC(2006, 0, 2, 15, 4, 5, 999) + 0.5), '2006-01-02T15:04:05.999500Z');
  });
});
