/**
 * The HTTPS listener: TLS 1.2+, asks every client for a certificate and verifies it against the
 * client CAs without rejecting the connection (authn decides), HTTP/1.1 keep-alive, protocol
 * upgrades (WebSocket, SPDY) handed to `upgrade` when given. close()
 * stops accepting, ends idle connections and destroys the rest (watches) after a grace period.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { OrchError } from '../../api/errors.js';

export interface HttpsOptions {
  readonly bindAddress: string;
  readonly port: number;
  readonly certPem: string;
  readonly keyPem: string;
  /** PEM certificates of the CAs that sign client certificates. */
  readonly clientCaPems: readonly string[];
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Requests asking for a protocol upgrade (WebSocket, SPDY); absent: served by `handler`. */
  readonly upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * Connections waiting to be accepted (default 4096; the kernel caps it at net.core.somaxconn).
   * Node's 511 overflows when thousands of agents connect at once: their SYNs are dropped and
   * they retry after seconds.
   */
  readonly backlog?: number;
}

export const DEFAULT_BACKLOG = 4096;

export interface HttpsServer {
  readonly port: number;
  /** Idempotent; resolves when every connection is closed. */
  close(graceMs?: number): Promise<void>;
}

export function startHttpsServer(options: HttpsOptions): Promise<HttpsServer> {
  const server: Server = createServer({
    cert: options.certPem,
    key: options.keyPem,
    ...(options.clientCaPems.length === 0 ? {} : { ca: [...options.clientCaPems] }),
    requestCert: options.clientCaPems.length > 0,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    ALPNProtocols: ['http/1.1'],
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    requestTimeout: 0,
  }, options.handler);
  if (options.upgrade !== undefined) server.on('upgrade', options.upgrade);
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    // authn keeps a connection's client identity for its lifetime: no renegotiation may change it.
    socket.disableRenegotiation();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) => {
      reject(new OrchError('APISERVER_LISTEN', 'unavailable', `cannot listen on ${options.bindAddress}:${options.port}: ${err.message}`, { subject: '--secure-port', cause: err }));
    });
    server.listen({ port: options.port, host: options.bindAddress, backlog: options.backlog ?? DEFAULT_BACKLOG }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : options.port;
      let closing: Promise<void> | undefined;
      resolve({
        port,
        close: (graceMs = 1000) => {
          closing ??= new Promise<void>((done) => {
            server.close(() => {
              done();
            });
            server.closeIdleConnections();
            const timer = setTimeout(() => {
              for (const s of sockets) s.destroy();
            }, graceMs);
            timer.unref();
          });
          return closing;
        },
      });
    });
  });
}
