/**
 * One HTTP(S) exchange with the API server, shared by createOrchClient and createRestClient:
 * keep-alive agents built from an OrchConnection (CA, client certificate, SNI name, bearer token
 * or token file re-read every minute, basic auth), a buffered request (`send`, with a per-attempt
 * idle timeout) and a streamed one (`open`, for watches: the timeout covers only the wait for
 * the response's headers, then the body streams for as long as the server keeps it open).
 * Watches get their own agent so that long-lived streams never take the sockets of requests.
 * Network failures become OrchErrors (ORCHCLIENT_UNAVAILABLE, ORCHCLIENT_TIMEOUT,
 * ORCHCLIENT_ABORTED); HTTP statuses are the caller's to judge.
 *
 * One retry, as Go's http.Transport makes under client-go: a buffered request of an idempotent
 * method (RFC 9110: GET, HEAD, OPTIONS, TRACE, PUT, DELETE) sent on a reused keep-alive connection
 * that the server closed before any answer (ECONNRESET "socket hang up", EPIPE) is sent again at
 * once on a new connection. A server closes an idle connection when its keep-alive timeout runs
 * out; a client whose event loop is late still takes that connection from its pool, and the
 * request dies with it although the server never read it. Other failures, fresh connections and
 * POST/PATCH are not retried here (the REST client's own retries judge those).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Tracer } from '../../api/tracing/index.js';
import type { OrchConnection } from './kubeconfig.js';
import { createSessionPool, startStream, withDeadline, type Negotiated } from './transport-h2.js';
import { ORCHCLIENT_ABORTED, ORCHCLIENT_REQUEST_FAILED, ORCHCLIENT_TIMEOUT, ORCHCLIENT_UNAVAILABLE } from './status.js';

const TOKEN_FILE_TTL_MS = 60_000;
const MAX_SOCKETS = 32;
/** Methods a server may receive twice with the effect of once (RFC 9110 section 9.2.2). */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/** How a connection the server closed fails a request written on it. */
const CLOSED_CODES: ReadonlySet<unknown> = new Set(['ECONNRESET', 'EPIPE']);

/** A request that failed only because its reused connection was already closed (retried once more). */
class StaleConnection extends Error {
  constructor(readonly error: OrchError) {
    super(error.message);
  }
}

export interface TransportOptions {
  readonly connection: OrchConnection;
  /** Per attempt, default 10 s. */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
  /** When a token file read is old enough to be read again. */
  readonly clock: Pick<Clock, 'now'>;
  /**
   * Traces each request (a client span, as upstream's otelhttp transport: `HTTP GET`) and sends
   * the open span's W3C trace context (traceparent) with every request, watches included.
   */
  readonly tracer?: Tracer;
  /** false: HTTP/1.1 only, even when the server offers HTTP/2 (default: HTTP/2 when offered). */
  readonly http2?: boolean;
}

export interface Exchange {
  readonly method: string;
  /** Path and query, e.g. /api/v1/nodes?limit=10 (the server URL's path is prefixed). */
  readonly path: string;
  readonly body?: Buffer;
  readonly contentType?: string;
  readonly accept: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** A response whose body is read as it comes (a watch). */
export interface Streamed {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Emits 'data', then 'end' and 'close'; 'close' without 'end' when the stream broke. */
  readonly body: Readable;
}

export interface Transport {
  /** Sends one request and reads the whole answer. Rejects only on network failures. */
  send(exchange: Exchange): Promise<Answer>;
  /** Sends one request and resolves with the response as soon as its headers came. */
  open(exchange: Exchange): Promise<Streamed>;
  /** Closes idle connections and destroys open streams; later calls open new ones. */
  close(): void;
}

/** Stands for absent TLS material in CONTEXTS' keys. */
const NONE = {};
/**
 * The secure context of each set of TLS material (CA, client certificate, key), keyed by its
 * Buffers: the connection objects made from one loaded orchconfig share them (a copy with another
 * token, as `nodeagent simulate --token-per-node` makes, too). Material never changes: a
 * rotation loads new Buffers.
 */
const CONTEXTS = new WeakMap<object, WeakMap<object, WeakMap<object, SecureContext>>>();

function knownContext(c: OrchConnection): SecureContext | undefined {
  return CONTEXTS.get(c.ca ?? NONE)?.get(c.clientCert ?? NONE)?.get(c.clientKey ?? NONE);
}

function keepContext(c: OrchConnection, context: SecureContext): void {
  let byCert = CONTEXTS.get(c.ca ?? NONE);
  if (byCert === undefined) CONTEXTS.set(c.ca ?? NONE, byCert = new WeakMap());
  let byKey = byCert.get(c.clientCert ?? NONE);
  if (byKey === undefined) byCert.set(c.clientCert ?? NONE, byKey = new WeakMap());
  byKey.set(c.clientKey ?? NONE, context);
}

/**
 * One secure context for every TLS connection made with the same material (by every transport
 * made from it): without it each TLS connection parses the CA bundle and the client key pair
 * again (a cost of every watch re-opened). Material that does not parse is passed as it is, so
 * that the request fails and says why, as before.
 */
export function credentials(c: OrchConnection): { secureContext: SecureContext } | { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const known = knownContext(c);
  if (known !== undefined) return { secureContext: known };
  const raw = {
    ...(c.ca === undefined ? {} : { ca: c.ca }),
    ...(c.clientCert === undefined ? {} : { cert: c.clientCert }),
    ...(c.clientKey === undefined ? {} : { key: c.clientKey }),
  };
  try {
    const secureContext = createSecureContext(raw);
    keepContext(c, secureContext);
    return { secureContext };
  } catch {
    return raw;
  }
}

export function createTransport(options: TransportOptions): Transport {
  const c = options.connection;
  const url = new URL(c.server);
  const secure = url.protocol === 'https:';
  const base = url.pathname.replace(/\/$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const tls = {
    ...(secure ? credentials(c) : {}),
    rejectUnauthorized: !c.insecureSkipTLSVerify,
    ...(c.tlsServerName === undefined ? {} : { servername: c.tlsServerName }),
  };
  const newAgent = (keepAlive: boolean): HttpAgent => (secure
    ? new HttpsAgent({ keepAlive, maxSockets: keepAlive ? MAX_SOCKETS : Infinity, ...tls })
    : new HttpAgent({ keepAlive, maxSockets: keepAlive ? MAX_SOCKETS : Infinity }));
  // HTTP/2 over TLS when the server offers it (one connection for everything); HTTP/1.1 otherwise.
  const sessions = secure && options.http2 !== false ? createSessionPool(url, tls, timeoutMs) : undefined;
  let agent = newAgent(true);
  let streamAgent = newAgent(false);
  let token: { value: string; read: number } | undefined;

  async function authorization(): Promise<string | undefined> {
    if (c.token !== undefined) return `Bearer ${c.token}`;
    if (c.tokenFile !== undefined) {
      if (token === undefined || options.clock.now() - token.read > TOKEN_FILE_TTL_MS) {
        try {
          token = { value: (await readFile(c.tokenFile, 'utf8')).trim(), read: options.clock.now() };
        } catch (err) {
          throw new OrchError(ORCHCLIENT_REQUEST_FAILED, 'unauthorized', `cannot read the token file ${c.tokenFile}: ${messageOf(err)}`, { subject: c.tokenFile, cause: err });
        }
      }
      return `Bearer ${token.value}`;
    }
    if (c.username !== undefined) return `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    return undefined;
  }

  function networkError(e: Exchange, href: string, err: unknown): OrchError {
    if (err instanceof OrchError) return err;
    if (e.signal?.aborted === true) {
      return new OrchError(ORCHCLIENT_ABORTED, 'unavailable', `${e.method} ${href}: aborted`, { subject: e.path, cause: err });
    }
    return new OrchError(ORCHCLIENT_UNAVAILABLE, 'unavailable', `${e.method} ${href}: ${messageOf(err)}`, { subject: e.path, cause: err });
  }

  /** Starts the request; `onResponse` gets the response once its headers came. */
  async function start(e: Exchange, streaming: boolean, onResponse: (res: Streamed) => void, onError: (err: OrchError | StaleConnection) => void): Promise<void> {
    const auth = await authorization();
    const target = new URL(`${base}${e.path}`, url);
    const limit = e.timeoutMs ?? timeoutMs;
    const headers: Record<string, string | number> = {
      accept: e.accept,
      'user-agent': options.userAgent ?? 'nodeagent',
      ...(e.body === undefined ? {} : { 'content-type': e.contentType ?? 'application/json', 'content-length': e.body.length }),
      ...(auth === undefined ? {} : { authorization: auth }),
      ...options.tracer?.outgoingHeaders(),
    };
    if (sessions !== undefined) {
      let negotiated: Negotiated;
      try {
        negotiated = await withDeadline(sessions.get(), limit, e.signal, () => new OrchError(ORCHCLIENT_TIMEOUT, 'timeout', `${e.method} ${target.href}: no connection within ${limit} ms`, { subject: e.path }));
      } catch (err) {
        onError(networkError(e, target.href, err));
        return;
      }
      if (negotiated.session !== undefined) {
        startStream({ session: negotiated.session, reused: negotiated.reused, pool: sessions, exchange: e, path: `${base}${e.path}`, href: target.href, headers, limit, streaming, idempotent: IDEMPOTENT.has(e.method) }, onResponse, (err, stale) => {
          const failure = networkError(e, target.href, err);
          onError(stale ? new StaleConnection(failure) : failure);
        });
        return;
      }
    }
    const send = secure ? httpsRequest : httpRequest;
    const req = send(target, {
      method: e.method,
      agent: streaming ? streamAgent : agent,
      headers,
      // Requests: an idle timeout per attempt. Streams: only until the headers came (below).
      ...(streaming || limit <= 0 ? {} : { timeout: limit }),
      ...(e.signal === undefined ? {} : { signal: e.signal }),
    });
    let headerTimer: NodeJS.Timeout | undefined;
    const timedOut = (): void => {
      req.destroy(new OrchError(ORCHCLIENT_TIMEOUT, 'timeout', `${e.method} ${target.href}: no answer within ${limit} ms`, { subject: e.path }));
    };
    if (streaming && limit > 0) headerTimer = setTimeout(timedOut, limit);
    req.on('timeout', timedOut);
    req.on('response', (res: IncomingMessage) => {
      answered = true;
      clearTimeout(headerTimer);
      onResponse({ status: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    let answered = false;
    req.on('error', (err) => {
      clearTimeout(headerTimer);
      const failure = networkError(e, target.href, err);
      const stale = !streaming && !answered && req.reusedSocket && IDEMPOTENT.has(e.method) && e.signal?.aborted !== true && CLOSED_CODES.has((err as { code?: unknown }).code);
      onError(stale ? new StaleConnection(failure) : failure);
    });
    req.end(e.body);
  }

  async function exchange(e: Exchange): Promise<Answer> {
    // Each stale failure takes one pooled connection out of the pool: bounded by its size.
    for (let tries = 1; ; tries++) {
      try {
        return await attempt(e);
      } catch (err) {
        if (!(err instanceof StaleConnection)) throw err;
        if (tries > MAX_SOCKETS) throw err.error;
      }
    }
  }

  function attempt(e: Exchange): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      start(e, false, (res) => {
        const chunks: Buffer[] = [];
        let ended = false;
        res.body.on('data', (d: Buffer) => chunks.push(d));
        res.body.on('end', () => {
          ended = true;
          resolve({ status: res.status, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.body.on('error', (err) => {
          reject(networkError(e, e.path, err));
        });
        res.body.on('close', () => {
          if (!ended) reject(networkError(e, e.path, new Error('the connection closed before the end of the answer')));
        });
      }, reject).catch(reject);
    });
  }

  return {
    send(e) {
      const tracer = options.tracer;
      if (tracer === undefined) return exchange(e);
      const attributes = { 'http.request.method': e.method, 'url.path': e.path.split('?')[0], 'server.address': url.hostname };
      return tracer.inSpan(`HTTP ${e.method}`, { kind: 'client', attributes }, async (span) => {
        const answer = await exchange(e);
        span.setAttributes({ 'http.response.status_code': answer.status });
        return answer;
      });
    },
    open(e) {
      return new Promise<Streamed>((resolve, reject) => {
        start(e, true, resolve, reject).catch(reject);
      });
    },
    close() {
      sessions?.close();
      agent.destroy();
      streamAgent.destroy();
      agent = newAgent(true);
      streamAgent = newAgent(false);
    },
  };
}
