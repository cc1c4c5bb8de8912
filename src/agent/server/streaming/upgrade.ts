/**
 * SPDY toward the runtime's streaming server: dialling it with an HTTP upgrade to SPDY/3.1
 * (the protocols offered in X-Stream-Protocol-Version headers), relaying a client's own SPDY
 * upgrade to it byte for byte (kubectl without WebSockets: exec, attach, cp before 1.30,
 * port-forward before 1.31), and relaying SPDY tunnelled in a WebSocket
 * (`SPDY/3.1+portforward.k8s.io`: each binary message carries bytes of the SPDY connection, as
 * kubectl 1.31+ port-forward sends them) to an upgraded connection. The runtime's refusal of the
 * upgrade is answered as an HTTP error with its code and text.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { messageOf } from '../../../api/errors.js';
import { relayBoth } from '../../../api/relay.js';
import type { Logger } from '../../logging/index.js';
import { HttpError } from '../http.js';
import type { RequestContext } from '../router.js';
import { acceptWebSocket, OPEN } from './proxy.js';

export const SPDY_UPGRADE = 'SPDY/3.1';
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
/** The WebSocket subprotocol prefix of SPDY tunnelled in a WebSocket. */
export const TUNNEL_PREFIX = 'SPDY/3.1+';

export interface Upgraded {
  readonly socket: Duplex;
  /** Bytes the runtime sent after its 101 head. */
  readonly head: Buffer;
  /** The protocol the runtime chose (its X-Stream-Protocol-Version). */
  readonly protocol: string;
  readonly headers: IncomingMessage['headers'];
}

export interface RelayOptions {
  /** 0: no idle limit. */
  readonly idleTimeoutMs: number;
  readonly logger: Logger;
  readonly handshakeTimeoutMs?: number;
}

export function isSpdyUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase().startsWith('spdy/');
}

/** The X-Stream-Protocol-Version values a client offered (one header per value, or comma lists). */
export function offeredStreamProtocols(req: IncomingMessage): string[] {
  const raw = req.headersDistinct['x-stream-protocol-version'] ?? [];
  return raw.flatMap((v) => v.split(',')).map((p) => p.trim()).filter((p) => p !== '');
}

async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** Upgrades a connection to `url` to SPDY/3.1 offering `protocols`. Throws HttpError. */
export function dialSpdy(url: string, protocols: readonly string[], timeoutMs = 10_000): Promise<Upgraded> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: SPDY_UPGRADE, 'X-Stream-Protocol-Version': [...protocols], 'Content-Length': '0' },
      timeout: timeoutMs,
    });
    req.on('upgrade', (res, socket, head) => {
      const chosen = res.headers['x-stream-protocol-version'];
      resolve({ socket, head, protocol: typeof chosen === 'string' ? chosen : '', headers: res.headers });
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 500;
      readText(res).then((text) => {
        reject(new HttpError(status >= 400 ? status : 500, text === '' ? `the runtime's streaming server answered ${status}` : text));
      }, (err: unknown) => {
        reject(new HttpError(500, `reading the runtime's answer failed: ${messageOf(err)}`));
      });
    });
    req.on('timeout', () => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    req.on('error', (err) => {
      reject(new HttpError(500, `error dialing the runtime's streaming server: ${messageOf(err)}`));
    });
    req.end();
  });
}

function headLines(status: string, headers: Record<string, string | readonly string[]>): string {
  const lines = [`HTTP/1.1 ${status}`];
  for (const [name, value] of Object.entries(headers)) {
    for (const v of typeof value === 'string' ? [value] : value) lines.push(`${name}: ${v}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Relays the client's SPDY upgrade (already checked) to the runtime's `url`. */
export async function proxySpdyUpgrade(ctx: RequestContext, url: string, o: RelayOptions): Promise<void> {
  const upgrade = ctx.upgrade;
  if (upgrade === undefined) throw new HttpError(400, 'Upgrade request required');
  const backend = await dialSpdy(url, offeredStreamProtocols(ctx.req), o.handshakeTimeoutMs);
  if (upgrade.socket instanceof Socket) ctx.res.detachSocket(upgrade.socket);
  const headers: Record<string, string> = { Connection: 'Upgrade', Upgrade: SPDY_UPGRADE };
  if (backend.protocol !== '') headers['X-Stream-Protocol-Version'] = backend.protocol;
  upgrade.socket.write(headLines('101 Switching Protocols', headers));
  if (backend.head.length > 0) upgrade.socket.write(backend.head);
  if (upgrade.head.length > 0) backend.socket.write(upgrade.head);
  relayBoth(upgrade.socket, backend.socket, {
    idleTimeoutMs: o.idleTimeoutMs,
    onIdle: () => { o.logger.v(2, 'Closing an idle streaming connection', { idleTimeoutMs: o.idleTimeoutMs }); },
    onError: (err) => { o.logger.v(4, 'Streaming connection failed', { err: err.message }); },
  });
}

/**
 * Serves a WebSocket that tunnels SPDY (`SPDY/3.1+<protocol>`): the runtime is dialled with a
 * SPDY upgrade for `<protocol>`, the client's upgrade completes with the tunnelling protocol,
 * and each binary message's bytes go to the runtime's connection and back as binary messages.
 */
export async function tunnelSpdy(ctx: RequestContext, url: string, tunnelProtocol: string, o: RelayOptions): Promise<void> {
  const inner = tunnelProtocol.slice(TUNNEL_PREFIX.length);
  const backend = await dialSpdy(url, [inner], o.handshakeTimeoutMs);
  const client = await acceptWebSocket(ctx, tunnelProtocol);
  if (client === undefined) {
    backend.socket.destroy();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const close = (): void => {
    clearTimeout(timer);
    backend.socket.destroy();
    if (client.readyState === OPEN) client.close(1000);
  };
  const touch = (): void => {
    if (o.idleTimeoutMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(close, o.idleTimeoutMs);
    timer.unref();
  };
  touch();
  if (backend.head.length > 0) client.send(backend.head, { binary: true });
  backend.socket.on('data', (chunk: Buffer) => {
    touch();
    if (client.readyState === OPEN) client.send(chunk, { binary: true });
  });
  client.on('message', (data, isBinary) => {
    touch();
    if (isBinary && Buffer.isBuffer(data)) backend.socket.write(data);
  });
  backend.socket.on('end', close);
  backend.socket.on('close', close);
  backend.socket.on('error', (err) => {
    o.logger.v(4, 'Streaming connection failed', { side: 'runtime', err: err.message });
    close();
  });
  client.on('close', close);
  client.on('error', (err) => {
    o.logger.v(4, 'Streaming connection failed', { side: 'client', err: err.message });
    close();
  });
}
