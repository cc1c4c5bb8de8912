/**
 * A small JSON client for the cluster API server: one keep-alive HTTPS agent built from an
 * OrchConnection (CA, client certificate, bearer token or token file, basic auth), POST of a
 * JSON object and decoding of the JSON answer. Failures become OrchErrors by HTTP status
 * (401 unauthorized, 403 forbidden, 404 not-found, 409 conflict, 429/5xx and network errors
 * unavailable, a deadline timeout), with the server's Status message when it sent one.
 * Transient failures (network, 429, 5xx) are retried a few times with a growing pause.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { OrchError, messageOf, type ErrorCategory } from '../../api/errors.js';
import type { OrchConnection } from './kubeconfig.js';

export const ORCHCLIENT_REQUEST_FAILED = 'ORCHCLIENT_REQUEST_FAILED';
export const ORCHCLIENT_TIMEOUT = 'ORCHCLIENT_TIMEOUT';
export const ORCHCLIENT_UNAVAILABLE = 'ORCHCLIENT_UNAVAILABLE';

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
}

const TOKEN_FILE_TTL_MS = 60_000;

function categoryOf(status: number): ErrorCategory {
  if (status === 400 || status === 422) return 'invalid';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  if (status === 409) return 'conflict';
  if (status === 429 || status >= 500) return 'unavailable';
  return 'internal';
}

function statusMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message !== '') return parsed.message;
  } catch {
    // Not JSON (a proxy's page, plain text): the text itself is the best message there is.
  }
  return text.trim().slice(0, 300);
}

function transient(err: unknown): boolean {
  return err instanceof OrchError && (err.category === 'unavailable' || err.category === 'timeout');
}

export function createOrchClient(options: OrchClientOptions): OrchClient {
  const c = options.connection;
  const url = new URL(c.server);
  const secure = url.protocol === 'https:';
  const agentOptions = {
    keepAlive: true,
    maxSockets: 32,
    ...(c.ca === undefined ? {} : { ca: c.ca }),
    ...(c.clientCert === undefined ? {} : { cert: c.clientCert }),
    ...(c.clientKey === undefined ? {} : { key: c.clientKey }),
    rejectUnauthorized: !c.insecureSkipTLSVerify,
    ...(c.tlsServerName === undefined ? {} : { servername: c.tlsServerName }),
  };
  let agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent({ keepAlive: true, maxSockets: 32 });
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = options.retries ?? 2;
  const retryDelayMs = options.retryDelayMs ?? 200;
  let token: { value: string; read: number } | undefined;

  async function authorization(): Promise<string | undefined> {
    if (c.token !== undefined) return `Bearer ${c.token}`;
    if (c.tokenFile !== undefined) {
      if (token === undefined || Date.now() - token.read > TOKEN_FILE_TTL_MS) {
        try {
          token = { value: (await readFile(c.tokenFile, 'utf8')).trim(), read: Date.now() };
        } catch (err) {
          throw new OrchError(ORCHCLIENT_REQUEST_FAILED, 'unauthorized', `cannot read the token file ${c.tokenFile}: ${messageOf(err)}`, { subject: c.tokenFile, cause: err });
        }
      }
      return `Bearer ${token.value}`;
    }
    if (c.username !== undefined) return `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    return undefined;
  }

  function once(path: string, payload: Buffer, auth: string | undefined, o: RequestOptions): Promise<{ status: number; text: string }> {
    const target = new URL(`${url.pathname.replace(/\/$/, '')}${path}`, url);
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(target, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': payload.length,
          'user-agent': options.userAgent ?? 'nodeagent',
          ...(auth === undefined ? {} : { authorization: auth }),
        },
        timeout: o.timeoutMs ?? timeoutMs,
        ...(o.signal === undefined ? {} : { signal: o.signal }),
      }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }); });
        res.on('error', reject);
      });
      req.on('timeout', () => {
        req.destroy(new OrchError(ORCHCLIENT_TIMEOUT, 'timeout', `POST ${target.href}: no answer within ${o.timeoutMs ?? timeoutMs} ms`));
      });
      req.on('error', (err) => {
        if (err instanceof OrchError) reject(err);
        else reject(new OrchError(ORCHCLIENT_UNAVAILABLE, 'unavailable', `POST ${target.href}: ${messageOf(err)}`, { cause: err }));
      });
      req.end(payload);
    });
  }

  return {
    async postJson<T>(path: string, body: unknown, o: RequestOptions = {}): Promise<T> {
      const payload = Buffer.from(JSON.stringify(body));
      const auth = await authorization();
      for (let attempt = 0; ; attempt++) {
        try {
          const { status, text } = await once(path, payload, auth, o);
          if (status < 200 || status > 299) {
            throw new OrchError(ORCHCLIENT_REQUEST_FAILED, categoryOf(status), `POST ${path}: ${status} ${statusMessage(text)}`, { subject: path });
          }
          try {
            return JSON.parse(text) as T;
          } catch (err) {
            throw new OrchError(ORCHCLIENT_REQUEST_FAILED, 'internal', `POST ${path}: the answer is not JSON: ${messageOf(err)}`, { subject: path, cause: err });
          }
        } catch (err) {
          if (attempt >= retries || !transient(err) || o.signal?.aborted === true) throw err;
          await delay(retryDelayMs * 2 ** attempt, undefined, o.signal === undefined ? {} : { signal: o.signal });
        }
      }
    },
    close() {
      agent.destroy();
      agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent({ keepAlive: true, maxSockets: 32 });
    },
  };
}
