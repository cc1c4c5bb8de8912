import assert from 'node:assert/strict';
import { webcrypto, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureCa, x509Library, type CertificateAuthority } from '../../server/index.js';
import { issueCertificate, parseCsr, signerProblem, SIGNER_APISERVER_CLIENT, SIGNER_NODEAGENT_CLIENT, SIGNER_NODEAGENT_SERVING, type X509Lib } from './index.js';

let lib: X509Lib;
let ca: CertificateAuthority;
let dir: string;

async function csrPem(subject: string, names: { type: 'dns' | 'ip' | 'email'; value: string }[] = []): Promise<string> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const request = await lib.Pkcs10CertificateRequestGenerator.create({
    name: subject, keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: names.length === 0 ? [] : [new lib.SubjectAlternativeNameExtension(names)],
  });
  return request.toString('pem');
}

before(async () => {
  lib = await x509Library();
  dir = mkdtempSync(join(tmpdir(), 'orch-csr-'));
  ca = await ensureCa(dir);
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

void describe('certificate requests', () => {
  void it('parses a request, its subject and SANs, and checks its signature', async () => {
    const parsed = parseCsr(lib, await csrPem('CN=system:node:n1, O=system:nodes', [{ type: 'dns', value: 'n1' }, { type: 'ip', value: '10.0.0.1' }]));
    assert.equal(parsed.commonName, 'system:node:n1');
    assert.deepEqual(parsed.organizations, ['system:nodes']);
    assert.deepEqual([parsed.dnsNames, parsed.ipAddresses], [['n1'], ['10.0.0.1']]);
    assert.throws(() => parseCsr(lib, 'nothing'), /PEM block type must be CERTIFICATE REQUEST/);
    const pem = await csrPem('CN=x');
    const body = pem.split('\n').slice(1, -2).join('');
    const der = Buffer.from(body, 'base64');
    der[der.length - 5] = (der[der.length - 5] ?? 0) ^ 0xff;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    assert.throws(() => parseCsr(lib, tampered), /does not verify|does not parse/);
  });

  void it('applies the rules of each built-in signer', async () => {
    const node = parseCsr(lib, await csrPem('CN=system:node:n1, O=system:nodes'));
    assert.equal(signerProblem(SIGNER_NODEAGENT_CLIENT, node, ['digital signature', 'client auth']), undefined);
    assert.equal(signerProblem(SIGNER_NODEAGENT_CLIENT, node, ['key encipherment', 'digital signature', 'client auth']), undefined);
    assert.match(signerProblem(SIGNER_NODEAGENT_CLIENT, node, ['client auth']) ?? '', /usages must be/);
    assert.match(signerProblem(SIGNER_NODEAGENT_SERVING, node, ['digital signature', 'server auth']) ?? '', /at least one DNS or IP/);
    const other = parseCsr(lib, await csrPem('CN=n1, O=system:nodes'));
    assert.match(signerProblem(SIGNER_NODEAGENT_CLIENT, other, ['digital signature', 'client auth']) ?? '', /common name must begin with "system:node:"/);
    const withSan = parseCsr(lib, await csrPem('CN=system:node:n1, O=system:nodes', [{ type: 'email', value: 'a@b' }]));
    assert.match(signerProblem(SIGNER_NODEAGENT_CLIENT, withSan, ['digital signature', 'client auth']) ?? '', /subject alternative names are not allowed/);
    assert.equal(signerProblem(SIGNER_APISERVER_CLIENT, other, ['client auth']), undefined);
    assert.match(signerProblem(SIGNER_APISERVER_CLIENT, other, ['client auth', 'server auth']) ?? '', /usages must be among/);
  });

  void it('issues certificates with the requested usages and duration, never past the CA', async () => {
    const parsed = parseCsr(lib, await csrPem('CN=system:node:n1, O=system:nodes', [{ type: 'ip', value: '10.0.0.1' }]));
    const now = new Date();
    const pem = await issueCertificate(lib, ca, parsed, { signer: SIGNER_NODEAGENT_SERVING, usages: ['key encipherment', 'digital signature', 'server auth'], expirationSeconds: 600, now });
    const cert = new X509Certificate(pem);
    assert.ok(cert.verify(new X509Certificate(ca.certPem).publicKey));
    assert.equal(cert.subjectAltName, 'IP Address:10.0.0.1');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(Date.parse(cert.validTo), Math.floor(now.getTime() / 1000) * 1000 + 600_000);
    const usage = new lib.X509Certificate(pem).getExtension(lib.KeyUsagesExtension);
    assert.equal(usage?.usages, lib.KeyUsageFlags.digitalSignature | lib.KeyUsageFlags.keyEncipherment);
    assert.equal(usage.critical, true);
    const long = await issueCertificate(lib, ca, parsed, { signer: SIGNER_NODEAGENT_CLIENT, usages: ['digital signature', 'client auth', 'decipher only'], expirationSeconds: 3650 * 24 * 3600 * 2, now });
    const longCert = new X509Certificate(long);
    assert.equal(longCert.validTo, new X509Certificate(ca.certPem).validTo, 'capped at the CA\'s end');
    assert.equal(longCert.subjectAltName, undefined, 'the nodeagent client signer drops SANs');
    assert.equal(new lib.X509Certificate(long).getExtension(lib.KeyUsagesExtension)?.usages, lib.KeyUsageFlags.digitalSignature | lib.KeyUsageFlags.decipherOnly);
  });
});
