import assert from 'node:assert/strict';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, TLSSocket, type ConnectionOptions, type PeerCertificate } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { setTimeout as delay } from 'node:timers/promises';
import { flagDefaults } from '../config/index.js';
import { LogRoot } from '../logging/index.js';
import { createCertificate, type IssuedCertificate } from './certs.js';
import { createDynamicServing, type DynamicServing, NO_SERVING_CERTIFICATE, SERVER_NO_SERVING_CERTIFICATE, type ServingCertificateSource, type ServingPair } from './dynamic-tls.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { createAgentMetrics, startServers } from './index.js';
import { tlsServerOptions } from './tls.js';

const lines: string[] = [];
const logs = new LogRoot({
    clock: new FakeClock(),
  format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9,
  sink: { write: (_stream, line) => { lines.push(line); } },
});

/** A source whose pair the test sets (and announces, as the manager's onRotated does). */
class TestSource implements ServingCertificateSource {
  pair: ServingPair | undefined;
  readonly listeners = new Set<() => void>();
  current(): ServingPair | undefined {
    return this.pair;
  }
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }
  rotate(pair: ServingPair | undefined): void {
    this.pair = pair;
    for (const l of this.listeners) l();
  }
}

let ca: IssuedCertificate;
let clientCa: IssuedCertificate;

async function leaf(commonName: string, issuer: IssuedCertificate, serverAuth = true): Promise<ServingPair> {
  return createCertificate({ subject: { commonName }, issuer, keyType: 'ecdsa', serverAuth, clientAuth: !serverAuth, altNames: ['node1', '127.0.0.1'] });
}

function handshake(port: number, o: ConnectionOptions = {}): Promise<{ peer: PeerCertificate; socket: TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: ca.certPem, ...o }, () => {
      resolve({ peer: socket.getPeerCertificate(), socket });
    });
    socket.on('error', reject);
  });
}

async function presented(port: number, o: ConnectionOptions = {}): Promise<string> {
  const { peer, socket } = await handshake(port, o);
  socket.destroy();
  return String(peer.subject.CN);
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

before(async () => {
  ca = await createCertificate({ subject: { commonName: 'cluster-ca' }, isCA: true, keyType: 'ecdsa' });
  clientCa = await createCertificate({ subject: { commonName: 'client-ca' }, isCA: true, keyType: 'ecdsa' });
});

void describe('the requested serving certificate (serverTLSBootstrap)', () => {
  const source = new TestSource();
  const tlsErrors: Error[] = [];
  let server: Server;
  let port: number;
  let detach: () => void;
  let dynamic: DynamicServing;

  before(async () => {
    dynamic = createDynamicServing({
      source,
      settings: tlsServerOptions({ tlsMinVersion: 'VersionTLS12', tlsCipherSuites: [], clientCA: Buffer.from(clientCa.certPem) }),
      logger: logs.logger('test'),
    });
    // Answers with the client certificate's common name.
    server = createServer(dynamic.serverOptions(), (req, res) => {
      // An empty object when the client sent no certificate.
      const peer: Partial<PeerCertificate> = req.socket instanceof TLSSocket ? req.socket.getPeerCertificate() : {};
      res.end(`client=${String(peer.subject?.CN ?? '')}`);
    });
    server.on('tlsClientError', (err) => { tlsErrors.push(err); });
    detach = dynamic.attach(server);
    port = await listening(server);
  });
  after(async () => {
    detach();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  void it('listens before a certificate exists and fails every handshake, with upstream\'s reason for SNI clients', async () => {
    assert.equal(dynamic.context(), undefined);
    await assert.rejects(handshake(port, { servername: 'node1' }));
    assert.ok(tlsErrors.some((e) => e.message === NO_SERVING_CERTIFICATE && (e as { code?: string }).code === SERVER_NO_SERVING_CERTIFICATE), tlsErrors.map((e) => e.message).join('; '));
    await assert.rejects(handshake(port), 'a client without SNI (an IP address) fails too');
    assert.equal(dynamic.missing().message, 'no serving certificate available for the nodeagent');
  });

  void it('presents the current pair to clients with and without SNI, and the rotated one afterwards', async () => {
    source.rotate(await leaf('system:node:first', ca));
    assert.equal(await presented(port, { servername: 'node1' }), 'system:node:first');
    assert.equal(await presented(port), 'system:node:first');
    const first = dynamic.context();
    assert.ok(first !== undefined);
    assert.equal(dynamic.context(), first, 'the context is cached per pair');
    source.rotate(await leaf('system:node:second', ca));
    assert.notEqual(dynamic.context(), first, 'rebuilt after a rotation');
    assert.equal(await presented(port, { servername: 'node1' }), 'system:node:second');
    assert.equal(await presented(port), 'system:node:second');
  });

  void it('follows the pair without an announcement too (an expired pair is no longer current)', async () => {
    source.pair = await leaf('system:node:third', ca);
    assert.equal(await presented(port), 'system:node:third');
    assert.equal(await presented(port, { servername: 'node1' }), 'system:node:third');
    source.pair = undefined;
    await assert.rejects(handshake(port));
    await assert.rejects(handshake(port, { servername: 'node1' }));
    source.rotate(await leaf('system:node:fourth', ca));
  });

  void it('keeps the configured settings: minimum version and client certificates from the client CA', async () => {
    await assert.rejects(handshake(port, { maxVersion: 'TLSv1.1', minVersion: 'TLSv1' }), 'below tlsMinVersion');
    for (const servername of ['node1', undefined]) {
      const client = await leaf(`client-${servername ?? 'ip'}`, clientCa, false);
      const { socket } = await handshake(port, { cert: client.certPem, key: client.keyPem, ...(servername === undefined ? {} : { servername }) });
      const answer = await new Promise<string>((resolve, reject) => {
        let data = '';
        socket.on('data', (d: Buffer) => { data += d.toString(); });
        socket.on('end', () => { resolve(data); });
        socket.on('error', reject);
        socket.end('GET / HTTP/1.1\r\nHost: node1\r\nConnection: close\r\n\r\n');
      });
      assert.match(answer, new RegExp(`client=client-${servername ?? 'ip'}$`), 'the server saw the client certificate');
    }
  });
});

void describe('startServers with serverTLSBootstrap', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'dynamic-tls-test-')); });
  after(() => rm(dir, { recursive: true, force: true }));

  const start = async (source: ServingCertificateSource | undefined): Promise<Awaited<ReturnType<typeof startServers>>> => {
    const config = flagDefaults();
    config.address = '127.0.0.1';
    config.port = 0;
    config.readOnlyPort = 0;
    config.healthzPort = 0;
    config.serverTLSBootstrap = true;
    return startServers({
      config, certDir: join(dir, 'pki'), rootDir: dir, nodeName: 'node1', nodeIPs: ['127.0.0.1'],
      pods: { desiredPods: () => [], podStatus: () => undefined },
      cri: new FakeRuntime(),
      healthChecks: [],
      logs: { setVerbosity: () => undefined },
      gates: { enabled: () => true },
      metrics: createAgentMetrics({ nodeName: 'node1', runtimeCounts: () => Promise.resolve({ pods: 0, containers: {} }) }),
      logger: logs.logger('test'),
      clock: new FakeClock(),
      ...(source === undefined ? {} : { servingCertificates: source }),
    });
  };

  void it('makes no self-signed pair, listens without a certificate and serves the requested one once issued', async () => {
    const source = new TestSource();
    const servers = await start(source);
    try {
      const port = servers.secure?.port ?? 0;
      assert.ok(port > 0);
      assert.equal(servers.secure?.certificate, undefined);
      await assert.rejects(access(join(dir, 'pki', 'nodeagent.crt')), 'no self-signed certificate');
      await assert.rejects(handshake(port));
      source.rotate(await leaf('system:node:node1', ca));
      assert.equal(await presented(port), 'system:node:node1');
      assert.equal(await presented(port, { servername: 'node1' }), 'system:node:node1');
    } finally {
      await servers.close();
    }
    assert.equal(source.listeners.size, 0, 'close() unsubscribes');
  });

  void it('without an API server (no source) warns and fails every handshake, as upstream', async () => {
    const servers = await start(undefined);
    try {
      await assert.rejects(handshake(servers.secure?.port ?? 0));
      assert.ok(lines.some((l) => l.includes('serverTLSBootstrap is on but no serving certificate can be requested')));
      // The server logs the failed handshake once it saw it (poll with a deadline).
      const deadline = Date.now() + 5000;
      while (!lines.some((l) => l.includes(NO_SERVING_CERTIFICATE)) && Date.now() < deadline) await delay(20);
      assert.ok(lines.some((l) => l.includes(NO_SERVING_CERTIFICATE)), 'the failed handshake is logged with upstream\'s reason');
    } finally {
      await servers.close();
    }
  });
});
