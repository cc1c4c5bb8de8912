/**
 * The node proxy of a real orch-apiserver against a fake node agent of this test's own: an
 * HTTPS server with its own CA that requires the API server's client certificate, answers
 * /containerLogs (streaming when following) and WebSocket /exec with the v5.channel.k8s.io
 * framing (channel byte first, Status on channel 3), and echoes the bytes of SPDY upgrades (the
 * API server relays SPDY byte for byte, and unwraps SPDY tunnelled in a WebSocket). Checked
 * through HTTP, WebSocket and raw TLS clients and the real kubectl (logs, exec with its exit code).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { ensureCa, ensureServing, issueClientCertificate } from '../../src/apiserver/server/index.js';
import { freePort } from '../helpers/etcd.js';
import { runKubectl, startApiServer, v1Node, v1Pod, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';
import { openRawWebSocket } from '../helpers/ws-raw.js';

type Obj = Record<string, unknown>;
const V5 = 'v5.channel.k8s.io';
const PODS = '/api/v1/namespaces/default/pods';
const SUCCESS: Obj = { metadata: {}, status: 'Success' };

interface FakeAgent {
  readonly port: number;
  /** Paths (with query) and the client certificate's CN of every request, in order. */
  readonly seen: { path: string; cn: string }[];
  /** Lets a following log request write its second line and end. */
  release(): void;
  close(): Promise<void>;
}

const frame = (channel: number, data: string | Buffer): Buffer => Buffer.concat([Buffer.from([channel]), Buffer.from(data)]);

async function startFakeAgent(dir: string): Promise<FakeAgent> {
  const ca = await ensureCa(join(dir, 'agent-ca'));
  const serving = await ensureServing(join(dir, 'agent-ca'), ca, ['127.0.0.1', 'localhost']);
  const seen: { path: string; cn: string }[] = [];
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const record = (req: IncomingMessage): URL => {
    const socket = req.socket;
    const cn = socket instanceof TLSSocket ? socket.getPeerCertificate().subject.CN : undefined;
    seen.push({ path: req.url ?? '', cn: Array.isArray(cn) ? cn.join(',') : (cn ?? '') });
    return new URL(req.url ?? '/', 'https://agent');
  };
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req: IncomingMessage, res: ServerResponse) => {
    const url = record(req);
    if (url.pathname !== '/containerLogs/default/web/c') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('container not found ("other")');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('line 1\n');
    if (url.searchParams.get('follow') !== 'true') {
      res.end('line 2\n');
      return;
    }
    void released.then(() => res.end('line 2\n'));
  });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has(V5) ? V5 : false) });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = record(req);
    if (!url.pathname.startsWith('/exec/default/web/') && url.pathname !== '/portForward/default/web') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\npod does not exist');
      return;
    }
    if ((req.headers.upgrade ?? '').toLowerCase() === 'spdy/3.1') {
      // Chooses the first protocol offered and echoes the connection's bytes.
      const protocol = req.headersDistinct['x-stream-protocol-version']?.[0] ?? '';
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
      if (head.length > 0) socket.write(head);
      socket.on('data', (d: Buffer) => socket.write(d));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const command = url.searchParams.getAll('command');
      const finish = (status: Obj): void => {
        ws.send(frame(3, JSON.stringify(status)), () => {
          ws.close(1000);
        });
      };
      if (command[0] === 'false') {
        finish({ metadata: {}, status: 'Failure', message: 'command terminated with non-zero exit code', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
        return;
      }
      if (command[0] === 'echo') {
        ws.send(frame(1, `${command.slice(1).join(' ')}\n`));
        finish(SUCCESS);
        return;
      }
      // cat: stdin comes back upper-cased on stdout until the client closes stdin (v5: channel 255).
      ws.send(frame(1, 'ready\n'));
      ws.on('message', (data: Buffer) => {
        if (data[0] === 0) ws.send(frame(1, data.subarray(1).toString('utf8').toUpperCase()));
        if (data[0] === 255 && data[1] === 0) finish(SUCCESS);
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = await issueClientCertificate(ca, 'orch-apiserver-nodeagent-client', ['system:masters']);
  writeFileSync(join(dir, 'client.crt'), client.certPem);
  writeFileSync(join(dir, 'client.key'), client.keyPem);
  writeFileSync(join(dir, 'agent-ca.crt'), ca.certPem);
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    release: () => {
      release();
    },
    close: () => new Promise((resolve) => {
      wss.close();
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    }),
  };
}

void describe('pods/log and pods/exec through a fake node agent', () => {
  let dir: string;
  let agent: FakeAgent;
  let server: ApiServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-fake-agent-'));
    agent = await startFakeAgent(dir);
    server = await startApiServer({
      storage: 'sqlite',
      args: [`--nodeagent-client-certificate=${join(dir, 'client.crt')}`, `--nodeagent-client-key=${join(dir, 'client.key')}`, `--nodeagent-certificate-authority=${join(dir, 'agent-ca.crt')}`],
    });
    const api = server.client;
    assert.equal((await api.request('POST', '/api/v1/nodes', { body: v1Node('n1', agent.port) })).status, 201);
    assert.equal((await api.request('POST', '/api/v1/nodes', { body: v1Node('gone', await freePort()) })).status, 201);
    assert.equal((await api.request('POST', PODS, { body: v1Pod('web', 'n1') })).status, 201);
    assert.equal((await api.request('POST', PODS, { body: v1Pod('lost', 'gone') })).status, 201);
    assert.equal((await api.request('POST', PODS, { body: v1Pod('unbound', '') })).status, 201);
    const two = v1Pod('two', 'n1');
    (two.spec as Obj).containers = [{ name: 'a', image: 'x' }, { name: 'b', image: 'x' }];
    (two.spec as Obj).initContainers = [{ name: 'init', image: 'x' }];
    assert.equal((await api.request('POST', PODS, { body: two })).status, 201);
  });
  after(async () => {
    await server.stop();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('proxies pods/log with the options, presenting the API server\'s client certificate', async () => {
    const res = await server.client.request('GET', `${PODS}/web/log?tailLines=10&timestamps=true&sinceSeconds=60`, { headers: { Accept: '*/*' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'line 1\nline 2\n');
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    assert.deepEqual(agent.seen.at(-1), { path: '/containerLogs/default/web/c?timestamps=true&sinceSeconds=60&tailLines=10', cn: 'orch-apiserver-nodeagent-client' });
  });

  void it('streams followed logs as they come', async () => {
    const chunks: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      const req = request(`${server.url}${PODS}/web/log?follow=true`, { ca: server.client.ca, headers: { Authorization: `Bearer ${server.token}` } }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          chunks.push(c);
          if (chunks.join('') === 'line 1\n') agent.release();
        });
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    await ended;
    assert.equal(chunks.join(''), 'line 1\nline 2\n');
    assert.ok(chunks.length >= 2, 'the first line arrived before the agent wrote the second');
  });

  void it('answers bad log requests as upstream', async () => {
    const get = async (path: string): Promise<[number, string]> => {
      const r = await server.client.request('GET', path);
      return [r.status, String(r.body.message)];
    };
    assert.deepEqual(await get(`${PODS}/two/log`), [400, 'a container name must be specified for pod two, choose one of: [a b] or one of the init containers: [init]']);
    assert.deepEqual(await get(`${PODS}/web/log?container=nope`), [400, 'container nope is not valid for pod web']);
    assert.deepEqual(await get(`${PODS}/unbound/log`), [400, 'pod unbound does not have a host assigned']);
    assert.deepEqual(await get(`${PODS}/missing/log`), [404, 'pods "missing" not found']);
    assert.deepEqual(await get(`${PODS}/two/log?container=b`), [404, 'container not found ("other")'], 'the agent\'s refusal keeps its code and text');
    const [code, message] = await get(`${PODS}/web/log?sinceSeconds=0`);
    assert.equal(code, 422);
    assert.match(message, /sinceSeconds: Invalid value: 0: must be greater than 0/);
    const [down, why] = await get(`${PODS}/lost/log`);
    assert.equal(down, 500);
    assert.match(why, /error trying to reach the node agent of node gone \(https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/lost\/c\)/);
  });

  const dial = (path: string, protocols: string[]): Promise<{ ws: WebSocket; frames: Buffer[]; closed: Promise<number> }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${server.port}${path}`, protocols, { ca: server.client.ca, headers: { Authorization: `Bearer ${server.token}` } });
      const frames: Buffer[] = [];
      ws.on('message', (data: Buffer) => frames.push(data));
      const closed = new Promise<number>((done) => ws.on('close', (c) => {
        done(c);
      }));
      ws.once('open', () => {
        resolve({ ws, frames, closed });
      });
      ws.once('unexpected-response', (_req, res) => {
        reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`));
      });
      ws.once('error', reject);
    });

  void it('bridges a WebSocket exec both ways with the subprotocol the agent chose', async () => {
    const { ws, frames, closed } = await dial(`${PODS}/web/exec?command=cat&stdin=true&stdout=true`, [V5, 'v4.channel.k8s.io']);
    assert.equal(ws.protocol, V5);
    assert.equal(agent.seen.at(-1)?.path, '/exec/default/web/c?command=cat&stdin=1&stdout=1');
    ws.send(frame(0, 'abc'));
    ws.send(Buffer.from([255, 0]));
    assert.equal(await closed, 1000);
    assert.deepEqual(frames.map((f) => [f[0], f.subarray(1).toString('utf8')]), [[1, 'ready\n'], [1, 'ABC'], [3, JSON.stringify(SUCCESS)]]);
  });

  void it('relays SPDY upgrades byte for byte, and unwraps SPDY tunnelled in a WebSocket', async () => {
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: server.client.ca, servername: 'localhost' });
    await once(socket, 'secureConnect');
    socket.write(`POST ${PODS}/web/exec?command=sh&stdin=true&stdout=true HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.token}\r\n`
      + 'Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nX-Stream-Protocol-Version: v3.channel.k8s.io\r\nContent-Length: 0\r\n\r\n');
    let received = '';
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (received.includes('\r\n\r\n') && !received.includes('spdy bytes')) socket.write('spdy bytes');
    });
    await waitFor('the echo through the relay', () => received.includes('spdy bytes'));
    assert.match(received, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*X-Stream-Protocol-Version: v4\.channel\.k8s\.io\r\n/);
    assert.equal(agent.seen.at(-1)?.path, '/exec/default/web/c?command=sh&stdin=1&stdout=1');
    socket.destroy();
    // kubectl 1.31+'s subprotocol is no token: the ws client refuses to offer it, a raw one does.
    const tunnel = await openRawWebSocket({
      port: server.port, path: `${PODS}/web/portforward`, protocol: 'SPDY/3.1+portforward.k8s.io', ca: server.client.ca, headers: { Authorization: `Bearer ${server.token}` },
    });
    assert.match(tunnel.head, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*Sec-WebSocket-Protocol: SPDY\/3\.1\+portforward\.k8s\.io/i);
    assert.equal(agent.seen.at(-1)?.path, '/portForward/default/web');
    tunnel.send(Buffer.from('tunnelled'));
    await waitFor('the tunnelled echo', () => Buffer.concat(tunnel.messages).toString('utf8') === 'tunnelled');
    tunnel.close();
  });

  void it('reports an unreachable agent on the error channel, refuses plain requests', async () => {
    const { frames, closed } = await dial(`${PODS}/lost/exec?command=sh&stdin=true`, [V5]);
    await closed;
    const first = frames.at(0);
    assert.ok(first !== undefined, 'a message on the error channel');
    assert.equal(first[0], 3);
    const status = JSON.parse(first.subarray(1).toString('utf8')) as Obj;
    assert.equal(status.status, 'Failure');
    assert.match(String(status.message), /error trying to reach the node agent of node gone/);
    const plain = await server.client.request('POST', `${PODS}/web/exec?command=sh&stdout=true`);
    assert.deepEqual([plain.status, plain.body.message], [400, 'Upgrade request required']);
    const noStreams = await server.client.request('POST', `${PODS}/web/exec?command=sh`, { headers: { Connection: 'Upgrade', Upgrade: 'websocket' } });
    assert.deepEqual([noStreams.status, noStreams.body.message], [400, 'you must specify at least 1 of stdin, stdout, stderr']);
    const refused = await dial(`${PODS}/web/attach?stdout=true`, [V5]);
    await refused.closed;
    assert.equal(agent.seen.at(-1)?.path, '/attach/default/web/c?stdout=1');
    assert.match(refused.frames[0]?.subarray(1).toString('utf8') ?? '', /"message":"pod does not exist"/, 'the agent\'s refusal, on the error channel');
  });

  void it('works with the real kubectl: logs, and exec over WebSocket with the exit code', async () => {
    assert.equal((await runKubectl(server, ['logs', 'web', '--tail=5'])).stdout, 'line 1\nline 2\n');
    assert.equal((await runKubectl(server, ['exec', 'web', '--', 'echo', 'hello', 'kubectl'])).stdout, 'hello kubectl\n');
    await assert.rejects(runKubectl(server, ['exec', 'web', '--', 'false']), /command terminated with exit code 3/);
    await assert.rejects(runKubectl(server, ['exec', 'lost', '--', 'echo']), /error trying to reach the node agent of node gone/);
  });
});
