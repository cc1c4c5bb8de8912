import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';

import { relayBoth } from './relay.js';

/** A side that drains slowly: one chunk at a time, each write completing on a later turn. */
function slowSide(received: Buffer[]): Duplex {
  return new Duplex({
    writableHighWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk);
      setImmediate(callback);
    },
    read() {
      // Sends nothing: only the other side talks.
    },
  });
}

/** A side that sends `chunks` at once and ends, as a runtime that writes an exec's status and closes. */
function talkingSide(chunks: readonly string[]): Duplex {
  const side = new Duplex({
    write(_chunk, _encoding, callback) {
      callback();
    },
    read() {
      // Everything is pushed at once below.
    },
  });
  for (const c of chunks) side.push(c);
  side.push(null);
  return side;
}

function finishedOrDestroyed(side: Duplex): Promise<'finish' | 'close'> {
  return new Promise((resolve) => {
    side.once('finish', () => { resolve('finish'); });
    side.once('close', () => { resolve('close'); });
  });
}

void describe('relayBoth', () => {
  void it('ends the other side only after what it was sent is written, so a last status is not dropped', async () => {
    const received: Buffer[] = [];
    const client = slowSide(received);
    const chunks = ['stdout: hello\n', 'stderr: ', '{"status":"Failure","reason":"NonZeroExitCode"}'];
    const runtime = talkingSide(chunks);
    const errors: Error[] = [];
    relayBoth(client, runtime, { idleTimeoutMs: 0, onError: (err) => errors.push(err) });
    const how = await finishedOrDestroyed(client);
    assert.equal(how, 'finish', 'the client side ended gracefully, not destroyed');
    assert.equal(Buffer.concat(received).toString(), chunks.join(''));
    assert.deepEqual(errors, []);
    client.destroy();
    runtime.destroy();
  });

  void it('destroys both sides when one fails', async () => {
    const a = slowSide([]);
    const b = talkingSide([]);
    const errors: string[] = [];
    relayBoth(a, b, { idleTimeoutMs: 0, onError: (err) => errors.push(err.message) });
    const closed = finishedOrDestroyed(a);
    b.destroy(new Error('reset by peer'));
    await closed;
    assert.equal(a.destroyed, true);
    assert.deepEqual(errors, ['reset by peer']);
  });
});
