/**
 * SPDY streams through the API server: a client's SPDY/3.1 upgrade (kubectl without
 * WebSockets: exec, attach and cp before 1.30, port-forward before 1.31) is relayed to the node
 * agent as an upgrade of its own, with the protocols the client offered, and the bytes are
 * piped both ways once the agent switched protocols. A WebSocket that tunnels SPDY
 * (`SPDY/3.1+portforward.k8s.io`, kubectl 1.31+ port-forward) is unwrapped the same way: the
 * agent gets a SPDY upgrade, each binary message's bytes go to it, its bytes come back as binary
 * messages (upstream's API server does this for kubelets). The agent's refusal is answered with
 * its code and text before the client's upgrade completes.
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { relayBoth } from '../../api/relay.js';
import type { ConnectRequest, UpgradeContext } from '../routing/index.js';
import type { NodeProxyOptions } from './index.js';
import { agentRefused, agentRequestOptions, unreachable, type NodeTarget } from './target.js';

export const TUNNEL_PREFIX = 'SPDY/3.1+';
const HANDSHAKE_TIMEOUT_MS = 10_000;

interface Upgraded {
  readonly socket: Duplex;
  readonly head: Buffer;
  readonly protocol: string;
}

/** The X-Stream-Protocol-Version values a client offered. */
export function streamProtocols(req: IncomingMessage): string[] {
  return (req.headersDistinct['x-stream-protocol-version'] ?? []).flatMap((v) => v.split(',')).map((p) => p.trim()).filter((p) => p !== '');
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    res.on('error', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** Upgrades a connection to the agent's `path` to SPDY/3.1. Throws the agent's refusal or 500. */
function dialAgent(options: NodeProxyOptions, target: NodeTarget, path: string, protocols: readonly string[]): Promise<Upgraded> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      ...agentRequestOptions(options.tls, target),
      path,
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': [...protocols], 'Content-Length': '0' },
      timeout: HANDSHAKE_TIMEOUT_MS,
    });
    req.on('upgrade', (res, socket, head) => {
      const chosen = res.headers['x-stream-protocol-version'];
      resolve({ socket, head, protocol: typeof chosen === 'string' ? chosen : '' });
    });
    req.on('response', (res) => {
      void readBody(res).then((text) => {
        reject(agentRefused(res.statusCode ?? 502, text, target));
      });
    });
    req.on('timeout', () => {
      req.destroy(new Error(`no answer within ${HANDSHAKE_TIMEOUT_MS} ms`));
    });
    req.on('error', (err) => {
      reject(unreachable(target, path, err));
    });
    req.end();
  });
}

/** Relays the client's SPDY upgrade (checked) to the agent's `path`. */
export async function relaySpdy(r: ConnectRequest, upgrade: UpgradeContext, options: NodeProxyOptions, target: NodeTarget, path: string): Promise<void> {
  const agent = await dialAgent(options, target, path, streamProtocols(r.req));
  upgrade.release();
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', 'Upgrade: SPDY/3.1'];
  if (agent.protocol !== '') lines.push(`X-Stream-Protocol-Version: ${agent.protocol}`);
  upgrade.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (agent.head.length > 0) upgrade.socket.write(agent.head);
  if (upgrade.head.length > 0) agent.socket.write(upgrade.head);
  relayBoth(upgrade.socket, agent.socket, {
    idleTimeoutMs: 0,
    onError: (err) => { options.log(`node proxy: a SPDY stream failed: ${err.message}`); },
  });
}

/**
 * Serves a WebSocket tunnelling SPDY: `accept` completes the client's upgrade with the
 * tunnelling protocol once the agent switched to SPDY.
 */
export async function tunnelSpdy(
  options: NodeProxyOptions, target: NodeTarget, path: string, tunnelProtocol: string,
  accept: (protocol: string) => Promise<WebSocket | undefined>,
): Promise<void> {
  const agent = await dialAgent(options, target, path, [tunnelProtocol.slice(TUNNEL_PREFIX.length)]);
  const client = await accept(tunnelProtocol);
  if (client === undefined) {
    agent.socket.destroy();
    return;
  }
  const close = (): void => {
    agent.socket.destroy();
    if (client.readyState === WebSocket.OPEN) client.close(1000);
  };
  if (agent.head.length > 0) client.send(agent.head, { binary: true });
  agent.socket.on('data', (chunk: Buffer) => {
    if (client.readyState === WebSocket.OPEN) client.send(chunk, { binary: true });
  });
  client.on('message', (data, isBinary) => {
    if (isBinary && Buffer.isBuffer(data)) agent.socket.write(data);
  });
  agent.socket.on('end', close);
  agent.socket.on('close', close);
  agent.socket.on('error', (err) => {
    options.log(`node proxy: the node agent side of a tunnelled SPDY stream failed: ${err.message}`);
    close();
  });
  client.on('close', close);
  client.on('error', (err) => {
    options.log(`node proxy: the client side of a tunnelled SPDY stream failed: ${err.message}`);
    close();
  });
}
