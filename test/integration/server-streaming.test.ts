/**
 * The streaming endpoints end to end: exec, attach and port-forward over a real WebSocket
 * (the `ws` client, subprotocols v4.channel.k8s.io and v5.channel.k8s.io, whose close signal
 * ends stdin) and over SPDY/3.1 (raw, and tunnelled in a WebSocket) through the real nodeagent
 * binary to real containers on a private containerd; /run; the refusals (plain requests,
 * unknown pods and containers, missing ports, no credentials); and the idle timeout of
 * streaming connections.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { createTestPki, curl, httpsCall, type TestClientCert, type TestPki } from '../helpers/review-server.js';
import { waitFor } from '../helpers/wait.js';
import { openRawWebSocket } from '../helpers/ws-raw.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { FrameReader, FrameWriter } from '../../src/agent/server/testing.js';

let containerd: ContainerdInstance;
let cri: CriClient;
let pki: TestPki;
let client: TestClientCert;
let manifests: string;
let rootDir: string;
let agent: AgentProcess;
let port: number;

interface Session {
  readonly protocol: string;
  /** Messages received: channel and payload. */
  readonly messages: { channel: number; data: Buffer }[];
  readonly ws: WebSocket;
  readonly closed: Promise<number>;
  send(channel: number, data: string | Buffer): void;
  /** Everything received on `channel` so far. */
  text(channel: number): string;
}

function open(path: string, protocols: readonly string[], credentials = true): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`wss://127.0.0.1:${port}${path}`, [...protocols], {
      rejectUnauthorized: false, ...(credentials ? { cert: client.certPem, key: client.keyPem } : {}),
    });
    const messages: { channel: number; data: Buffer }[] = [];
    const closed = new Promise<number>((r) => { ws.on('close', (code) => { r(code); }); });
    ws.on('message', (data: Buffer) => { messages.push({ channel: data[0] ?? -1, data: data.subarray(1) }); });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => { reject(new Error(`${res.statusCode ?? 0} ${body}`)); });
    });
    ws.on('error', reject);
    ws.on('open', () => {
      resolve({
        protocol: ws.protocol, messages, ws, closed,
        send: (channel, data) => { ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(data)])); },
        text: (channel) => Buffer.concat(messages.filter((m) => m.channel === channel).map((m) => m.data)).toString(),
      });
    });
  });
}

interface SpdySession {
  readonly socket: TLSSocket;
  /** The response head (status line and headers). */
  readonly head: string;
  readonly writer: FrameWriter;
  send(bytes: Buffer): void;
  /** Everything received on a stream so far. */
  text(streamId: number): string;
}

/** A SPDY/3.1 upgrade of `path` on the agent (client certificate), offering `protocols`. */
async function spdy(path: string, protocols: readonly string[]): Promise<SpdySession> {
  const socket = tlsConnect({ host: '127.0.0.1', port, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false });
  await once(socket, 'secureConnect');
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${protocols.map((p) => `X-Stream-Protocol-Version: ${p}\r\n`).join('')}Content-Length: 0\r\n\r\n`);
  const reader = new FrameReader();
  const received = new Map<number, Buffer[]>();
  let buffered = Buffer.alloc(0);
  let head = '';
  socket.on('data', (d: Buffer) => {
    if (head === '') {
      buffered = Buffer.concat([buffered, d]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      head = buffered.subarray(0, end).toString('latin1');
      d = buffered.subarray(end + 4);
    }
    for (const f of reader.push(d)) if (f.type === 'data') received.set(f.streamId, [...(received.get(f.streamId) ?? []), f.data]);
  });
  await waitFor('the SPDY upgrade answer', () => head !== '');
  const writer = new FrameWriter();
  return {
    socket, head, writer,
    send: (bytes) => { socket.write(bytes); },
    text: (id) => Buffer.concat(received.get(id) ?? []).toString('utf8'),
  };
}

async function startAgent(extra: readonly string[] = []): Promise<void> {
  port = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests, rootDir,
    args: [`--hostname-override=${NODE}`, `--port=${port}`, `--client-ca-file=${pki.caFile}`, '--anonymous-auth=false', ...extra],
  });
}

before(async () => {
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  pki = await createTestPki();
  client = await pki.client('streamer');
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
  const image = containerd.images.busybox;
  await writeManifest(manifests, 'shell.yaml', podManifest({ name: 'shell', image, command: 'exec sleep 3600' }));
  await writeManifest(manifests, 'reader.yaml', podManifest({ name: 'reader', image, hostNetwork: true, command: 'while read l; do echo got $l; done; sleep 3600', extraContainer: { stdin: true } }));
  await writeManifest(manifests, 'web.yaml', podManifest({ name: 'web', image, command: 'mkdir -p /www && echo hello from web > /www/index.html && exec httpd -f -p 8080 -h /www' }));
  await startAgent();
  for (const pod of ['shell', 'reader', 'web']) await waitFor(`the ${pod} pod`, () => runningContainer(cri, pod), { timeoutMs: 30_000 });
});

after(async () => {
  await agent.stop();
  cri.close();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
  await rm(rootDir, { recursive: true, force: true });
  await rm(pki.dir, { recursive: true, force: true });
});

void describe('exec, attach and port-forward over WebSocket', () => {
  void it('runs `echo hi`: "hi\\n" on channel 1, then a Success status on channel 3', async () => {
    const s = await open(`/exec/default/shell-${NODE}/main?command=echo&command=hi&stdout=1&stderr=1`, ['v4.channel.k8s.io']);
    assert.equal(s.protocol, 'v4.channel.k8s.io');
    await s.closed;
    assert.equal(s.text(1), 'hi\n');
    assert.deepEqual(JSON.parse(s.text(3)), { metadata: {}, status: 'Success' });
  });

  void it('reports the exit code of a failing command in the status', async () => {
    const s = await open(`/exec/default/shell-${NODE}/main?command=sh&command=-c&command=echo%20bad%20%3E%262%3B%20exit%203&stdout=1&stderr=1`, ['v4.channel.k8s.io']);
    await s.closed;
    assert.equal(s.text(2), 'bad\n');
    const status = JSON.parse(s.text(3)) as { status: string; reason: string; details: { causes: { reason: string; message: string }[] } };
    assert.deepEqual([status.status, status.reason, status.details.causes], ['Failure', 'NonZeroExitCode', [{ reason: 'ExitCode', message: '3' }]]);
  });

  void it('speaks v5.channel.k8s.io: its close signal ends stdin (cat finishes)', async () => {
    const s = await open(`/exec/default/shell-${NODE}/main?command=cat&stdin=1&stdout=1`, ['v5.channel.k8s.io']);
    assert.equal(s.protocol, 'v5.channel.k8s.io');
    s.send(0, 'typed line\n');
    await waitFor('the echo of cat', () => s.text(1) === 'typed line\n');
    s.send(255, Buffer.from([0]));
    await s.closed;
    assert.equal((JSON.parse(s.text(3)) as { status: string }).status, 'Success');
  });

  void it('relays SPDY/3.1: remotecommand v4 with stdin half-closed, as kubectl before 1.30 speaks it', async () => {
    const s = await spdy(`/exec/default/shell-${NODE}/main?command=sh&command=-c&command=cat%3B%20exit%205&stdin=1&stdout=1`, ['v4.channel.k8s.io']);
    assert.match(s.head, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*X-Stream-Protocol-Version: v4\.channel\.k8s\.io/i);
    for (const [id, type] of [[1, 'error'], [3, 'stdin'], [5, 'stdout']] as const) s.send(s.writer.synStream(id, { streamtype: type }));
    s.send(s.writer.data(3, Buffer.from('over spdy\n')));
    s.send(s.writer.data(3, Buffer.alloc(0), true));
    await waitFor('the status on the error stream', () => s.text(1).includes('NonZeroExitCode'), { timeoutMs: 20_000 });
    assert.equal(s.text(5), 'over spdy\n');
    assert.match(s.text(1), /"causes":\[\{"reason":"ExitCode","message":"5"\}\]/);
    s.socket.destroy();
  });

  void it('forwards a port over SPDY tunnelled in a WebSocket (kubectl 1.31+)', async () => {
    // kubectl 1.31+'s subprotocol is no token: the ws client refuses to offer it, a raw one does.
    const ws = await openRawWebSocket({ port, path: `/portForward/default/web-${NODE}`, protocol: 'SPDY/3.1+portforward.k8s.io', cert: client.certPem, key: client.keyPem });
    assert.match(ws.head, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*Sec-WebSocket-Protocol: SPDY\/3\.1\+portforward\.k8s\.io/i);
    const writer = new FrameWriter();
    const reader = new FrameReader();
    ws.send(writer.synStream(1, { streamtype: 'error', port: '8080', requestid: '0' }));
    ws.send(writer.synStream(3, { streamtype: 'data', port: '8080', requestid: '0' }));
    ws.send(writer.data(3, Buffer.from('GET /index.html HTTP/1.0\r\nHost: web\r\n\r\n')));
    let page = '';
    let read = 0;
    await waitFor('the page through the tunnel', () => {
      for (; read < ws.messages.length; read++) {
        for (const f of reader.push(ws.messages[read] ?? Buffer.alloc(0))) if (f.type === 'data' && f.streamId === 3) page += f.data.toString();
      }
      return page.includes('hello from web');
    }, { timeoutMs: 20_000 });
    assert.match(page, /^HTTP\/1\.[01] 200 OK/);
    ws.close();
  });

  void it('attaches to a running container', async () => {
    const s = await open(`/attach/default/reader-${NODE}/main?stdin=1&stdout=1&stderr=1`, ['v4.channel.k8s.io']);
    s.send(0, 'ping\n');
    await waitFor('the echo of the attached container', () => s.text(1).includes('got ping\n'));
    s.ws.close();
    await s.closed;
  });

  void it('forwards a port of the pod (busybox httpd)', async () => {
    const s = await open(`/portForward/default/web-${NODE}?port=8080`, ['v4.channel.k8s.io']);
    // The first message of each channel (data 0, error 1) is the port, little-endian.
    await waitFor('the port headers', () => s.messages.filter((m) => m.channel <= 1).length >= 2);
    assert.deepEqual(s.messages.slice(0, 2).map((m) => [m.channel, m.data.readUInt16LE(0)]), [[0, 8080], [1, 8080]]);
    s.send(0, 'GET /index.html HTTP/1.0\r\nHost: web\r\n\r\n');
    await waitFor('the page through the forwarded port', () => s.text(0).includes('hello from web'));
    assert.match(s.text(0).slice(2), /^HTTP\/1\.[01] 200 OK/);
    s.ws.close();
    await s.closed;
  });

  void it('runs a command to completion on POST /run', async () => {
    const ok = await curl(['-k', '--cert', client.certFile, '--key', client.keyFile, '-X', 'POST', `https://127.0.0.1:${port}/run/default/shell-${NODE}/main?cmd=echo%20from%20run`]);
    assert.deepEqual(ok, { status: 200, body: 'from run\n' });
    const failed = await httpsCall({ port, method: 'POST', path: `/run/default/shell-${NODE}/main?cmd=false`, cert: client.certPem, key: client.keyPem });
    assert.deepEqual([failed.status, failed.body], [500, "command 'false' exited with 1: "]);
  });

  void it('refuses plain requests, unknown pods and containers, missing ports and missing credentials', async () => {
    const base = `https://127.0.0.1:${port}`;
    const auth = ['-k', '--cert', client.certFile, '--key', client.keyFile];
    assert.deepEqual(await curl([...auth, `${base}/exec/default/shell-${NODE}/main?command=ls&stdout=1`]), { status: 400, body: 'Upgrade request required' });
    await assert.rejects(open(`/exec/default/nope/main?command=ls&stdout=1`, ['v4.channel.k8s.io']), /^Error: 404 pod does not exist/);
    await assert.rejects(open(`/exec/default/shell-${NODE}/nope?command=ls&stdout=1`, ['v4.channel.k8s.io']), /^Error: 404 container not found \("nope"\)/);
    await assert.rejects(open(`/exec/default/shell-${NODE}/main?command=ls`, ['v4.channel.k8s.io']), /^Error: 400 you must specify at least 1 of stdin, stdout, stderr/);
    await assert.rejects(open(`/portForward/default/web-${NODE}`, ['v4.channel.k8s.io']), /^Error: 400 query parameter "port" is required/);
    await assert.rejects(open(`/exec/default/shell-${NODE}/main?command=ls&stdout=1`, ['v4.channel.k8s.io'], false), /^Error: 401 Unauthorized/);
  });
});

void describe('streaming connection idle timeout', () => {
  void it('closes a stream after streamingConnectionIdleTimeout without traffic', async () => {
    await agent.stop();
    await startAgent(['--streaming-connection-idle-timeout=1s']);
    const s = await open(`/exec/default/shell-${NODE}/main?command=sleep&command=60&stdout=1`, ['v4.channel.k8s.io']);
    const started = Date.now();
    await s.closed;
    const took = Date.now() - started;
    assert.ok(took < 15_000, `closed after ${took} ms, long before the command's 60 s`);
    assert.equal(s.text(3), '', 'no status: the command did not finish');
  });
});
