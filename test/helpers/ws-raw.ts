/**
 * A bare WebSocket client over TLS for the subprotocols the `ws` client refuses to offer:
 * kubectl's `SPDY/3.1+portforward.k8s.io` is no RFC 7230 token. It does the handshake (the
 * answer's head is kept), sends masked binary messages and reads the server's unfragmented
 * binary messages; enough for the tunnel tests.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect, type TLSSocket } from 'node:tls';
import { waitFor } from './wait.js';

export interface RawWebSocket {
  /** The status line and headers of the handshake's answer. */
  readonly head: string;
  /** Payloads of the binary messages received so far. */
  readonly messages: Buffer[];
  send(payload: Buffer): void;
  close(): void;
}

export interface RawWebSocketOptions {
  readonly port: number;
  readonly path: string;
  readonly protocol: string;
  readonly headers?: Record<string, string>;
  readonly cert?: string;
  readonly key?: string;
  readonly ca?: string;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const length = payload.length;
  const head = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length])
    : length < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff])
      : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), Buffer.from([0, 0, 0, 0]), Buffer.from([length >>> 24, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff])]);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([head, mask, masked]);
}

export async function openRawWebSocket(o: RawWebSocketOptions): Promise<RawWebSocket> {
  const socket: TLSSocket = connect({ host: '127.0.0.1', port: o.port, rejectUnauthorized: o.ca !== undefined, servername: 'localhost', ...(o.ca === undefined ? {} : { ca: o.ca }), ...(o.cert === undefined ? {} : { cert: o.cert, key: o.key }) });
  await once(socket, 'secureConnect');
  const extra = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`GET ${o.path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n`
    + `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Protocol: ${o.protocol}\r\n${extra}\r\n`);
  let buffered = Buffer.alloc(0);
  let head = '';
  const messages: Buffer[] = [];
  socket.on('data', (d: Buffer) => {
    buffered = Buffer.concat([buffered, d]);
    if (head === '') {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      head = buffered.subarray(0, end).toString('latin1');
      buffered = buffered.subarray(end + 4);
    }
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = (buffered[0] ?? 0) & 0x0f;
      let length = (buffered[1] ?? 0) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffered.length < offset + length) return;
      if (opcode === 2) messages.push(Buffer.from(buffered.subarray(offset, offset + length)));
      buffered = buffered.subarray(offset + length);
    }
  });
  await waitFor(`the WebSocket handshake of ${o.path}`, () => head !== '' || socket.destroyed);
  return {
    head,
    messages,
    send: (payload) => {
      socket.write(frame(2, payload));
    },
    close: () => {
      socket.end(frame(8, Buffer.from([0x03, 0xe8])));
    },
  };
}
