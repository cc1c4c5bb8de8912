/**
 * The requested serving certificate (--rotate-server-certificates, serverTLSBootstrap) end to
 * end: a real orch-apiserver (SQLite), a real containerd and the real nodeagent binary. The
 * agent starts its secure server without a certificate (no self-signed pair), handshakes fail
 * until its CertificateSigningRequest (signer orch.io/nodeagent-serving) is approved as
 * `kubectl certificate approve` does; then the secure port presents the certificate the API
 * server's CA issued, for system:node:testnode with the node's IP and hostname. A restarted
 * agent presents the stored certificate at once, without a new request.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { access, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type DetailedPeerCertificate } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { startApiServer, type ApiServer, type Response } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';
import { removeTempDir } from '../helpers/tempdir.js';

type Obj = Record<string, unknown>;
const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests';
const SERVING_SIGNER = 'orch.io/nodeagent-serving';
const NODE = 'testnode';

let containerd: ContainerdInstance;
let server: ApiServer;
let agent: AgentProcess | undefined;
let dir: string;
let port: number;
let ca: string;

interface Csr {
  metadata: { name: string };
  spec: { signerName: string; username?: string; usages?: string[] };
  status?: { certificate?: string; conditions?: Obj[] };
}

async function servingCsrs(): Promise<Csr[]> {
  const res = await server.client.request('GET', CSRS);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body as unknown as { items: Csr[] }).items.filter((c) => c.spec.signerName === SERVING_SIGNER);
}

/** Approves as kubectl certificate approve does: the object with an Approved condition, PUT to /approval. */
async function approve(name: string): Promise<Response> {
  const csr = (await server.client.request('GET', `${CSRS}/${name}`)).body;
  const conditions = ((csr.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? [];
  const approved = { type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by the test.' };
  return server.client.request('PUT', `${CSRS}/${name}/approval`, { body: { ...csr, status: { ...(csr.status as Obj | undefined), conditions: [...conditions, approved] } } });
}

/** A TLS handshake with the agent's secure port; resolves with the presented certificate. */
function handshake(o: ConnectionOptions = {}): Promise<DetailedPeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, ...o }, () => {
      const peer = socket.getPeerCertificate(true);
      socket.destroy();
      resolve(peer);
    });
    socket.setTimeout(10_000, () => { socket.destroy(new Error('handshake timed out')); });
    socket.on('error', reject);
  });
}

async function startAgent(): Promise<AgentProcess> {
  return startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir: join(dir, 'root'),
    args: [
      `--orchconfig=${server.adminKubeconfig}`, '--rotate-server-certificates', '--node-ip=127.0.0.1',
      `--hostname-override=${NODE}`, `--port=${port}`,
    ],
  });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-serving-cert-'));
  containerd = await startContainerd();
  server = await startApiServer({ storage: 'sqlite' });
  ca = await readFile(server.caFile, 'utf8');
  port = await freePort();
  agent = await startAgent();
});

after(async () => {
  await agent?.stop();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

void describe('the serving certificate requested from the API server', () => {
  let csr: Csr;
  let serial = '';

  void it('listens without a certificate and fails handshakes until the serving CSR is approved', async () => {
    csr = await waitFor('the serving CSR', async () => (await servingCsrs())[0], { timeoutMs: 30_000 });
    assert.deepEqual([...(csr.spec.usages ?? [])].sort(), ['digital signature', 'server auth']);
    await assert.rejects(access(join(dir, 'root', 'pki', 'nodeagent.crt')), 'no self-signed certificate was made');
    await assert.rejects(handshake(), 'a client without SNI');
    await assert.rejects(handshake({ servername: NODE }), 'a client with SNI');
    await agent?.waitForLog('no serving certificate available for the nodeagent');
  });

  void it('presents the certificate the API server\'s CA issued once the request is approved', async () => {
    const res = await approve(csr.metadata.name);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // Verified against the API server's CA (rejectUnauthorized) and for the IP 127.0.0.1.
    const peer = await waitFor('the issued serving certificate on the secure port', () => handshake(), { timeoutMs: 60_000, intervalMs: 250 });
    assert.equal(peer.subject.CN, `system:node:${NODE}`);
    assert.equal(peer.subject.O, 'system:nodes');
    const names = (peer.subjectaltname ?? '').split(', ');
    assert.ok(names.includes('IP Address:127.0.0.1'), peer.subjectaltname);
    assert.ok(names.includes(`DNS:${NODE}`), peer.subjectaltname);
    const cert = new X509Certificate(peer.raw);
    assert.ok(cert.verify(new X509Certificate(ca).publicKey), 'signed by the API server\'s CA');
    assert.ok(cert.checkIssued(new X509Certificate(ca)));
    serial = cert.serialNumber;
    const sni = await handshake({ servername: NODE });
    assert.equal(new X509Certificate(sni.raw).serialNumber, serial, 'the same certificate for a client with SNI');
    const issued = (await server.client.request('GET', `${CSRS}/${csr.metadata.name}`)).body as unknown as Csr;
    assert.equal(new X509Certificate(Buffer.from(issued.status?.certificate ?? '', 'base64')).serialNumber, serial, 'the CSR\'s certificate');
    await access(join(dir, 'root', 'pki', 'nodeagent-server-current.pem'));
  });

  void it('presents the stored certificate at once after a restart, without a new request', async () => {
    assert.ok(serial !== '', 'the previous test issued a certificate');
    await agent?.stop();
    agent = await startAgent();
    const peer = await handshake();
    assert.equal(new X509Certificate(peer.raw).serialNumber, serial);
    assert.equal((await servingCsrs()).length, 1);
  });
});
