/**
 * A small JSON client for the cluster API server (TokenReview and SubjectAccessReview): POST of
 * a JSON object over the shared transport (transport.ts: TLS, credentials, keep-alive) and
 * decoding of the JSON answer. Failures become OrchErrors by HTTP status (status.ts: 401
 * unauthorized, 403 forbidden, 404 not-found, 409 conflict or already-exists, 429/5xx and
 * network errors unavailable, a deadline timeout), with the server's Status message and the
 * decoded Status on `status`. Transient failures (network, 429, 5xx) are retried a few times
 * with a growing pause. Not rate limited (reviews are answers to the agent's own callers).
 */
import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Tracer } from '../../api/tracing/index.js';
import type { OrchConnection } from './kubeconfig.js';
import { errorFromResponse, ORCHCLIENT_ABORTED, ORCHCLIENT_REQUEST_FAILED } from './status.js';
import { createTransport } from './transport.js';

export { ORCHCLIENT_REQUEST_FAILED, ORCHCLIENT_TIMEOUT, ORCHCLIENT_UNAVAILABLE } from './status.js';

export interface RequestOptions {
  readonly signal?: AbortSignal;
  /** Per attempt; default the client's timeout. */
  readonly timeoutMs?: number;
}

export interface OrchClient {
  /**
   * POSTs `body` as JSON to `path` (e.g. /apis/authentication.orch.io/v1/tokenreviews) and
   * resolves to the decoded answer. Blocks until the server answered (retrying transient
   * failures); rejects with an OrchError. Safe to call concurrently.
   */
  postJson<T>(path: string, body: unknown, options?: RequestOptions): Promise<T>;
  /** Closes idle connections. Idempotent; later calls open new ones. */
  close(): void;
}

export interface OrchClientOptions {
  readonly connection: OrchConnection;
  /** Per attempt, default 10 s. */
  readonly timeoutMs?: number;
  /** Extra attempts after a transient failure (default 2). */
  readonly retries?: number;
  /** First pause between attempts, doubled each time (default 200 ms). */
  readonly retryDelayMs?: number;
  readonly userAgent?: string;
  /** The pauses between attempts. */
  readonly clock: Clock;
  /** Traces each request and propagates the trace context (transport.ts). */
  readonly tracer?: Tracer;
}

/** True once `signal` fired (read anew after a wait: a check before it does not say). */
export function abortedBy(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Failures worth another attempt: the server was unreachable, overloaded or too slow. */
export function transient(err: unknown): boolean {
  return err instanceof OrchError && (err.category === 'unavailable' || err.category === 'timeout');
}

export function createOrchClient(options: OrchClientOptions): OrchClient {
  const transport = createTransport({
    connection: options.connection,
    clock: options.clock,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
  });
  const retries = options.retries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;

  return {
    async postJson<T>(path: string, body: unknown, o: RequestOptions = {}): Promise<T> {
      const payload = Buffer.from(JSON.stringify(body));
      for (let attempt = 0; ; attempt++) {
        try {
          const { status, text } = await transport.send({
            method: 'POST', path, body: payload, contentType: 'application/json', accept: 'application/json',
            ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
            ...(o.signal === undefined ? {} : { signal: o.signal }),
          });
          if (status < 200 || status > 299) throw errorFromResponse('POST', path, status, text);
          try {
            return JSON.parse(text) as T;
          } catch (err) {
            throw new OrchError(ORCHCLIENT_REQUEST_FAILED, 'internal', `POST ${path}: the answer is not JSON: ${messageOf(err)}`, { subject: path, cause: err });
          }
        } catch (err) {
          if (attempt >= retries || !transient(err) || o.signal?.aborted === true) throw err;
          await sleepKeepingAlive(options.clock, retryDelayMs * 2 ** attempt, o.signal);
          if (abortedBy(o.signal)) throw new OrchError(ORCHCLIENT_ABORTED, 'unavailable', `POST ${path}: aborted while waiting to retry`, { subject: path, cause: o.signal?.reason });
        }
      }
    },
    close() {
      transport.close();
    },
  };
}
