/**
 * certificates.orch.io/v1 CertificateSigningRequests on a real orch-apiserver: create-time
 * validation, the approval and status subresources, and the signer inside the server: an
 * approved node agent client request is signed by the server's CA with the right subject,
 * usages and duration, and the certificate then authenticates to the server; a serving request
 * keeps its SANs; denied requests are never signed; requests breaking their signer's rules get
 * the Failed condition.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { makeCsr, startApiServer, v1Csr, type ApiServer, type Response } from '../helpers/apiserver.js';
import { waitFor } from '../helpers/wait.js';

type Obj = Record<string, unknown>;
const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests';
const CLIENT = 'orch.io/kube-apiserver-client-nodeagent';
const causes = (r: Response): string[] => ((r.body.details as { causes?: { field: string }[] } | undefined)?.causes ?? []).map((c) => c.field).sort();
const conditions = (csr: Obj): Obj[] => ((csr.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? [];

void describe('certificate signing requests and the signer', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ storage: 'sqlite' });
  });
  after(async () => {
    await server.stop();
  });
  const api = (method: string, path: string, body?: unknown, contentType?: string): Promise<Response> =>
    server.client.request(method, path, { ...(body === undefined ? {} : { body }), ...(contentType === undefined ? {} : { contentType }) });

  /** Approves (or denies) as kubectl certificate approve does: the object with a condition appended, PUT to /approval. */
  const decide = async (name: string, type: 'Approved' | 'Denied'): Promise<Response> => {
    const csr = (await api('GET', `${CSRS}/${name}`)).body;
    const condition = { type, status: 'True', reason: `Kubectl${type === 'Approved' ? 'Approve' : 'Deny'}`, message: `This CSR was ${type.toLowerCase()} by the test.` };
    return api('PUT', `${CSRS}/${name}/approval`, { ...csr, status: { conditions: [...conditions(csr), condition] } });
  };
  const issued = (name: string): Promise<Obj> =>
    waitFor(`the certificate of ${name}`, async () => {
      const csr = (await api('GET', `${CSRS}/${name}`)).body;
      return typeof (csr.status as Obj | undefined)?.certificate === 'string' ? csr : undefined;
    });

  void it('validates requests on create', async () => {
    const { requestPem } = await makeCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    const tampered = requestPem.replace(/\n(.{10})/, (_m, s: string) => `\n${s.split('').reverse().join('')}`);
    const cases: [Obj, string[]][] = [
      [v1Csr('bad-pem', 'not a request', CLIENT, ['client auth']), ['spec.request']],
      [v1Csr('bad-sig', tampered, CLIENT, ['client auth']), ['spec.request']],
      [v1Csr('no-signer', requestPem, '', ['client auth']), ['spec.signerName']],
      [v1Csr('bad-signer', requestPem, 'nodomain', ['client auth']), ['spec.signerName']],
      [v1Csr('legacy', requestPem, 'orch.io/legacy-unknown', ['client auth']), ['spec.signerName']],
      [v1Csr('usages', requestPem, CLIENT, ['client auth', 'client auth', 'teleport']), ['spec.usages[1]', 'spec.usages[2]']],
      [v1Csr('no-usages', requestPem, CLIENT, []), ['spec.usages']],
      [v1Csr('short', requestPem, CLIENT, ['client auth'], { expirationSeconds: 300 }), ['spec.expirationSeconds']],
    ];
    for (const [body, fields] of cases) {
      const res = await api('POST', CSRS, body);
      assert.equal(res.status, 422, `${String((body.metadata as Obj).name)}: ${res.text}`);
      assert.deepEqual(causes(res), fields, String((body.metadata as Obj).name));
    }
    const masters = await makeCsr({ commonName: 'mallory', organizations: ['system:masters'] });
    const restricted = await api('POST', CSRS, v1Csr('masters', masters.requestPem, 'orch.io/kube-apiserver-client', ['client auth']));
    assert.equal(restricted.status, 403);
    assert.match(String(restricted.body.message), /use of orch\.io\/kube-apiserver-client signer with system:masters group is not allowed/);
  });

  void it('signs an approved node agent client request with the CA: subject, usages, duration; the certificate authenticates', async () => {
    const { requestPem, keyPem } = await makeCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    const created = await api('POST', CSRS, v1Csr('node-n1', requestPem, CLIENT, ['digital signature', 'client auth'], { expirationSeconds: 3600 }));
    assert.equal(created.status, 201, created.text);
    assert.equal((created.body.spec as Obj).username, 'admin');
    const spec = await api('PUT', `${CSRS}/node-n1`, { ...created.body, spec: { ...(created.body.spec as Obj), signerName: 'example.com/other' } });
    assert.equal((spec.body.spec as Obj).signerName, CLIENT, 'the spec never changes');
    const early = await api('PUT', `${CSRS}/node-n1/status`, { ...spec.body, status: { certificate: Buffer.from(readFileSync(server.caFile)).toString('base64') } });
    assert.equal(early.status, 422, 'no certificate before approval');
    const approved = await decide('node-n1', 'Approved');
    assert.equal(approved.status, 200, approved.text);
    const condition = conditions(approved.body)[0] as Obj;
    assert.equal(condition.reason, 'KubectlApprove');
    assert.match(String(condition.lastUpdateTime), /Z$/);
    const csr = await issued('node-n1');
    const pem = Buffer.from(String((csr.status as Obj).certificate), 'base64').toString('utf8');
    const cert = new X509Certificate(pem);
    const ca = new X509Certificate(readFileSync(server.caFile));
    assert.ok(cert.verify(ca.publicKey), 'signed by the server\'s CA');
    assert.equal(cert.checkIssued(ca), true);
    assert.deepEqual(cert.subject.split('\n').sort(), ['CN=system:node:n1', 'O=system:nodes']);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'extended key usage: client auth only');
    assert.equal(cert.ca, false);
    const lifetime = Date.parse(cert.validTo) - Date.now();
    assert.ok(lifetime > 3500_000 && lifetime <= 3600_000, `valid for about an hour (${lifetime} ms)`);
    assert.ok(Date.parse(cert.validFrom) <= Date.now() - 240_000, 'backdated for clock skew');
    const table = (await server.client.request('GET', CSRS, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).body;
    assert.deepEqual((table.columnDefinitions as Obj[]).map((c) => c.name), ['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition']);
    const row = (table.rows as { cells: unknown[] }[]).find((r) => r.cells[0] === 'node-n1');
    assert.deepEqual(row?.cells.slice(2), [CLIENT, 'admin', '60m', 'Approved,Issued']);
    // The issued certificate is a client certificate of this server: a CSR made with it records who it is.
    const next = await makeCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    const asNode = await new Promise<Obj>((resolve, reject) => {
      const body = JSON.stringify(v1Csr('node-n1-renewal', next.requestPem, CLIENT, ['digital signature', 'client auth']));
      const agent = new Agent({ ca: readFileSync(server.caFile, 'utf8'), cert: pem, key: keyPem });
      const req = request(`${server.url}${CSRS}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => {
          agent.destroy();
          resolve(JSON.parse(text) as Obj);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal((asNode.spec as Obj | undefined)?.username, 'system:node:n1', JSON.stringify(asNode));
    assert.deepEqual((asNode.spec as Obj).groups, ['system:nodes', 'system:authenticated']);
    const changed = await api('PATCH', `${CSRS}/node-n1/status`, { status: { certificate: Buffer.from(readFileSync(server.caFile)).toString('base64') } }, 'application/merge-patch+json');
    assert.equal(changed.status, 422, 'the certificate is set once');
    const view = await api('GET', `/apis/certificates.k8s.io/v1/certificatesigningrequests/node-n1`);
    assert.equal(view.body.apiVersion, 'certificates.k8s.io/v1', 'the compatibility view shows the same object');
  });

  void it('keeps the SANs of a serving request and honours usages', async () => {
    const { requestPem } = await makeCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1.example'], ipAddresses: ['10.0.0.7'] });
    assert.equal((await api('POST', CSRS, v1Csr('serving-n1', requestPem, 'orch.io/nodeagent-serving', ['key encipherment', 'digital signature', 'server auth']))).status, 201);
    assert.equal((await decide('serving-n1', 'Approved')).status, 200);
    const cert = new X509Certificate(Buffer.from(String(((await issued('serving-n1')).status as Obj).certificate), 'base64'));
    assert.equal(cert.subjectAltName, 'DNS:n1.example, IP Address:10.0.0.7');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.ok(Date.parse(cert.validTo) - Date.now() > 364 * 24 * 3600_000, 'one year by default');
  });

  void it('never signs denied requests, and fails requests that break their signer\'s rules', async () => {
    const { requestPem } = await makeCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    assert.equal((await api('POST', CSRS, v1Csr('denied', requestPem, CLIENT, ['digital signature', 'client auth']))).status, 201);
    assert.equal((await decide('denied', 'Denied')).status, 200);
    const both = await decide('denied', 'Approved');
    assert.equal(both.status, 422);
    assert.match(String(both.body.message), /Approved and Denied conditions are mutually exclusive/);
    const removed = await api('PUT', `${CSRS}/denied/approval`, { ...(await api('GET', `${CSRS}/denied`)).body, status: {} });
    assert.equal(removed.status, 422, 'an approval decision is never removed');
    const wrong = await makeCsr({ commonName: 'n2', organizations: ['nodes'] });
    assert.equal((await api('POST', CSRS, v1Csr('wrong-subject', wrong.requestPem, CLIENT, ['digital signature', 'client auth']))).status, 201);
    assert.equal((await decide('wrong-subject', 'Approved')).status, 200);
    const failed = await waitFor('the Failed condition', async () => {
      const csr = (await api('GET', `${CSRS}/wrong-subject`)).body;
      return conditions(csr).find((c) => c.type === 'Failed');
    });
    assert.equal(failed.reason, 'SignerValidationFailure');
    assert.match(String(failed.message), /organization must be exactly \["system:nodes"\]/);
    const denied = (await api('GET', `${CSRS}/denied`)).body;
    assert.equal((denied.status as Obj).certificate, undefined);
    const other = await api('POST', CSRS, v1Csr('other-signer', requestPem, 'example.com/signer', ['client auth']));
    assert.equal(other.status, 201);
    assert.equal((await decide('other-signer', 'Approved')).status, 200);
    const list = (await api('GET', `${CSRS}?fieldSelector=spec.signerName%3Dexample.com%2Fsigner`)).body;
    assert.deepEqual((list.items as Obj[]).map((c) => (c.metadata as Obj).name), ['other-signer']);
    assert.equal(((list.items as Obj[])[0]?.status as Obj).certificate, undefined, 'other signers are left alone');
  });
});
