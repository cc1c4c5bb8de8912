import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { constants, createDeflate } from 'node:zlib';
import { adler32, CONTROL, FrameReader, FrameWriter, SPDY_DICTIONARY, SpdyProtocolError, type Frame } from './spdy.js';

/** A header block as a zlib peer (Go's framer) writes it: deflated with the dictionary, sync-flushed. */
function deflated(pairs: Record<string, string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32BE(Object.keys(pairs).length);
  parts.push(count);
  for (const [k, v] of Object.entries(pairs)) {
    for (const t of [k, v]) {
      const n = Buffer.alloc(4);
      n.writeUInt32BE(Buffer.byteLength(t));
      parts.push(n, Buffer.from(t));
    }
  }
  const deflate = createDeflate({ dictionary: SPDY_DICTIONARY });
  const out: Buffer[] = [];
  deflate.on('data', (d: Buffer) => out.push(d));
  deflate.write(Buffer.concat(parts));
  return new Promise((resolve) => {
    deflate.flush(constants.Z_SYNC_FLUSH, () => {
      resolve(Buffer.concat(out));
    });
  });
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8003, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE((flags << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

void describe('SPDY/3.1 framing', () => {
  void it('has the dictionary of the spec (its length and zlib id)', () => {
    assert.equal(SPDY_DICTIONARY.length, 1423);
    assert.equal(adler32(SPDY_DICTIONARY), 0xe3c6a7c2);
    assert.equal(adler32(Buffer.from('Wikipedia')), 0x11e60398);
  });

  void it('reads back what it writes, headers included, across chunk boundaries', () => {
    const writer = new FrameWriter();
    const bytes = Buffer.concat([
      writer.synStream(1, { streamtype: 'error' }),
      writer.synStream(3, { streamType: 'stdin', port: '8080' }),
      writer.data(3, Buffer.from('hello')),
      writer.data(3, Buffer.alloc(0), true),
      writer.synReply(5, {}, true),
      writer.rstStream(3, 5),
      writer.ping(7),
      writer.goAway(3),
    ]);
    const reader = new FrameReader();
    const frames: Frame[] = [];
    for (let i = 0; i < bytes.length; i += 7) frames.push(...reader.push(bytes.subarray(i, i + 7)));
    assert.deepEqual(frames, [
      { type: 'synStream', streamId: 1, associatedId: 0, fin: false, headers: { streamtype: 'error' } },
      { type: 'synStream', streamId: 3, associatedId: 0, fin: false, headers: { streamtype: 'stdin', port: '8080' } },
      { type: 'data', streamId: 3, fin: false, data: Buffer.from('hello') },
      { type: 'data', streamId: 3, fin: true, data: Buffer.alloc(0) },
      { type: 'synReply', streamId: 5, fin: true, headers: {} },
      { type: 'rstStream', streamId: 3, status: 5 },
      { type: 'ping', id: 7 },
      { type: 'goAway', lastStreamId: 3, status: 0 },
    ]);
  });

  void it('writes header blocks a zlib reader with the dictionary inflates, each ending with a sync flush', async () => {
    const writer = new FrameWriter();
    const first = writer.synStream(1, { streamtype: 'error' });
    const second = writer.synStream(3, { streamtype: 'stdout' });
    // The zlib header (with the dictionary's id) only once, in the first block.
    assert.deepEqual([...first.subarray(18, 24)], [0x78, 0x20, 0xe3, 0xc6, 0xa7, 0xc2]);
    assert.notEqual(second[18], 0x78);
    for (const frame of [first, second]) assert.deepEqual([...frame.subarray(-5)], [0, 0, 0, 0xff, 0xff]);
    // A peer's reader keeps one zlib stream: the second block reads on from the first.
    const reader = new FrameReader();
    assert.deepEqual(reader.push(Buffer.concat([first, second])).map((f) => (f.type === 'synStream' ? f.headers : {})), [{ streamtype: 'error' }, { streamtype: 'stdout' }]);
    // And it reads blocks a real compressor made (what containerd's Go framer sends).
    const id = Buffer.alloc(4);
    id.writeUInt32BE(9);
    const reply = control(CONTROL.synReply, 0, Buffer.concat([id, await deflated({ status: '200' })]));
    assert.deepEqual(new FrameReader().push(reply), [{ type: 'synReply', streamId: 9, fin: false, headers: { status: '200' } }]);
  });

  void it('waits for the rest of a frame, and refuses other versions and short frames', () => {
    const reader = new FrameReader();
    const ping = new FrameWriter().ping(1);
    assert.deepEqual(reader.push(ping.subarray(0, 5)), []);
    assert.deepEqual(reader.push(ping.subarray(5)), [{ type: 'ping', id: 1 }]);
    const v2 = Buffer.from(ping);
    v2.writeUInt16BE(0x8002, 0);
    assert.throws(() => new FrameReader().push(v2), SpdyProtocolError);
    assert.throws(() => new FrameReader().push(control(CONTROL.rstStream, 0, Buffer.alloc(4))), /too short/);
    assert.deepEqual(new FrameReader().push(control(CONTROL.settings, 0, Buffer.alloc(4))), [{ type: 'settings', control: CONTROL.settings }]);
  });
});
