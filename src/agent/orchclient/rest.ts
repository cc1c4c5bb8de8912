/**
 * createRestClient: the RestClient (rest-types.ts) over the shared transport: get, list,
 * create (POST), update (PUT), patch (merge, strategic or JSON patch), delete (with an optional
 * DeleteOptions body) and watch (newline-delimited JSON events), with query parameters.
 *
 * Rate limit: calls wait for a token of one bucket of orchAPIQPS/orchAPIBurst (0 means
 * upstream's defaults 50 and 100, mapped here) before every attempt, as upstream's client does; `exempt: true`
 * (events, node status, leases) bypasses it. Opening a watch takes a token too.
 *
 * Content type: bodies are always encoded as JSON and labelled application/json, and answers
 * are asked for as application/json. The configured contentType (default
 * application/vnd.orch.protobuf, from --orch-api-content-type) chooses nothing: JSON and the
 * protobuf types (which orch-apiserver also reads) are all served by JSON, silently. Any other
 * type gets ONE warning at construction; nothing is ever sent mislabelled.
 *
 * Retries (default 2 extra attempts, pause 200 ms doubling with up to as much again of random
 * jitter, or the server's Retry-After header or Status retryAfterSeconds up to 30 s, as
 * client-go honours them): any call when the server said it did not process the request (429, 503) or could
 * not be reached (connection refused); GET also after any other transient failure (network
 * error, timeout, 5xx). Watches are not retried here (the reflector reopens them). Writes are not
 * replayed after a failure that may have applied them; below these, the transport sends a GET, PUT
 * or DELETE again at once when the kept-alive connection it took was already closed by the server
 * (transport.ts), as Go's transport does under client-go.
 *
 * Errors: OrchApiError (status.ts), an OrchError with the category of the HTTP status and the
 * decoded Status on `status` (statusOf(err)); network failures ORCHCLIENT_UNAVAILABLE,
 * ORCHCLIENT_TIMEOUT, ORCHCLIENT_ABORTED.
 */
import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { abortedBy, transient } from './client.js';
import type { OrchConnection } from './kubeconfig.js';
import { createRateLimiter, ORCHCLIENT_OPTIONS_INVALID, type RateLimiter } from './rate-limit.js';
import type { ObjectList, PatchType, RestCallOptions, RestClient, WatchEvent, WatchHandle } from './rest-types.js';
import { errorFromResponse, OrchApiError, ORCHCLIENT_ABORTED, ORCHCLIENT_REQUEST_FAILED, ORCHCLIENT_UNAVAILABLE } from './status.js';
import type { Tracer } from '../../api/tracing/index.js';
import { createTransport, type Streamed, type Transport } from './transport.js';
import { createWatchDecoder } from './watch-decoder.js';

export const DEFAULT_CONTENT_TYPE = 'application/vnd.orch.protobuf';
export const DEFAULT_QPS = 50;
export const DEFAULT_BURST = 100;
const MAX_RETRY_AFTER_MS = 30_000;

export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

export interface RestClientOptions {
  readonly connection: OrchConnection;
  /** orchAPIQPS: > 0, or 0 for the default 50. */
  readonly qps: number;
  /** orchAPIBurst: > 0, or 0 for the default 100. */
  readonly burst: number;
  /** The time of the orchAPIQPS/orchAPIBurst bucket and its waits. */
  readonly clock: Clock;
  /** contentType of the configuration (see the module comment: JSON is always used). */
  readonly contentType?: string;
  readonly logger?: Logger;
  /** Per attempt, default 10 s (for a watch: until its response headers came). */
  readonly timeoutMs?: number;
  /** Extra attempts after a transient failure, default 2. */
  readonly retries?: number;
  /** First pause between attempts, doubled each time, default 200 ms. */
  readonly retryDelayMs?: number;
  readonly userAgent?: string;
  /** Replaces the orchAPIQPS/orchAPIBurst bucket (tests). */
  readonly limiter?: RateLimiter;
  /** Traces each request and propagates the trace context (transport.ts). */
  readonly tracer?: Tracer;
  /** The jitter of the retry pauses, in [0, 1) (default Math.random; tests pin it). */
  readonly random?: () => number;
}

type Query = RestCallOptions['query'];

/** `path` with the query appended (undefined values left out; booleans as true/false). */
export function withQuery(path: string, query: Query): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, String(value));
  const text = params.toString();
  if (text === '') return path;
  return `${path}${path.includes('?') ? '&' : '?'}${text}`;
}

/** The media types the server reads; this client speaks the first of them for all. */
const SERVED_TYPES = new Set(['application/json', 'application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf']);

/** True for a media type the API server reads (with or without parameters). */
function isServed(contentType: string): boolean {
  return SERVED_TYPES.has((contentType.split(';')[0] ?? '').trim().toLowerCase());
}

/** The pause the server asked for: its Retry-After header (seconds), else the Status's retryAfterSeconds. */
function retryAfterMs(err: unknown, header: string | undefined): number | undefined {
  if (!(err instanceof OrchApiError)) return undefined;
  const fromHeader = header !== undefined && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  const seconds = fromHeader ?? err.status.details?.retryAfterSeconds;
  return typeof seconds === 'number' && seconds > 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : undefined;
}

/** The server did not act on the request: safe to send again whatever the verb. */
function unprocessed(err: unknown): boolean {
  if (err instanceof OrchApiError) return err.httpCode === 429 || err.httpCode === 503;
  const cause = err instanceof OrchError ? (err.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === 'ECONNREFUSED';
}

function optionsError(message: string, subject: string): OrchError {
  return new OrchError(ORCHCLIENT_OPTIONS_INVALID, 'invalid', `REST client: ${message}`, { subject });
}

export function createRestClient(options: RestClientOptions): RestClient {
  const { qps, burst } = options;
  if (!Number.isFinite(qps) || qps < 0) throw optionsError(`qps ${qps} must be >= 0`, 'orchAPIQPS');
  if (!Number.isInteger(burst) || burst < 0) throw optionsError(`burst ${burst} must be an integer >= 0`, 'orchAPIBurst');
  const limiter = options.limiter ?? createRateLimiter({ qps: qps === 0 ? DEFAULT_QPS : qps, burst: burst === 0 ? DEFAULT_BURST : burst, clock: options.clock });
  const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
  if (!isServed(contentType) && contentType !== '') {
    options.logger?.warn(`contentType ${contentType} is not supported by this client; using application/json`, { contentType });
  }
  const transport: Transport = createTransport({
    connection: options.connection,
    clock: options.clock,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    userAgent: options.userAgent ?? 'nodeagent',
  });
  const retries = options.retries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const random = options.random ?? Math.random;
  const watches = new Set<{ stop(): void }>();

  async function call<T>(method: string, path: string, body: unknown, bodyType: string | undefined, o: RestCallOptions = {}): Promise<T> {
    const target = withQuery(path, o.query);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const attempts = (o.retries ?? retries) + 1;
    for (let attempt = 1; ; attempt++) {
      let retryAfter: string | undefined;
      try {
        if (o.exempt !== true) await limiter.wait(o.signal);
        const answer = await transport.send({
          method, path: target, accept: 'application/json',
          ...(payload === undefined ? {} : { body: payload, contentType: bodyType ?? 'application/json' }),
          ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
          ...(o.signal === undefined ? {} : { signal: o.signal }),
        });
        if (answer.status < 200 || answer.status > 299) {
          retryAfter = answer.headers['retry-after'];
          throw errorFromResponse(method, target, answer.status, answer.text);
        }
        try {
          return (answer.text.trim() === '' ? {} : JSON.parse(answer.text)) as T;
        } catch (err) {
          throw new OrchError(ORCHCLIENT_REQUEST_FAILED, 'internal', `${method} ${target}: the answer is not JSON: ${messageOf(err)}`, { subject: target, cause: err });
        }
      } catch (err) {
        const again = unprocessed(err) || (method === 'GET' && transient(err));
        if (attempt >= attempts || !again || o.signal?.aborted === true) throw err;
        // Jittered so that many clients turned away together do not come back together.
        const pause = retryAfterMs(err, retryAfter) ?? Math.round(retryDelayMs * 2 ** (attempt - 1) * (1 + random()));
        options.logger?.v(4, 'retrying a request to the API server', { method, path: target, attempt, pauseMs: pause, error: messageOf(err) });
        await sleepKeepingAlive(options.clock, pause, o.signal);
        if (abortedBy(o.signal)) throw new OrchError(ORCHCLIENT_ABORTED, 'unavailable', `${method} ${target}: aborted while waiting to retry`, { subject: target, cause: o.signal?.reason });
      }
    }
  }

  function watch<T>(path: string, onEvent: (event: WatchEvent<T>) => void, o: RestCallOptions = {}): WatchHandle {
    const target = withQuery(path, { ...(o.query ?? {}), watch: true });
    const abort = new AbortController();
    const onOuterAbort = (): void => { abort.abort(); };
    o.signal?.addEventListener('abort', onOuterAbort, { once: true });
    let stopped = o.signal?.aborted === true;
    if (stopped) abort.abort();
    let res: Streamed | undefined;

    async function run(): Promise<Awaited<WatchHandle['done']>> {
      try {
        if (o.exempt !== true) await limiter.wait(abort.signal);
        res = await transport.open({
          method: 'GET', path: target, accept: 'application/json', signal: abort.signal,
          ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
        });
        const stream = res.body;
        const status = res.status;
        if (status < 200 || status > 299) {
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          return { reason: 'error', error: errorFromResponse('GET', target, status, Buffer.concat(chunks).toString('utf8')) };
        }
        const decoder = createWatchDecoder<T>(onEvent, `watch ${path}`);
        return await new Promise((resolve) => {
          let ended = false;
          const fail = (error: unknown): void => {
            stream.destroy();
            resolve(stopped ? { reason: 'stopped' } : { reason: 'error', error });
          };
          stream.on('data', (chunk: Buffer) => {
            try {
              decoder.push(chunk);
            } catch (err) {
              fail(err);
            }
          });
          stream.on('end', () => {
            ended = true;
            try {
              decoder.end();
              resolve({ reason: stopped ? 'stopped' : 'closed' });
            } catch (err) {
              fail(err);
            }
          });
          stream.on('error', (err) => {
            fail(new OrchError(ORCHCLIENT_UNAVAILABLE, 'unavailable', `watch ${target}: ${messageOf(err)}`, { subject: path, cause: err }));
          });
          stream.on('close', () => {
            if (!ended) fail(new OrchError(ORCHCLIENT_UNAVAILABLE, 'unavailable', `watch ${target}: the connection closed before the end of the stream`, { subject: path }));
          });
        });
      } catch (err) {
        return stopped ? { reason: 'stopped' } : { reason: 'error', error: err };
      } finally {
        o.signal?.removeEventListener('abort', onOuterAbort);
        watches.delete(entry);
      }
    }

    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      abort.abort();
      res?.body.destroy();
    };
    const entry = { stop };
    watches.add(entry);
    return { done: run(), stop };
  }

  return {
    get: <T>(path: string, o?: RestCallOptions) => call<T>('GET', path, undefined, undefined, o),
    async list<T>(path: string, o?: RestCallOptions): Promise<ObjectList<T>> {
      const answer = await call<{ metadata?: ObjectList<T>['metadata']; items?: T[] | null } & Record<string, unknown>>('GET', path, undefined, undefined, o);
      if (answer.items !== undefined && answer.items !== null && !Array.isArray(answer.items)) {
        throw new OrchError(ORCHCLIENT_REQUEST_FAILED, 'internal', `GET ${path}: the answer is not a list`, { subject: path });
      }
      const { metadata, items, ...rest } = answer;
      return { ...rest, ...(metadata === undefined ? {} : { metadata }), items: items ?? [] };
    },
    create: <T>(path: string, body: unknown, o?: RestCallOptions) => call<T>('POST', path, body, 'application/json', o),
    update: <T>(path: string, body: unknown, o?: RestCallOptions) => call<T>('PUT', path, body, 'application/json', o),
    patch: <T>(path: string, type: PatchType, patch: unknown, o?: RestCallOptions) => call<T>('PATCH', path, patch, PATCH_CONTENT_TYPES[type], o),
    delete: <T = unknown>(path: string, body?: unknown, o?: RestCallOptions) => call<T>('DELETE', path, body, 'application/json', o),
    watch,
    close() {
      for (const w of [...watches]) w.stop();
      transport.close();
    },
  };
}
