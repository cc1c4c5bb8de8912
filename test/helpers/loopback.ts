/**
 * Loopback network helpers for tests: a free TCP port, and one raw HTTP(S) request with the path
 * exactly as given, for the request tests and fuzz suites of both servers (the node agent's and
 * orch-apiserver's) in process.
 */
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';

/** A port that was free a moment ago on 127.0.0.1 (closed again: another process may take it first, so retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port from the loopback listener'));
      });
    });
  });
}

export interface RawAnswer {
  /** The HTTP status (101 for an upgrade, whose socket is closed at once). */
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface RawRequestOptions {
  readonly method?: string;
  /** HTTPS without verifying the server (the servers' own certificates). */
  readonly tls?: boolean;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** A stream that stays open (a watch, a log followed) answers with what came within this time (default 10 s). */
  readonly timeoutMs?: number;
}

/** One request to 127.0.0.1:`port` with `path` exactly as given (no normalization), on a connection of its own. */
export function rawRequest(port: number, path: string, o: RawRequestOptions = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const done = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      const finish = (): void => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() });
      };
      const timer = setTimeout(() => {
        finish();
        res.destroy();
      }, o.timeoutMs ?? 10_000);
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', finish);
      res.on('error', () => { finish(); });
    };
    // A body goes with its length (Node sends a GET's body unframed otherwise).
    const length = o.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(o.body)) };
    const auth = o.token === undefined ? {} : { authorization: `Bearer ${o.token}` };
    const options = { host: '127.0.0.1', port, path, method: o.method ?? 'GET', agent: false as const, headers: { ...length, ...auth, ...(o.headers ?? {}) } };
    const req = o.tls === true ? httpsRequest({ ...options, rejectUnauthorized: false }, done) : request(options, done);
    req.on('upgrade', (res: IncomingMessage, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 101, headers: res.headers, body: '' });
    });
    req.on('error', reject);
    req.end(o.body);
  });
}
