/**
 * One server's request pipeline: parse the target, pass the gate (secure server only),
 * route, run the handler, turn its failures into answers, and count the request. Plain
 * requests and upgrade requests (WebSocket, SPDY) go through the same steps; an upgrade
 * request gets a ServerResponse written straight to its socket, so that every refusal is an
 * ordinary HTTP answer.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { messageOf } from '../../api/errors.js';
import { quoteValue, truncateText } from '../../api/quote.js';
import { parseRequestTarget } from '../../api/request-target.js';
import type { Logger } from '../logging/index.js';
import type { AuthFilter } from './auth-filter.js';
import { HttpError, sendText } from './http.js';
import type { RequestContext, RouteTable } from './router.js';

export type ServerType = 'readwrite' | 'readonly' | 'healthz';

export interface RequestObserver {
  /** Called once per request when it is answered (or its stream ends). */
  observe(r: { method: string; bucket: string; serverType: ServerType; longRunning: boolean; status: number; seconds: number }): void;
  inflight(delta: number, serverType: ServerType): void;
}

export interface PipelineOptions {
  readonly routes: RouteTable;
  readonly auth?: AuthFilter;
  readonly serverType: ServerType;
  readonly observer?: RequestObserver;
  readonly logger: Logger;
}

export interface Pipeline {
  readonly onRequest: (req: IncomingMessage, res: ServerResponse) => void;
  readonly onUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

function parseTarget(raw: string): { url: URL; path: string } {
  const url = parseRequestTarget(raw);
  if (url === undefined) throw new HttpError(400, 'invalid request target');
  const q = raw.indexOf('?');
  const rawPath = q < 0 ? raw : raw.slice(0, q);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    throw new HttpError(400, `invalid URL escape in ${quoteValue(rawPath)}`);
  }
  return { url, path };
}

export function createPipeline(o: PipelineOptions): Pipeline {
  async function serve(req: IncomingMessage, res: ServerResponse, upgrade?: { socket: Duplex; head: Buffer }): Promise<void> {
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    let bucket = 'other';
    let longRunning = false;
    o.observer?.inflight(1, o.serverType);
    const done = (): void => {
      o.observer?.inflight(-1, o.serverType);
      const status = res.headersSent ? res.statusCode : upgrade === undefined ? res.statusCode : 101;
      o.observer?.observe({ method, bucket, serverType: o.serverType, longRunning, status, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    };
    if (upgrade === undefined) res.once('close', done);
    else upgrade.socket.once('close', done);
    try {
      const { url, path } = parseTarget(req.url ?? '/');
      let user: RequestContext['user'];
      if (o.auth !== undefined) {
        const verdict = await o.auth.check(req, path);
        if (!verdict.ok) throw new HttpError(verdict.status, verdict.message);
        user = verdict.user;
      }
      const match = o.routes.match(method, path);
      if (match.kind === 'none') throw new HttpError(404, '404 page not found\n');
      if (match.kind === 'method') throw new HttpError(405, `405: Method Not Allowed\n`, { allow: match.allowed.join(', ') });
      bucket = match.route.bucket;
      longRunning = match.route.longRunning === true;
      await match.route.handle({
        req, res, url, path, params: match.params,
        ...(upgrade === undefined ? {} : { upgrade }),
        ...(user === undefined ? {} : { user }),
      });
    } catch (err) {
      if (err instanceof HttpError) {
        if (err.status === 400) o.logger.v(4, 'Bad request', { method, url: truncateText(req.url ?? ''), err: truncateText(err.message) });
        sendText(res, err.status, err.message, err.headers);
        return;
      }
      o.logger.error('Request failed', { method, url: truncateText(req.url ?? ''), err: truncateText(messageOf(err)) });
      sendText(res, 500, `Internal Error: ${messageOf(err)}`);
    }
  }

  return {
    onRequest: (req, res) => {
      void serve(req, res);
    },
    onUpgrade: (req, socket, head) => {
      if (!(socket instanceof Socket)) {
        socket.destroy();
        return;
      }
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket);
      res.once('finish', () => {
        res.detachSocket(socket);
        socket.end();
      });
      socket.on('error', (err) => {
        o.logger.v(4, 'Upgraded connection failed', { url: req.url, err: messageOf(err) });
      });
      void serve(req, res, { socket, head });
    },
  };
}
