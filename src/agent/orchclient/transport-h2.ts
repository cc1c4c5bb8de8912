/**
 * HTTP/2 to the API server, as client-go speaks it: one TLS connection per transport that carries
 * every request and watch as streams (kube-apiserver and orch-apiserver offer h2 in ALPN). The
 * connection is made with ALPN h2 and http/1.1; a server that picks http/1.1 (or none) is
 * remembered as one, and the transport sends over HTTP/1.1 from then on.
 *
 * A session is replaced when it goes away (GOAWAY, a closed socket, an error) and when it stops
 * answering: a request that times out sends a PING, and a session that does not answer it within
 * PING_TIMEOUT_MS is destroyed (client-go's HTTP/2 health check does the same with its read-idle
 * PING), so that a dead connection does not keep failing every later request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { connect as http2Connect, constants as h2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import type { Readable } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { OrchError } from '../../api/errors.js';
import { ORCHCLIENT_TIMEOUT } from './status.js';

const PING_TIMEOUT_MS = 15_000;
/**
 * Flow-control windows, as Go's HTTP/2 transport under client-go opens them (4 MiB per stream; the
 * connection's here 16 MiB, Go's 1 GiB): HTTP/2's default of 64 KiB would stop a watch's events in
 * the server after 64 KiB that a busy agent has not read yet, and the server ends a watch whose
 * events wait too long (the agent then lists again); over HTTP/1.1 the kernel's socket buffers
 * hold that much.
 */
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 16 << 20;

/** What a session answers: an HTTP/2 session, or the server chose HTTP/1.1 (or no ALPN). */
export type Negotiated = { readonly session: ClientHttp2Session; readonly reused: boolean } | { readonly session: undefined };

export interface SessionPool {
  /** The live session, connecting one when there is none. */
  get(): Promise<Negotiated>;
  /** A request on `session` timed out: check with a PING that the session still answers. */
  suspect(session: ClientHttp2Session): void;
  /** Counts a stream open on the session (a session with none does not keep the process alive). */
  track(session: ClientHttp2Session, stream: { once(event: 'close', listener: () => void): unknown }): void;
  close(): void;
}

/** `connectTimeoutMs`: how long the TCP and TLS set-up may take before the connection is given up. */
export function createSessionPool(url: URL, tls: ConnectionOptions, connectTimeoutMs: number): SessionPool {
  let current: ClientHttp2Session | undefined;
  let pending: Promise<Negotiated> | undefined;
  let http1 = false;
  let closedAt = 0;
  const open = new WeakMap<ClientHttp2Session, number>();

  function forget(session: ClientHttp2Session): void {
    if (current === session) current = undefined;
  }

  function connect(): Promise<Negotiated> {
    const generation = closedAt;
    return new Promise<Negotiated>((resolve, reject) => {
      const socket: TLSSocket = tlsConnect({
        ...tls,
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: Number(url.port === '' ? 443 : url.port),
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      socket.once('error', reject);
      if (connectTimeoutMs > 0) {
        socket.setTimeout(connectTimeoutMs, () => {
          socket.destroy(new Error(`no TLS connection to ${url.host} within ${connectTimeoutMs} ms`));
        });
      }
      socket.once('secureConnect', () => {
        socket.removeListener('error', reject);
        socket.setTimeout(0);
        if (generation !== closedAt) {
          socket.destroy();
          reject(new Error('the transport was closed while connecting'));
          return;
        }
        if (socket.alpnProtocol !== 'h2') {
          http1 = true;
          socket.destroy();
          resolve({ session: undefined });
          return;
        }
        const session = http2Connect(url.origin, { createConnection: () => socket, settings: { initialWindowSize: STREAM_WINDOW } });
        session.once('connect', () => { session.setLocalWindowSize(CONNECTION_WINDOW); });
        session.on('error', () => { forget(session); });
        session.once('goaway', () => { forget(session); });
        session.once('close', () => { forget(session); });
        session.unref();
        current = session;
        resolve({ session, reused: false });
      });
    });
  }

  return {
    async get() {
      if (http1) return { session: undefined };
      if (current !== undefined && !current.closed && !current.destroyed) return { session: current, reused: true };
      pending ??= connect().finally(() => { pending = undefined; });
      return pending;
    },
    suspect(session) {
      if (session.destroyed || session.closed) return;
      const timer = setTimeout(() => {
        forget(session);
        session.destroy(new Error(`the server did not answer a PING within ${PING_TIMEOUT_MS} ms`));
      }, PING_TIMEOUT_MS);
      timer.unref();
      try {
        session.ping((err) => {
          clearTimeout(timer);
          if (err !== null) {
            forget(session);
            session.destroy();
          }
        });
      } catch {
        clearTimeout(timer);
        forget(session);
        session.destroy();
      }
    },
    track(session, stream) {
      const n = (open.get(session) ?? 0) + 1;
      open.set(session, n);
      if (n === 1) session.ref();
      stream.once('close', () => {
        const left = (open.get(session) ?? 1) - 1;
        open.set(session, left);
        if (left === 0 && !session.destroyed) session.unref();
      });
    },
    close() {
      closedAt++;
      http1 = false;
      current?.destroy();
      current = undefined;
    },
  };
}

/** How a stream fails when its session went away (closed socket, GOAWAY, a session destroyed under it). */
const GONE_CODES: ReadonlySet<unknown> = new Set(['ECONNRESET', 'EPIPE', 'ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_INVALID_SESSION', 'ERR_HTTP2_SESSION_ERROR', 'ERR_HTTP2_STREAM_CANCEL']);

export interface StreamRequest {
  readonly session: ClientHttp2Session;
  /** The session carried earlier requests (a failure on it may only mean that it went away since). */
  readonly reused: boolean;
  readonly pool: SessionPool;
  readonly exchange: { readonly method: string; readonly path: string; readonly body?: Buffer; readonly signal?: AbortSignal };
  /** The path with the server URL's prefix, and the full URL for messages. */
  readonly path: string;
  readonly href: string;
  readonly headers: Readonly<Record<string, string | number>>;
  /** Per attempt: an idle timeout of the stream, or for `streaming` only until the headers came. */
  readonly limit: number;
  readonly streaming: boolean;
  readonly idempotent: boolean;
}

/**
 * Sends one request as a stream of `session`. `onError`'s `stale` says that the request may be
 * sent again on another session: the server refused the stream before processing it
 * (REFUSED_STREAM, or the session was already going away), or an idempotent request on a reused
 * session failed because the session went away before any answer (as transport.ts's HTTP/1.1
 * retry on a reused connection).
 */
export function startStream(r: StreamRequest, onResponse: (res: { status: number; headers: IncomingHttpHeaders; body: Readable }) => void, onError: (err: unknown, stale: boolean) => void): void {
  const e = r.exchange;
  let stream: ClientHttp2Stream;
  try {
    stream = r.session.request(
      { ':method': e.method, ':path': r.path, ...r.headers },
      { endStream: e.body === undefined, ...(e.signal === undefined ? {} : { signal: e.signal }) },
    );
  } catch (err) {
    // The session closed between get() and now: nothing was sent.
    onError(err, e.signal?.aborted !== true && GONE_CODES.has((err as { code?: unknown }).code));
    return;
  }
  r.pool.track(r.session, stream);
  let answered = false;
  let failed = false;
  let headerTimer: NodeJS.Timeout | undefined;
  const fail = (err: unknown): void => {
    clearTimeout(headerTimer);
    if (failed || answered) return;
    failed = true;
    const code = (err as { code?: unknown }).code;
    const stale = !r.streaming && e.signal?.aborted !== true
      && (stream.rstCode === h2.NGHTTP2_REFUSED_STREAM || (r.reused && r.idempotent && (GONE_CODES.has(code) || r.session.destroyed || r.session.closed)));
    onError(err, stale);
  };
  const timedOut = (): void => {
    r.pool.suspect(r.session);
    stream.destroy(new OrchError(ORCHCLIENT_TIMEOUT, 'timeout', `${e.method} ${r.href}: no answer within ${r.limit} ms`, { subject: e.path }));
  };
  if (r.limit > 0) {
    if (r.streaming) headerTimer = setTimeout(timedOut, r.limit);
    else stream.setTimeout(r.limit, timedOut);
  }
  stream.once('response', (raw: Http2Headers) => {
    clearTimeout(headerTimer);
    if (failed) return;
    answered = true;
    const headers: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(raw)) if (!k.startsWith(':')) headers[k] = v;
    onResponse({ status: Number(raw[':status'] ?? 0), headers, body: stream });
  });
  stream.on('error', fail);
  stream.once('close', () => {
    // A stream reset without an error code, or refused, before any answer.
    if (!answered) fail(new Error(`the stream closed before an answer (HTTP/2 code ${stream.rstCode})`));
  });
  if (e.body !== undefined) stream.end(e.body);
}

/** `promise`, or a rejection when `limitMs` passed first (the error of `timeout()`) or `signal` aborted. */
export function withDeadline<T>(promise: Promise<T>, limitMs: number, signal: AbortSignal | undefined, timeout: () => Error): Promise<T> {
  if (limitMs <= 0 && signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    const timer = limitMs > 0 ? setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      reject(timeout());
    }, limitMs) : undefined;
    if (signal?.aborted === true) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then((v) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(v);
    }, (err: unknown) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
}
