/**
 * The WebSocket proxy between a client of /exec, /attach or /portForward and the container
 * runtime's streaming server (the URL CRI Exec/Attach/PortForward returned). The backend is
 * dialled first with the subprotocols the client offered, so that its refusals become HTTP
 * answers; then the client's upgrade completes with the protocol the backend chose, and
 * messages are relayed both ways as they are (channel byte first). A client that offered only
 * v5.channel.k8s.io to a runtime that speaks v4.channel.k8s.io gets v5 with v4 underneath
 * (v5's CLOSE signals, which v4 cannot carry, are dropped). The stream closes after
 * `idleTimeoutMs` without a message in either direction (streamingConnectionIdleTimeout).
 * SPDY upgrades are refused with a 400 that says to use WebSocket.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';

/** ws, loaded on the first streaming request (most agents never serve one: it is not loaded at start). */
let wsModule: Promise<typeof import('ws')> | undefined;
const loadWs = (): Promise<typeof import('ws')> => (wsModule ??= import('ws'));
import { messageOf } from '../../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import { HttpError } from '../http.js';
import type { RequestContext } from '../router.js';

export const V5 = 'v5.channel.k8s.io';
export const V4 = 'v4.channel.k8s.io';
/** v5's "close this stream" signal: a message on channel 255. */
const CLOSE_CHANNEL = 255;

export function isWebSocketRequest(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** Refuses anything but a WebSocket upgrade (a plain request or SPDY). */
export function requireWebSocket(ctx: RequestContext): void {
  const upgrade = ctx.req.headers.upgrade ?? '';
  if (/^spdy\//i.test(upgrade)) {
    throw new HttpError(400, `SPDY streaming (${upgrade}) is not supported by nodeagent; use a WebSocket upgrade with subprotocol ${V5} or ${V4}`);
  }
  if (ctx.upgrade === undefined || !isWebSocketRequest(ctx.req)) throw new HttpError(400, 'Upgrade request required');
}

export function offeredProtocols(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
}

export interface ProxyOptions {
  /** 0: no idle limit. */
  readonly idleTimeoutMs: number;
  readonly logger: Logger;
  readonly handshakeTimeoutMs?: number;
}

async function dial(url: string, protocols: readonly string[], timeoutMs: number): Promise<{ backend: WebSocket; early: { data: RawData; isBinary: boolean }[] }> {
  const { WebSocket: Client } = await loadWs();
  return new Promise((resolve, reject) => {
    const backend = new Client(url, [...protocols], { handshakeTimeout: timeoutMs, perMessageDeflate: false });
    const early: { data: RawData; isBinary: boolean }[] = [];
    backend.on('message', (data, isBinary) => { early.push({ data, isBinary }); });
    backend.once('open', () => { resolve({ backend, early }); });
    backend.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const status = res.statusCode ?? 500;
        reject(new HttpError(status >= 400 ? status : 500, Buffer.concat(chunks).toString('utf8').trim() || `the runtime's streaming server answered ${status}`));
      });
      res.on('error', (err) => { reject(err); });
    });
    backend.once('error', (err) => {
      reject(new HttpError(500, `error dialing the runtime's streaming server: ${messageOf(err)}`));
    });
  });
}

/** Proxies the (already checked) WebSocket upgrade of `ctx` to `url`. Resolves once the stream is established. */
export async function proxyWebSocket(ctx: RequestContext, url: string, o: ProxyOptions): Promise<void> {
  const upgrade = ctx.upgrade;
  if (upgrade === undefined) throw new HttpError(400, 'Upgrade request required');
  const offered = offeredProtocols(ctx.req);
  const toBackend = offered.includes(V5) && !offered.includes(V4) ? [...offered, V4] : offered;
  const { backend, early } = await dial(url, toBackend, o.handshakeTimeoutMs ?? 10_000);
  const chosen = backend.protocol;
  const translate = chosen === V4 && !offered.includes(V4) && offered.includes(V5);
  const clientProtocol = translate ? V5 : chosen;
  const { WebSocketServer } = await loadWs();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => (clientProtocol === '' ? false : clientProtocol) });
  if (upgrade.socket instanceof Socket) ctx.res.detachSocket(upgrade.socket);
  await new Promise<void>((resolve) => {
    let upgraded = false;
    // ws answers a malformed handshake itself and closes the socket without calling back.
    upgrade.socket.once('close', () => {
      if (upgraded) return;
      backend.terminate();
      resolve();
    });
    wss.handleUpgrade(ctx.req, upgrade.socket, upgrade.head, (client) => {
      upgraded = true;
      relay(client, backend, early, translate, o);
      resolve();
    });
  });
}

/** WebSocket.OPEN (the readyState of an open connection). */
const OPEN = 1;

function relay(client: WebSocket, backend: WebSocket, early: readonly { data: RawData; isBinary: boolean }[], translate: boolean, o: ProxyOptions): void {
  let timer: NodeJS.Timeout | undefined;
  const touch = (): void => {
    if (o.idleTimeoutMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      o.logger.v(2, 'Closing an idle streaming connection', { idleTimeoutMs: o.idleTimeoutMs });
      client.close(1000, 'idle timeout');
      backend.close(1000, 'idle timeout');
    }, o.idleTimeoutMs);
    timer.unref();
  };
  touch();
  backend.removeAllListeners('message');
  for (const m of early) client.send(m.data, { binary: m.isBinary });
  backend.on('message', (data, isBinary) => {
    touch();
    if (client.readyState === OPEN) client.send(data, { binary: isBinary });
  });
  client.on('message', (data, isBinary) => {
    touch();
    if (translate && isBinary && Buffer.isBuffer(data) && data[0] === CLOSE_CHANNEL) return;
    if (backend.readyState === OPEN) backend.send(data, { binary: isBinary });
  });
  const closeCode = (code: number): number => (code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 && code !== 1015 ? code : 1000);
  backend.on('close', (code, reason) => {
    clearTimeout(timer);
    if (client.readyState === OPEN) client.close(closeCode(code), reason);
  });
  client.on('close', (code, reason) => {
    clearTimeout(timer);
    if (backend.readyState === OPEN) backend.close(closeCode(code), reason);
    else backend.terminate();
  });
  const fail = (side: string) => (err: Error): void => {
    o.logger.v(2, 'Streaming connection failed', { side, err: err.message });
    client.terminate();
    backend.terminate();
  };
  backend.on('error', fail('runtime'));
  client.on('error', fail('client'));
}
