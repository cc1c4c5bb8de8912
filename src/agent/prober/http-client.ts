/**
 * A minimal HTTP/1.1 GET over one fresh TCP (or TLS, without certificate checks) connection,
 * for probes and hooks: the request line, the given headers and `Connection: close`; the
 * answer's status, Location and at most `maxBody` bytes of its body (Content-Length, chunked,
 * or until the peer closes). Nothing else of HTTP is needed here, and node:http's client costs
 * several times more CPU per request — hundreds of probes a second add up.
 */
import net from 'node:net';
import tls from 'node:tls';
import { quoteValue } from '../../api/quote.js';

export interface RawResponse {
  readonly status: number;
  readonly location: string | undefined;
  readonly body: string;
}

/** The request did not finish within its time (or was aborted). */
export class HttpTimeoutError extends Error {
  constructor() {
    super('timeout');
    this.name = 'HttpTimeoutError';
  }
}

const MAX_HEADER_BYTES = 64 * 1024;
const CRLF = Buffer.from('\r\n');

function requestText(url: URL, headers: Readonly<Record<string, string>>): string {
  let text = `GET ${url.pathname === '' ? '/' : url.pathname}${url.search} HTTP/1.1\r\n`;
  if (headers.host === undefined) text += `host: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(value) || /[\r\n:]/.test(name)) throw new Error(`invalid header ${quoteValue(name)}`);
    text += `${name}: ${value}\r\n`;
  }
  return `${text}connection: close\r\n\r\n`;
}

/** Decodes a chunked body as far as it has arrived: the data so far and whether the last chunk came. */
function dechunk(raw: Buffer): { data: Buffer; done: boolean } {
  const parts: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = raw.indexOf(CRLF, i);
    if (eol < 0) return { data: Buffer.concat(parts), done: false };
    const size = Number.parseInt(raw.subarray(i, eol).toString('latin1').split(';')[0] ?? '', 16);
    if (Number.isNaN(size)) throw new Error('malformed chunked body');
    if (size === 0) return { data: Buffer.concat(parts), done: true };
    const start = eol + 2;
    if (raw.length < start + size) return { data: Buffer.concat([...parts, raw.subarray(start)]), done: false };
    parts.push(raw.subarray(start, start + size));
    i = start + size + 2;
  }
}

interface Head {
  readonly status: number;
  readonly headers: Map<string, string>;
}

function parseHead(text: string): Head {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (match === null) throw new Error(`malformed HTTP response: ${quoteValue(statusLine.slice(0, 80))}`);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(match[1]), headers };
}

/** One GET; rejects with the socket's error, a parse error, or HttpTimeoutError. */
export function rawGet(url: URL, headers: Readonly<Record<string, string>>, maxBody: number, timeoutMs: number, signal?: AbortSignal): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let text: string;
    try {
      text = requestText(url, headers);
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const secure = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    const socket = secure
      ? tls.connect({ host, port, rejectUnauthorized: false, ...(net.isIP(host) === 0 ? { servername: host } : {}) })
      : net.connect({ host, port });
    let buffered: Buffer = Buffer.alloc(0);
    let head: Head | undefined;
    let bodyStart = 0;
    let settled = false;
    const settle = (err: Error | undefined, res?: RawResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      socket.destroy();
      if (err !== undefined) reject(err);
      else if (res !== undefined) resolve(res);
    };
    const abort = (): void => {
      settle(new HttpTimeoutError());
    };
    const timer = setTimeout(abort, Math.max(1, timeoutMs));
    signal?.addEventListener('abort', abort, { once: true });
    /** Resolves when the body is complete (or long enough); returns whether it did. */
    const tryFinish = (ended: boolean): boolean => {
      if (head === undefined) return false;
      const raw = buffered.subarray(bodyStart);
      const finish = (body: Buffer): true => {
        settle(undefined, { status: head?.status ?? 0, location: head?.headers.get('location'), body: body.subarray(0, maxBody).toString('utf8') });
        return true;
      };
      if (head.status === 204 || head.status === 304 || (head.status >= 100 && head.status < 200)) return finish(Buffer.alloc(0));
      if (head.headers.get('transfer-encoding')?.toLowerCase().includes('chunked') === true) {
        const { data, done } = dechunk(raw);
        return done || ended || data.length >= maxBody ? finish(data) : false;
      }
      const length = Number(head.headers.get('content-length') ?? Number.NaN);
      if (Number.isInteger(length)) return raw.length >= Math.min(length, maxBody) || ended ? finish(raw.subarray(0, length)) : false;
      return ended || raw.length >= maxBody ? finish(raw) : false;
    };
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      socket.write(text);
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      try {
        if (head === undefined) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end < 0) {
            if (buffered.length > MAX_HEADER_BYTES) settle(new Error('HTTP response headers too large'));
            return;
          }
          head = parseHead(buffered.subarray(0, end).toString('latin1'));
          bodyStart = end + 4;
        }
        tryFinish(false);
      } catch (err) {
        settle(err instanceof Error ? err : new Error(String(err)));
      }
    });
    socket.once('end', () => {
      if (!tryFinish(true)) settle(new Error('EOF'));
    });
    socket.once('error', (err: Error) => {
      settle(err);
    });
    socket.once('close', () => {
      settle(new Error('EOF'));
    });
  });
}
