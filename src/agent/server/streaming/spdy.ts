/**
 * SPDY/3.1 framing, as far as the Kubernetes streaming protocols use it (remotecommand and
 * portforward over an upgraded HTTP connection): data frames and the control frames SYN_STREAM,
 * SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS and WINDOW_UPDATE, with header blocks
 * compressed in one zlib context per direction over SPDY/3's dictionary.
 *
 * Our own framing rather than a library: the npm SPDY packages (spdy, spdy-transport) are
 * unmaintained since 2018-2020 and model SPDY as HTTP transport (pseudo-headers, request and
 * response streams), not the raw streams these protocols open. Flow control is not enforced
 * (Kubernetes' SPDY peers neither send nor honour WINDOW_UPDATE); frames are only parsed and built.
 *
 * Header blocks we send are written as stored (uncompressed) deflate blocks inside the zlib
 * stream, each ended as a sync flush ends (an empty stored block), which needs no compressor
 * state besides "the zlib header was sent"; blocks we receive are inflated with the
 * dictionary, keeping the peer's stream as it goes.
 */
import { constants, inflateSync } from 'node:zlib';

export const SPDY_VERSION = 3;

/** The header names whose values the protocols read (lowercase on the wire). */
export type SpdyHeaders = Readonly<Record<string, string>>;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

export const CONTROL = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8, windowUpdate: 9 } as const;

/** RST_STREAM status codes. */
export const RST = { protocolError: 1, invalidStream: 2, refusedStream: 3, cancel: 5, internalError: 6 } as const;

export type Frame =
  | { readonly type: 'data'; readonly streamId: number; readonly fin: boolean; readonly data: Buffer }
  | { readonly type: 'synStream'; readonly streamId: number; readonly associatedId: number; readonly fin: boolean; readonly headers: SpdyHeaders }
  | { readonly type: 'synReply' | 'headers'; readonly streamId: number; readonly fin: boolean; readonly headers: SpdyHeaders }
  | { readonly type: 'rstStream'; readonly streamId: number; readonly status: number }
  | { readonly type: 'ping'; readonly id: number }
  | { readonly type: 'goAway'; readonly lastStreamId: number; readonly status: number }
  | { readonly type: 'windowUpdate'; readonly streamId: number; readonly delta: number }
  | { readonly type: 'settings' | 'other'; readonly control: number };

const WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
  'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie',
  'keep-alive', 'origin',
];
const TAIL = '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505'
  + '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized'
  + '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable'
  + 'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT'
  + 'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,'
  + 'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** SPDY/3's zlib dictionary: each word behind its 4-byte length, then the tail (spec section 2.6.10.1). */
export const SPDY_DICTIONARY: Buffer = Buffer.concat([
  ...WORDS.map((w) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(w.length);
    return Buffer.concat([length, Buffer.from(w, 'latin1')]);
  }),
  Buffer.from(TAIL, 'latin1'),
]);

export function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

function headerBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  const entries = Object.entries(headers);
  count.writeUInt32BE(entries.length);
  parts.push(count);
  for (const [name, value] of entries) {
    for (const text of [name.toLowerCase(), value]) {
      const bytes = Buffer.from(text, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      parts.push(length, bytes);
    }
  }
  return Buffer.concat(parts);
}

function parseHeaderBlock(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  let offset = 0;
  const read = (): string => {
    if (offset + 4 > block.length) throw new SpdyProtocolError('a header block ends inside a length');
    const length = block.readUInt32BE(offset);
    offset += 4;
    if (offset + length > block.length) throw new SpdyProtocolError('a header block ends inside a name or value');
    const text = block.toString('utf8', offset, offset + length);
    offset += length;
    return text;
  };
  if (block.length < 4) throw new SpdyProtocolError('a header block without its count');
  const count = block.readUInt32BE(0);
  offset = 4;
  for (let i = 0; i < count; i++) {
    const name = read();
    headers[name] = read();
  }
  return headers;
}

export class SpdyProtocolError extends Error {
  constructor(message: string) {
    super(`SPDY: ${message}`);
    this.name = 'SpdyProtocolError';
  }
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** Builds the frames one side of a session sends (one header compression context). */
export class FrameWriter {
  private zlibHeaderSent = false;

  /** The header block compressed as stored deflate blocks in our zlib stream. */
  private compress(headers: SpdyHeaders): Buffer {
    const raw = headerBlock(headers);
    const parts: Buffer[] = [];
    if (!this.zlibHeaderSent) {
      this.zlibHeaderSent = true;
      // CMF deflate/32K window; FLG with FDICT (0x7820 is a multiple of 31); the dictionary's id.
      const id = Buffer.alloc(4);
      id.writeUInt32BE(adler32(SPDY_DICTIONARY));
      parts.push(Buffer.from([0x78, 0x20]), id);
    }
    let offset = 0;
    do {
      const chunk = raw.subarray(offset, offset + 0xffff);
      const head = Buffer.alloc(5);
      head.writeUInt16LE(chunk.length, 1);
      head.writeUInt16LE(~chunk.length & 0xffff, 3);
      parts.push(head, chunk);
      offset += chunk.length;
    } while (offset < raw.length);
    // An empty stored block, as a sync flush ends with: a reader returns what it has there
    // instead of reading on into the next frame.
    parts.push(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]));
    return Buffer.concat(parts);
  }

  synStream(streamId: number, headers: SpdyHeaders, fin = false): Buffer {
    const ids = Buffer.alloc(10);
    ids.writeUInt32BE(streamId & 0x7fffffff, 0);
    ids.writeUInt32BE(0, 4);
    return controlFrame(CONTROL.synStream, fin ? FLAG_FIN : 0, Buffer.concat([ids, this.compress(headers)]));
  }

  synReply(streamId: number, headers: SpdyHeaders, fin = false): Buffer {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(streamId & 0x7fffffff);
    return controlFrame(CONTROL.synReply, fin ? FLAG_FIN : 0, Buffer.concat([id, this.compress(headers)]));
  }

  data(streamId: number, data: Buffer, fin = false): Buffer {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(streamId & 0x7fffffff, 0);
    head.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4);
    return Buffer.concat([head, data]);
  }

  rstStream(streamId: number, status: number): Buffer {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(streamId & 0x7fffffff, 0);
    payload.writeUInt32BE(status, 4);
    return controlFrame(CONTROL.rstStream, 0, payload);
  }

  ping(id: number): Buffer {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(id >>> 0);
    return controlFrame(CONTROL.ping, 0, payload);
  }

  goAway(lastStreamId: number, status = 0): Buffer {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
    payload.writeUInt32BE(status, 4);
    return controlFrame(CONTROL.goAway, 0, payload);
  }
}

/** The largest frame we accept (16 MiB: SPDY's 24-bit length). */
const MAX_FRAME = 0xffffff;

/** Parses the frames of the other side from the bytes as they arrive. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private compressed: Buffer = Buffer.alloc(0);
  private inflated = 0;

  /** The header block of a control frame, inflated in the peer's zlib stream. */
  private decompress(block: Buffer): Record<string, string> {
    this.compressed = Buffer.concat([this.compressed, block]);
    let all: Buffer;
    try {
      all = inflateSync(this.compressed, { dictionary: SPDY_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
    } catch (err) {
      throw new SpdyProtocolError(`a header block cannot be inflated: ${err instanceof Error ? err.message : String(err)}`);
    }
    const fresh = all.subarray(this.inflated);
    this.inflated = all.length;
    return parseHeaderBlock(fresh);
  }

  /** The complete frames in the bytes so far (a partial frame waits for more). Throws SpdyProtocolError. */
  push(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Frame[] = [];
    while (this.buffered.length >= 8) {
      const length = this.buffered.readUInt32BE(4) & MAX_FRAME;
      if (this.buffered.length < 8 + length) break;
      const head = this.buffered.subarray(0, 8);
      const payload = this.buffered.subarray(8, 8 + length);
      this.buffered = this.buffered.subarray(8 + length);
      frames.push(this.parse(head, payload));
    }
    return frames;
  }

  private parse(head: Buffer, payload: Buffer): Frame {
    const flags = head[4] ?? 0;
    const fin = (flags & FLAG_FIN) !== 0;
    if ((head[0] ?? 0) < 0x80) return { type: 'data', streamId: head.readUInt32BE(0) & 0x7fffffff, fin, data: Buffer.from(payload) };
    const version = head.readUInt16BE(0) & 0x7fff;
    if (version !== SPDY_VERSION) throw new SpdyProtocolError(`version ${version} is not 3`);
    const control = head.readUInt16BE(2);
    const need = (n: number): void => {
      if (payload.length < n) throw new SpdyProtocolError(`control frame ${control} is too short (${payload.length} bytes)`);
    };
    switch (control) {
      case CONTROL.synStream:
        need(10);
        return { type: 'synStream', streamId: payload.readUInt32BE(0) & 0x7fffffff, associatedId: payload.readUInt32BE(4) & 0x7fffffff, fin, headers: this.decompress(payload.subarray(10)) };
      case CONTROL.synReply:
      case CONTROL.headers:
        need(4);
        return { type: control === CONTROL.synReply ? 'synReply' : 'headers', streamId: payload.readUInt32BE(0) & 0x7fffffff, fin, headers: this.decompress(payload.subarray(4)) };
      case CONTROL.rstStream:
        need(8);
        return { type: 'rstStream', streamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.readUInt32BE(4) };
      case CONTROL.ping:
        need(4);
        return { type: 'ping', id: payload.readUInt32BE(0) };
      case CONTROL.goAway:
        need(4);
        return { type: 'goAway', lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.length >= 8 ? payload.readUInt32BE(4) : 0 };
      case CONTROL.windowUpdate:
        need(8);
        return { type: 'windowUpdate', streamId: payload.readUInt32BE(0) & 0x7fffffff, delta: payload.readUInt32BE(4) & 0x7fffffff };
      case CONTROL.settings:
        return { type: 'settings', control };
      default:
        return { type: 'other', control };
    }
  }
}
