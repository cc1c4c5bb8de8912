/**
 * TLS of the agent's secure port, end to end with the real nodeagent binary: the self-signed
 * pair generated into --cert-dir (names, trust through its CA), reused on the next start and
 * generated again once expired; given certificate files; --tls-min-version and
 * --tls-cipher-suites as clients see them (Node's tls and curl); listening on every IP family
 * (0.0.0.0 and ::) and on an IPv6 health address.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { certificateInfo, createCertificate } from '../../src/agent/server/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE } from '../helpers/pods.js';
import { curl, httpsCall } from '../helpers/review-server.js';

let containerd: ContainerdInstance;
let rootDir: string;
let agent: AgentProcess | undefined;
let port: number;

async function start(args: readonly string[], certDir = join(rootDir, 'pki')): Promise<AgentProcess> {
  await agent?.stop();
  port = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir,
    args: [`--hostname-override=${NODE}`, `--port=${port}`, `--cert-dir=${certDir}`, '--node-ip=10.11.12.13', ...args],
  });
  return agent;
}

function handshake(o: ConnectionOptions): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ...o }, () => { resolve(s); });
    s.on('error', reject);
  });
}

before(async () => {
  containerd = await startContainerd();
  rootDir = await mkdtemp(join(tmpdir(), 'nodeagent-root-'));
});

after(async () => {
  await agent?.stop();
  await containerd.stop();
  await rm(rootDir, { recursive: true, force: true });
});

void describe('the serving certificate', () => {
  void it('is generated into --cert-dir with the node names and trusted through its CA, on every IP family', async () => {
    const healthz = await freePort();
    const a = await start([`--healthz-port=${healthz}`, '--healthz-bind-address=::1']);
    assert.match(a.logs(), /Generating a self-signed serving certificate/);
    const bundle = await readFile(join(rootDir, 'pki', 'nodeagent.crt'));
    const info = certificateInfo(bundle);
    for (const name of [NODE, 'localhost', '127.0.0.1', '10.11.12.13']) assert.ok(info.altNames.includes(name), `${name} in ${info.altNames.join(', ')}`);
    assert.match(info.subject, new RegExp(`CN=${NODE}@\\d+`));
    const trusted = await httpsCall({ port, path: '/healthz', ca: bundle });
    assert.deepEqual([trusted.status, trusted.body], [200, 'ok']);
    const v6 = await httpsCall({ port, path: '/healthz', host: '::1', ca: bundle });
    assert.equal(v6.body, 'ok', '0.0.0.0 listens on IPv6 too');
    assert.deepEqual(await curl(['--cacert', join(rootDir, 'pki', 'nodeagent.crt'), `https://localhost:${port}/healthz`]), { status: 200, body: 'ok' });
    assert.deepEqual(await curl([`http://[::1]:${healthz}/healthz`]), { status: 200, body: 'ok' });
    await assert.rejects(curl([`http://127.0.0.1:${healthz}/healthz`]), 'the health server listens on ::1 only');
  });

  void it('is reused on the next start', async () => {
    const before = await readFile(join(rootDir, 'pki', 'nodeagent.crt'));
    const a = await start(['--address=::']);
    assert.doesNotMatch(a.logs(), /Generating a self-signed serving certificate/);
    assert.deepEqual(await readFile(join(rootDir, 'pki', 'nodeagent.crt')), before);
    assert.equal((await httpsCall({ port, path: '/healthz', ca: before })).body, 'ok');
    assert.equal((await httpsCall({ port, path: '/healthz', host: '::1', ca: before })).body, 'ok');
  });

  void it('is generated again once expired', async () => {
    const certDir = join(rootDir, 'expired');
    await mkdir(certDir);
    const old = await createCertificate({ subject: { commonName: 'old' }, serverAuth: true, keyType: 'ecdsa', notBefore: new Date(Date.now() - 2 * 86400_000), notAfter: new Date(Date.now() - 86400_000) });
    await writeFile(join(certDir, 'nodeagent.crt'), old.certPem);
    await writeFile(join(certDir, 'nodeagent.key'), old.keyPem);
    const a = await start([], certDir);
    assert.match(a.logs(), /Generating a self-signed serving certificate .*why="expired at/);
    const renewed = await readFile(join(certDir, 'nodeagent.crt'));
    assert.ok(certificateInfo(renewed).notAfter.getTime() > Date.now());
    assert.equal((await httpsCall({ port, path: '/healthz', ca: renewed })).body, 'ok');
  });

  void it('comes from --tls-cert-file and --tls-private-key-file when given', async () => {
    const dir = join(rootDir, 'given');
    await mkdir(dir);
    const ca = await createCertificate({ subject: { commonName: 'given-ca' }, isCA: true, keyType: 'ecdsa' });
    const serving = await createCertificate({ subject: { commonName: 'given-serving' }, issuer: ca, serverAuth: true, altNames: ['localhost'] });
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    await start([`--tls-cert-file=${join(dir, 'tls.crt')}`, `--tls-private-key-file=${join(dir, 'tls.key')}`]);
    const s = await handshake({ ca: ca.certPem, servername: 'localhost' });
    assert.equal(s.getPeerCertificate().subject.CN, 'given-serving');
    s.destroy();
  });
});

void describe('a serving certificate that cannot be read', () => {
  void it('stops the agent with a message naming the file', async () => {
    await agent?.stop();
    const missing = join(rootDir, 'missing.crt');
    const a = await startAgentProcess({
      endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir, noWait: true,
      args: [`--hostname-override=${NODE}`, `--port=${await freePort()}`, `--tls-cert-file=${missing}`, `--tls-private-key-file=${missing}`],
    });
    assert.equal(await a.exited(), 1);
    assert.match(a.logs(), new RegExp(`cannot read the certificate \\(tlsCertFile\\) ${missing}.*code="SERVER_TLS_INVALID"`));
  });
});

void describe('TLS versions and cipher suites', () => {
  void it('refuses clients below --tls-min-version', async () => {
    await start(['--tls-min-version=VersionTLS13']);
    await assert.rejects(handshake({ rejectUnauthorized: false, maxVersion: 'TLSv1.2' }));
    const s = await handshake({ rejectUnauthorized: false });
    assert.equal(s.getProtocol(), 'TLSv1.3');
    s.destroy();
    await assert.rejects(curl(['-k', '--tls-max', '1.2', `https://127.0.0.1:${port}/healthz`]));
  });

  void it('offers only the configured TLS 1.2 suites, by their IANA names, and keeps TLS 1.3', async () => {
    await start(['--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256']);
    const s = await handshake({ rejectUnauthorized: false, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384' });
    assert.equal(s.getCipher().standardName, 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384');
    s.destroy();
    await assert.rejects(handshake({ rejectUnauthorized: false, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' }));
    const v13 = await handshake({ rejectUnauthorized: false });
    assert.equal(v13.getProtocol(), 'TLSv1.3');
    v13.destroy();
    assert.deepEqual(await curl(['-k', '--tls-max', '1.2', '--ciphers', 'ECDHE-RSA-CHACHA20-POLY1305', `https://127.0.0.1:${port}/healthz`]), { status: 200, body: 'ok' });
    await assert.rejects(curl(['-k', '--tls-max', '1.2', '--ciphers', 'ECDHE-RSA-AES128-SHA', `https://127.0.0.1:${port}/healthz`]));
  });
});
