/**
 * Connect subresources: the ones that are not objects of the registry (pods/log, pods/exec,
 * pods/attach, pods/portforward) are served by a Connector the composition root gives the
 * router. Upgrade requests (WebSocket, SPDY) reach the router through the HTTPS server's
 * `upgrade` event; they run the same pipeline (authentication, authorization, Status errors) on
 * a ServerResponse bound to the raw socket, and a connector may take the socket over.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Query } from '../http/index.js';
import type { RequestUser, ResourceRegistry } from '../registry/index.js';

export interface UpgradeContext {
  /** The client's connection; after a successful upgrade the connector owns it. */
  readonly socket: Duplex;
  /** Bytes the client sent after the request head. */
  readonly head: Buffer;
  /** Call once the connector writes to `socket` itself: the response object lets go of it. */
  release(): void;
}

export interface ConnectRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Present when the client asked for a protocol upgrade. */
  readonly upgrade: UpgradeContext | undefined;
  /** The registry of the parent resource (pods for pods/exec). */
  readonly registry: ResourceRegistry;
  /** get, create (POST), ... as the request info says. */
  readonly verb: string;
  readonly namespace: string;
  readonly name: string;
  /** For proxy subresources: the path after `proxy` ('' when none). */
  readonly subpath: string;
  readonly query: Query;
  readonly user: RequestUser;
}

export interface Connector {
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  /**
   * Answers the request, streaming as long as it needs (follow, exec sessions). Throws a
   * StatusError before anything was written; the router answers it as a Status.
   */
  serve(request: ConnectRequest): Promise<void>;
}

/**
 * A response bound to the socket of an upgrade request, so that refusals are written as for
 * any request; the connection closes after such an answer.
 */
export function upgradeResponse(req: IncomingMessage, socket: Duplex, head: Buffer): { res: ServerResponse; upgrade: UpgradeContext } {
  // Upgrade requests arrive on the HTTPS server's TLS sockets (net.Socket subclasses).
  if (!(socket instanceof Socket)) throw new TypeError('an upgrade request without a network socket');
  const raw = socket;
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(raw);
  let released = false;
  res.on('finish', () => {
    if (!released) socket.end();
  });
  return {
    res,
    upgrade: {
      socket,
      head,
      release: () => {
        if (released) return;
        released = true;
        res.detachSocket(raw);
      },
    },
  };
}
