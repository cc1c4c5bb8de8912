/**
 * Listening and connection bookkeeping shared by the three servers: `0.0.0.0` and `::` mean
 * every interface of every IP family (one dual-stack socket, as Go listens; IPv4 only when the
 * host has no IPv6), every connection is closed after a maximum lifetime (4 hours, as
 * upstream's server timeouts), idle keep-alive connections after 90 s, and close() ends every
 * connection, upgraded ones included.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logging/index.js';

export const MAX_CONNECTION_LIFETIME_MS = 4 * 3600_000;
export const KEEP_ALIVE_IDLE_MS = 90_000;

export interface Listening {
  readonly port: number;
  /** The address actually bound ('::' for a dual-stack socket). */
  readonly address: string;
  /** Stops accepting, ends every connection. Idempotent. */
  close(): Promise<void>;
}

async function bind(server: Server, port: number, host: string): Promise<void> {
  const failed = once(server, 'error');
  server.listen({ port, host, ipv6Only: false });
  const result = await Promise.race([once(server, 'listening').then(() => undefined), failed.then(([err]) => err as Error)]);
  if (result !== undefined) throw result;
}

export interface ListenOptions {
  readonly address: string;
  readonly port: number;
  readonly maxLifetimeMs?: number;
  readonly logger?: Logger;
}

/** Starts `server` listening; resolves once it accepts connections. */
export async function listen(server: Server, o: ListenOptions): Promise<Listening> {
  const sockets = new Set<Socket>();
  const lifetime = o.maxLifetimeMs ?? MAX_CONNECTION_LIFETIME_MS;
  server.keepAliveTimeout = KEEP_ALIVE_IDLE_MS;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    const timer = setTimeout(() => {
      o.logger?.v(4, 'Closing a connection at its maximum lifetime', { remote: socket.remoteAddress });
      socket.destroy();
    }, lifetime);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      sockets.delete(socket);
    });
  });
  let host = o.address;
  if (host === '0.0.0.0' || host === '::') {
    try {
      await bind(server, o.port, '::');
      host = '::';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (o.address === '::' || (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL')) throw err;
      await bind(server, o.port, '0.0.0.0');
      host = '0.0.0.0';
    }
  } else {
    await bind(server, o.port, host);
  }
  server.on('error', (err) => { o.logger?.error('Server error', { address: host, port: o.port, err: err.message }); });
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : o.port;
  let closing: Promise<void> | undefined;
  return {
    port,
    address: host,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => { resolve(); });
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
