/**
 * The WebSocket proxy between a client of /exec, /attach or /portForward and the container
 * runtime's streaming server (the URL CRI Exec/Attach/PortForward returned), for the
 * WebSocket protocols the runtime speaks itself (v4.channel.k8s.io and older, the
 * portforward.k8s.io WebSocket protocol). The backend is dialled first with the subprotocols
 * the client offered, so that its refusals become HTTP answers; then the client's upgrade
 * completes with the protocol the backend chose, and messages are relayed both ways as they are
 * (channel byte first). The stream closes after `idleTimeoutMs` without a message in either
 * direction (streamingConnectionIdleTimeout). v5.channel.k8s.io (translate.ts) and SPDY
 * (upgrade.ts) are served elsewhere.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';

/** ws, loaded on the first streaming request (most agents never serve one: it is not loaded at start). */
let loadWs: Promise<typeof import('ws')> | undefined;
import { messageOf } from '../../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import { HttpError } from '../http.js';
import type { RequestContext } from '../router.js';

/** RFC 7230 tokens separated by commas: what ws accepts in Sec-WebSocket-Protocol. */
const TOKEN_LIST = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(\s*,\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*$/;

export const V5 = 'v5.channel.k8s.io';
export const V4 = 'v4.channel.k8s.io';

export function isWebSocketRequest(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** Refuses anything but a WebSocket or SPDY upgrade. */
export function requireUpgrade(ctx: RequestContext): void {
  const upgrade = (ctx.req.headers.upgrade ?? '').toLowerCase();
  if (ctx.upgrade === undefined || (upgrade !== 'websocket' && !upgrade.startsWith('spdy/'))) throw new HttpError(400, 'Upgrade request required');
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
  loadWs ??= import('ws');
  const { WebSocket: Client } = await loadWs;
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
  const { backend, early } = await dial(url, offeredProtocols(ctx.req), o.handshakeTimeoutMs ?? 10_000);
  const client = await acceptWebSocket(ctx, backend.protocol);
  if (client === undefined) {
    backend.terminate();
    return;
  }
  relay(client, backend, early, o);
}

/**
 * Completes the client's WebSocket upgrade with `protocol`; resolves with the connection, or
 * undefined when the client left or sent a malformed handshake (ws answers that itself).
 */
export async function acceptWebSocket(ctx: RequestContext, protocol: string): Promise<WebSocket | undefined> {
  // ws, loaded on the first streaming request (most agents never serve one).
  loadWs ??= import('ws');
  const upgrade = ctx.upgrade;
  if (upgrade === undefined) throw new HttpError(400, 'Upgrade request required');
  const { WebSocketServer } = await loadWs;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => (protocol === '' ? false : protocol) });
  // kubectl offers `SPDY/3.1+portforward.k8s.io`, which is no token ('/'): ws would refuse the
  // header, so it sees a placeholder; the protocol chosen here is answered all the same.
  const offeredHeader = ctx.req.headers['sec-websocket-protocol'];
  if (offeredHeader !== undefined && !TOKEN_LIST.test(offeredHeader.trim())) ctx.req.headers['sec-websocket-protocol'] = 'orch-offered';
  if (upgrade.socket instanceof Socket) ctx.res.detachSocket(upgrade.socket);
  if (upgrade.socket.destroyed) return undefined;
  return new Promise((resolve) => {
    let upgraded = false;
    upgrade.socket.once('close', () => {
      if (!upgraded) resolve(undefined);
    });
    wss.handleUpgrade(ctx.req, upgrade.socket, upgrade.head, (client) => {
      upgraded = true;
      resolve(client);
    });
  });
}

/** WebSocket.OPEN (the readyState of an open connection). */
export const OPEN = 1;

export const closeCode = (code: number): number => (code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 && code !== 1015 ? code : 1000);

function relay(client: WebSocket, backend: WebSocket, early: readonly { data: RawData; isBinary: boolean }[], o: ProxyOptions): void {
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
    if (backend.readyState === OPEN) backend.send(data, { binary: isBinary });
  });
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
