import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { QUOTE_LIMIT, quoteValue, truncateText } from './quote.js';

void describe('quoteValue', () => {
  void it('quotes a short string as JSON', () => {
    assert.equal(quoteValue('a b\n'), '"a b\\n"');
  });

  void it('cuts a long string to the limit and says how much it left out', () => {
    const q = quoteValue('x'.repeat(4 * 1024 * 1024));
    assert.equal(q, `"${'x'.repeat(QUOTE_LIMIT)}"... (${4 * 1024 * 1024 - QUOTE_LIMIT} more)`);
  });

  void it('shows other values as JSON, cut too', () => {
    assert.equal(quoteValue(12), '12');
    assert.equal(quoteValue({ a: 1 }), '{"a":1}');
    assert.match(quoteValue(Array.from({ length: 1000 }, () => 1)), /\.\.\. \(\d+ more\)$/);
    assert.equal(quoteValue(undefined), 'undefined');
    assert.equal(quoteValue(10n), '10');
  });

  void it('truncateText leaves short text alone', () => {
    assert.equal(truncateText('abc', 2), 'ab... (1 more)');
    assert.equal(truncateText('abc'), 'abc');
  });
});
