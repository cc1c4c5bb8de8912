/**
 * The HTTPS listener: TLS 1.2+, asks every client for a certificate and verifies it against the
 * client CAs without rejecting the connection (authn decides). HTTP/2 and HTTP/1.1 (keep-alive),
 * chosen by ALPN, as kube-apiserver's Go server offers both: clients that speak HTTP/2 (kubectl,
 * client-go, the node agent) multiplex every request and watch on one connection. Protocol
 * upgrades (WebSocket, SPDY) exist only in HTTP/1.1 (their clients offer only http/1.1) and are
 * handed to `upgrade` when given. close() stops accepting, asks HTTP/2 clients to go away (GOAWAY:
 * streams in flight finish), ends idle HTTP/1.1 connections and destroys the rest (watches)
 * after a grace period.
 */
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { realClock, type Clock, type Timer } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';

export interface HttpsOptions {
  readonly bindAddress: string;
  readonly port: number;
  readonly certPem: string;
  readonly keyPem: string;
  /** PEM certificates of the CAs that sign client certificates. */
  readonly clientCaPems: readonly string[];
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Requests asking for a protocol upgrade (WebSocket, SPDY); absent: served by `handler`. */
  readonly upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * Connections waiting to be accepted (default 4096; the kernel caps it at net.core.somaxconn).
   * Node's 511 overflows when thousands of agents connect at once: their SYNs are dropped and
   * they retry after seconds.
   */
  readonly backlog?: number;
  /**
   * The streams an HTTP/2 client may have open at once on one connection
   * (SETTINGS_MAX_CONCURRENT_STREAMS); absent or 0: DEFAULT_HTTP2_MAX_STREAMS.
   */
  readonly http2MaxStreams?: number;
}

export const DEFAULT_BACKLOG = 4096;
/**
 * kube-apiserver's stream limit when --http2-max-streams-per-connection is 0: the initial limit
 * Go's HTTP/2 clients assume before the server's SETTINGS come (since the rapid-reset fixes).
 */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;
/** An HTTP/2 connection with no stream open this long is closed (GOAWAY), as upstream's 90 s. */
export const HTTP2_IDLE_TIMEOUT_MS = 90_000;
const HTTP2_STREAM_WINDOW = 256 << 10;

/**
 * Closes `session` (GOAWAY; the client opens another when it needs one) once it has had no
 * stream open for `idleMs`: counted only while no stream is open, so a long watch keeps its
 * connection (node's own session timeout counts any silence and would end idle watches).
 */
/** What closeWhenIdle uses of an HTTP/2 session ('stream' and 'close' events). */
export interface IdleSession {
  readonly closed: boolean;
  readonly destroyed: boolean;
  close(): void;
  on(event: 'stream' | 'close', listener: (stream: IdleStream) => void): unknown;
}

interface IdleStream {
  once(event: 'close', listener: () => void): unknown;
}

export function closeWhenIdle(session: IdleSession, idleMs: number, clock: Pick<Clock, 'setTimer'>): void {
  let open = 0;
  let timer: Timer | undefined;
  const arm = (): void => {
    timer = clock.setTimer(idleMs, () => {
      if (open === 0 && !session.closed && !session.destroyed) session.close();
    });
  };
  session.on('stream', (stream: IdleStream) => {
    open++;
    timer?.cancel();
    stream.once('close', () => {
      open--;
      if (open === 0) arm();
    });
  });
  session.on('close', () => { timer?.cancel(); });
  arm();
}

export interface HttpsServer {
  readonly port: number;
  /** Idempotent; resolves when every connection is closed. */
  close(graceMs?: number): Promise<void>;
}

export function startHttpsServer(options: HttpsOptions): Promise<HttpsServer> {
  // HTTP/2's request and response objects (node's compatibility API) stand in for HTTP/1.1's: the
  // handlers use what both have (headers, url, method, socket's TLS peer certificate, write/end,
  // 'close'); connection headers (Connection, Keep-Alive, Transfer-Encoding) are never set.
  const handler = options.handler as unknown as (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;
  const server: Http2SecureServer = createSecureServer({
    cert: options.certPem,
    key: options.keyPem,
    ...(options.clientCaPems.length === 0 ? {} : { ca: [...options.clientCaPems] }),
    requestCert: options.clientCaPems.length > 0,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    allowHTTP1: true,
    ALPNProtocols: ['h2', 'http/1.1'],
    settings: {
      maxConcurrentStreams: options.http2MaxStreams === undefined || options.http2MaxStreams === 0 ? DEFAULT_HTTP2_MAX_STREAMS : options.http2MaxStreams,
      // What a client may send on one stream before the server reads it (upstream: 256 KiB).
      initialWindowSize: HTTP2_STREAM_WINDOW,
    },
  }, handler);
  // HTTP/1.1 connections' timeouts (node's HTTP/1.1 server reads them from the server object).
  Object.assign(server, { keepAliveTimeout: 60_000, headersTimeout: 60_000, requestTimeout: 0 });
  if (options.upgrade !== undefined) server.on('upgrade', options.upgrade);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    closeWhenIdle(session, HTTP2_IDLE_TIMEOUT_MS, realClock);
  });
  const sockets = new Set<Socket>();
  /** Set by close(). */
  let closed: Promise<void> | undefined;
  server.on('secureConnection', (socket: TLSSocket) => {
    // A connection accepted before close() whose handshake ends after it would escape the
    // sessions' GOAWAY and the grace period's destroy, and keep the process alive: ended at once.
    if (closed !== undefined) {
      socket.destroy();
      return;
    }
    // authn keeps a connection's client identity for its lifetime: no renegotiation may change it.
    socket.disableRenegotiation();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: Error) => {
      reject(new OrchError('APISERVER_LISTEN', 'unavailable', `cannot listen on ${options.bindAddress}:${options.port}: ${err.message}`, { subject: '--secure-port', cause: err }));
    });
    server.listen({ port: options.port, host: options.bindAddress, backlog: options.backlog ?? DEFAULT_BACKLOG }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : options.port;
      resolve({
        port,
        close: (graceMs = 1000) => {
          closed ??= new Promise<void>((done) => {
            server.close(() => {
              done();
            });
            for (const session of sessions) session.close();
            closeIdleHttp1(server);
            const timer = setTimeout(() => {
              for (const s of sockets) s.destroy();
            }, graceMs);
            timer.unref();
          });
          return closed;
        },
      });
    });
  });
}

/** Ends idle HTTP/1.1 keep-alive connections (node's HTTP/1.1 server under allowHTTP1 tracks them). */
function closeIdleHttp1(server: Http2SecureServer): void {
  const idle = (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections;
  if (typeof idle === 'function') idle.call(server);
}
