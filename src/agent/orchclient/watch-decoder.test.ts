import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import type { WatchEvent } from './rest-types.js';
import { createWatchDecoder, parseWatchLine, ORCHCLIENT_WATCH_DECODE_FAILED } from './watch-decoder.js';

const stream = [
  { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' }, data: { k: 'é✓' } } },
  { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
  { type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: '10' } } },
].map((e) => JSON.stringify(e)).join('\n') + '\n';

const isDecodeError = (err: unknown): boolean => err instanceof OrchError && err.code === ORCHCLIENT_WATCH_DECODE_FAILED;

void describe('watch lines', () => {
  void it('decodes the same events whatever the chunk boundaries (also inside a UTF-8 character)', () => {
    const bytes = Buffer.from(stream, 'utf8');
    const whole: WatchEvent[] = [];
    const d0 = createWatchDecoder<Record<string, unknown>>((e) => whole.push(e));
    d0.push(bytes);
    d0.end();
    assert.deepEqual(whole.map((e) => e.type), ['ADDED', 'BOOKMARK', 'DELETED']);
    assert.equal((whole[0]?.object.data as { k: string }).k, 'é✓');
    for (const size of [1, 2, 3, 7, 50]) {
      const seen: WatchEvent[] = [];
      const d = createWatchDecoder<Record<string, unknown>>((e) => seen.push(e));
      for (let i = 0; i < bytes.length; i += size) d.push(bytes.subarray(i, i + size));
      d.end();
      assert.deepEqual(seen, whole, `chunks of ${size} bytes`);
    }
  });

  void it('skips blank lines, accepts CRLF, and decodes a last line without its newline', () => {
    const seen: string[] = [];
    const d = createWatchDecoder((e) => seen.push(e.type));
    d.push('\n\r\n{"type":"ADDED","object":{}}\r\n\n{"type":"MODIFIED",');
    assert.deepEqual(seen, ['ADDED']);
    d.push('"object":{}}');
    assert.deepEqual(seen, ['ADDED']);
    d.end();
    assert.deepEqual(seen, ['ADDED', 'MODIFIED']);
  });

  void it('refuses lines that are not watch events', () => {
    assert.throws(() => parseWatchLine('{"type":"ADDED"'), isDecodeError);
    assert.throws(() => parseWatchLine('{"type":"UPSERTED","object":{}}'), isDecodeError);
    assert.throws(() => parseWatchLine('{"type":"ADDED","object":null}'), isDecodeError);
    assert.throws(() => parseWatchLine('[1]'), isDecodeError);
    const d = createWatchDecoder(() => undefined);
    assert.throws(() => { d.push('not json\n'); }, isDecodeError);
    const e = createWatchDecoder(() => undefined);
    e.push('{"type":"ADDED"');
    assert.throws(() => { e.end(); }, isDecodeError);
  });
});
