/**
 * TLS bootstrap against a real orch-apiserver: a bootstrap orchconfig with a bootstrap token
 * (user system:bootstrap:<id>, group system:bootstrappers) asks for a node client certificate,
 * the test approves the request as kubectl certificate approve does, and the written
 * --orchconfig then authenticates as system:node:<node>. A valid --orchconfig asks nothing; a
 * denied request fails with CERT_CSR_DENIED naming it.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import { stringify } from 'yaml';
import { isOrchError } from '../../src/api/errors.js';
import { bootstrapClientCertificate, CERT_CSR_DENIED, CSR_PATH, type BootstrapOptions } from '../../src/agent/certificate/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { loadOrchconfig, type OrchConnection } from '../../src/agent/orchclient/index.js';
import { createRestClient } from '../../src/agent/orchclient/index.js';
import { startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const TOKEN = 'abcdef.0123456789abcdef';
const logger = new LogRoot({ clock: realClock, format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('bootstrap-test');
const rest = (connection: OrchConnection) => createRestClient({ clock: realClock, connection, qps: 0, burst: 0, contentType: 'application/json' });

void describe('TLS bootstrap of the node agent', () => {
  let server: ApiServer;
  let dir: string;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite', tokens: [{ token: TOKEN, user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] }] });
    dir = mkdtempSync(join(tmpdir(), 'nodeagent-bootstrap-'));
    writeFileSync(join(dir, 'bootstrap.orchconfig'), stringify({
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: server.url, 'certificate-authority-data': readFileSync(server.caFile).toString('base64') } }],
      users: [{ name: 'bootstrap', user: { token: TOKEN } }],
      contexts: [{ name: 'b', context: { cluster: 'c', user: 'bootstrap' } }],
      'current-context': 'b',
    }));
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const options = (node: string): BootstrapOptions => ({
    orchconfigPath: join(dir, node, 'nodeagent.orchconfig'), bootstrapOrchconfigPath: join(dir, 'bootstrap.orchconfig'),
    certDir: join(dir, node, 'pki'), nodeName: node, logger, createClient: rest, waitTimeoutMs: 30_000, pollIntervalMs: 200, clock: realClock,
  });
  /** The requests made with the bootstrap token. */
  const bootstrapCsrs = async (): Promise<Obj[]> => {
    const items = (await server.client.request('GET', CSR_PATH)).body.items as Obj[] | undefined;
    return (items ?? []).filter((c) => (c.spec as Obj).username === 'system:bootstrap:abcdef');
  };
  /** kubectl certificate approve/deny: the object with a condition appended, PUT to /approval. */
  const decide = async (name: string, type: 'Approved' | 'Denied'): Promise<void> => {
    const csr = (await server.client.request('GET', `${CSR_PATH}/${name}`)).body;
    const conditions = ((csr.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? [];
    const res = await server.client.request('PUT', `${CSR_PATH}/${name}/approval`, {
      body: { ...csr, status: { conditions: [...conditions, { type, status: 'True', reason: 'TestDecision', message: `${type} by the test` }] } },
    });
    assert.equal(res.status, 200, res.text);
  };

  void it('obtains a client certificate once approved; the written orchconfig authenticates as the node', async () => {
    const o = options('n1');
    const running = bootstrapClientCertificate(o);
    const csr = await waitFor('the bootstrap CSR', async () => (await bootstrapCsrs())[0], { timeoutMs: 20_000 });
    const name = String((csr.metadata as Obj).name);
    assert.match(name, /^node-csr-[0-9a-f]{64}$/);
    assert.equal((csr.spec as Obj).signerName, 'orch.io/kube-apiserver-client-nodeagent');
    assert.deepEqual((csr.spec as Obj).usages, ['digital signature', 'client auth']);
    assert.deepEqual((csr.spec as Obj).groups, ['system:bootstrappers', 'system:authenticated']);
    await decide(name, 'Approved');
    await running;
    const connection = await loadOrchconfig(o.orchconfigPath);
    assert.equal(connection.token, undefined);
    const cert = new X509Certificate(connection.clientCert ?? '');
    assert.deepEqual(cert.subject.split('\n').sort(), ['CN=system:node:n1', 'O=system:nodes']);
    assert.ok(cert.checkIssued(new X509Certificate(readFileSync(server.caFile))));
    // Who the server says we are: a request made with the new credentials records its user.
    const client = rest(connection);
    try {
      const probe = await client.create<Obj>(CSR_PATH, {
        apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'whoami-n1' },
        spec: { ...(csr.spec as Obj), username: undefined, groups: undefined, uid: undefined },
      });
      assert.equal((probe.spec as Obj).username, 'system:node:n1');
      assert.deepEqual((probe.spec as Obj).groups, ['system:nodes', 'system:authenticated']);
      await client.get(`/api/v1/nodes`);
    } finally {
      client.close();
    }
    // Valid now: a second bootstrap asks nothing.
    const before = (await bootstrapCsrs()).length;
    await bootstrapClientCertificate(o);
    assert.equal((await bootstrapCsrs()).length, before);
  });

  void it('fails with CERT_CSR_DENIED naming the request when it is denied', async () => {
    const o = options('n2');
    const known = new Set((await bootstrapCsrs()).map((c) => String((c.metadata as Obj).name)));
    const running = bootstrapClientCertificate(o);
    const outcome = assert.rejects(running, (err) => isOrchError(err) && err.code === CERT_CSR_DENIED && err.subject !== undefined && err.message.includes(err.subject));
    const csr = await waitFor('the second bootstrap CSR', async () => (await bootstrapCsrs()).find((c) => !known.has(String((c.metadata as Obj).name))), { timeoutMs: 20_000 });
    await decide(String((csr.metadata as Obj).name), 'Denied');
    await outcome;
  });
});
