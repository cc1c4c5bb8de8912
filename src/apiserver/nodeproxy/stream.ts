/**
 * pods/exec, pods/attach and pods/portforward: upgrades relayed to the node agent's
 * /exec/{ns}/{pod}/{container}, /attach/... and /portForward/{ns}/{pod}. The request is checked
 * first (options, pod, container, node: answered as HTTP errors). SPDY upgrades and WebSockets
 * tunnelling SPDY go through spdy.ts. Other WebSockets: the agent is dialled as a WebSocket
 * client with the subprotocols the client offered; the client's upgrade completes with the one
 * the agent chose and messages are bridged both ways as they are (channel byte first), close
 * codes included. When the agent cannot be reached or refuses, a client that offered
 * v5/v4.channel.k8s.io is upgraded anyway and gets the error as a Status on the error channel
 * (3), so kubectl shows it instead of falling back to SPDY.
 */
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { messageOf } from '../../api/errors.js';
import type { Connector, ConnectRequest, UpgradeContext } from '../routing/index.js';
import { badRequest, toStatusError } from '../status/index.js';
import type { NodeProxyOptions } from './index.js';
import { relaySpdy, TUNNEL_PREFIX, tunnelSpdy } from './spdy.js';
import { agentRefused, agentRequestOptions, agentUrl, chooseContainer, locatePod, unreachable, type NodeTarget } from './target.js';
import { quoteValue } from '../../api/quote.js';

export const V5 = 'v5.channel.k8s.io';
export const V4 = 'v4.channel.k8s.io';
const ERROR_CHANNEL = 3;
const HANDSHAKE_TIMEOUT_MS = 10_000;

type Kind = 'exec' | 'attach' | 'portforward';

function offered(r: ConnectRequest): string[] {
  return (r.req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
}

/** The agent path (with query) for the request, after upstream's option checks. */
function agentPath(kind: Kind, r: ConnectRequest, container: string): string {
  const q = r.query;
  const out = new URLSearchParams();
  const base = `/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`;
  if (kind === 'portforward') {
    for (const p of [...q.all('ports'), ...q.all('port')]) {
      if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535) throw badRequest(`invalid port ${quoteValue(p)}: must be between 1 and 65535`);
      out.append('port', p);
    }
    return `/portForward${base}${out.toString() === '' ? '' : `?${out.toString()}`}`;
  }
  const streams = { stdin: q.bool('stdin'), stdout: q.bool('stdout'), stderr: q.bool('stderr'), tty: q.bool('tty') };
  if (!streams.stdin && !streams.stdout && !streams.stderr) throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  if (kind === 'exec') {
    const command = q.all('command');
    if (command.length === 0) throw badRequest('you must specify at least one command for the container');
    for (const c of command) out.append('command', c);
  }
  for (const [name, on] of Object.entries(streams)) if (on) out.set(name, '1');
  return `/${kind}${base}/${encodeURIComponent(container)}?${out.toString()}`;
}

interface Dialled {
  readonly backend: WebSocket;
  readonly early: { data: RawData; isBinary: boolean }[];
}

function dial(options: NodeProxyOptions, target: NodeTarget, path: string, protocols: readonly string[], headers: Record<string, string>): Promise<Dialled> {
  return new Promise((resolve, reject) => {
    const tls = agentRequestOptions(options.tls, target);
    const backend = new WebSocket(agentUrl(target, path), [...protocols], {
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: tls.key }),
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      rejectUnauthorized: tls.rejectUnauthorized ?? false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      perMessageDeflate: false,
      headers,
    });
    const early: { data: RawData; isBinary: boolean }[] = [];
    backend.on('message', (data, isBinary) => early.push({ data, isBinary }));
    backend.once('open', () => {
      resolve({ backend, early });
    });
    backend.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        reject(agentRefused(res.statusCode ?? 502, Buffer.concat(chunks).toString('utf8'), target));
      });
      res.on('error', (err) => {
        reject(unreachable(target, path, err));
      });
    });
    backend.once('error', (err) => {
      reject(unreachable(target, path, err));
    });
  });
}

const closeCode = (code: number): number => (code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 && code !== 1015 ? code : 1000);

function bridge(client: WebSocket, { backend, early }: Dialled, log: (m: string) => void): void {
  backend.removeAllListeners('message');
  for (const m of early) client.send(m.data, { binary: m.isBinary });
  backend.on('message', (data, isBinary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  client.on('message', (data, isBinary) => {
    if (backend.readyState === WebSocket.OPEN) backend.send(data, { binary: isBinary });
  });
  backend.on('close', (code, reason) => {
    if (client.readyState === WebSocket.OPEN) client.close(closeCode(code), reason);
  });
  client.on('close', (code, reason) => {
    if (backend.readyState === WebSocket.OPEN) backend.close(closeCode(code), reason);
    else backend.terminate();
  });
  const fail = (side: string) => (err: Error): void => {
    log(`node proxy: the ${side} side of a stream failed: ${err.message}`);
    client.terminate();
    backend.terminate();
  };
  backend.on('error', fail('node agent'));
  client.on('error', fail('client'));
}

/** Completes the client's WebSocket upgrade with `protocol`; resolves with the socket (undefined when ws refused the handshake). */
/** RFC 7230 tokens separated by commas: what ws accepts in Sec-WebSocket-Protocol. */
const TOKEN_LIST = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(\s*,\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*$/;

function accept(r: ConnectRequest, upgrade: UpgradeContext, protocol: string): Promise<WebSocket | undefined> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => (protocol === '' ? false : protocol) });
  // kubectl offers `SPDY/3.1+portforward.k8s.io`, which is no token ('/'): ws would refuse the
  // header, so it sees a placeholder; the protocol chosen here is answered all the same.
  const offeredHeader = r.req.headers['sec-websocket-protocol'];
  if (offeredHeader !== undefined && !TOKEN_LIST.test(offeredHeader.trim())) r.req.headers['sec-websocket-protocol'] = 'orch-offered';
  upgrade.release();
  return new Promise((resolve) => {
    // The client left while the agent was dialled.
    if (upgrade.socket.destroyed) {
      resolve(undefined);
      return;
    }
    let upgraded = false;
    // ws answers a malformed handshake itself and closes the socket without calling back.
    upgrade.socket.once('close', () => {
      if (!upgraded) resolve(undefined);
    });
    wss.handleUpgrade(r.req, upgrade.socket, upgrade.head, (client) => {
      upgraded = true;
      resolve(client);
    });
  });
}

function streamConnector(kind: Kind, options: NodeProxyOptions): Connector {
  return {
    group: '',
    resource: 'pods',
    subresource: kind,
    async serve(r) {
      const { pod, target } = await locatePod(r.registry, options.nodes(), r.namespace, r.name);
      const container = kind === 'portforward' ? '' : chooseContainer(pod, r.query.string('container'));
      const path = agentPath(kind, r, container);
      const upgrade = r.upgrade;
      const asked = (r.req.headers.upgrade ?? '').toLowerCase();
      if (upgrade === undefined || (asked !== 'websocket' && !asked.startsWith('spdy/'))) throw badRequest('Upgrade request required');
      if (asked.startsWith('spdy/')) return relaySpdy(r, upgrade, options, target, path);
      const protocols = offered(r);
      const tunnel = protocols.find((p) => p.startsWith(TUNNEL_PREFIX));
      if (tunnel !== undefined) return tunnelSpdy(options, target, path, tunnel, (protocol) => accept(r, upgrade, protocol));
      let dialled: Dialled;
      try {
        dialled = await dial(options, target, path, protocols, {});
      } catch (err) {
        const inBand = [V5, V4].find((p) => protocols.includes(p));
        if (inBand === undefined) throw err;
        const client = await accept(r, upgrade, inBand);
        const status = toStatusError(err).toStatus();
        client?.send(Buffer.concat([Buffer.from([ERROR_CHANNEL]), Buffer.from(JSON.stringify(status))]), { binary: true }, () => {
          client.close(1000);
        });
        options.log(`node proxy: ${kind} of pod ${r.namespace}/${r.name}: ${messageOf(err)}`);
        return;
      }
      const client = await accept(r, upgrade, dialled.backend.protocol);
      if (client === undefined) {
        dialled.backend.terminate();
        return;
      }
      bridge(client, dialled, options.log);
    },
  };
}

export function streamConnectors(options: NodeProxyOptions): Connector[] {
  return [streamConnector('exec', options), streamConnector('attach', options), streamConnector('portforward', options)];
}
