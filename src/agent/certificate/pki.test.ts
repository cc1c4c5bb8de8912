import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { digestedCsrName, nodeTemplate } from './bootstrap.js';
import { servingTemplate } from './managers.js';
import { certificateFacts, createCsrPem, generateKeyPem, keyMatchesCertificate, satisfiesTemplate, splitPem, usagesFor, x509 } from './pki.js';
import { backoffDelay, rotationDeadline } from './schedule.js';
import { createTestCa } from './fakes.js';

void describe('keys, requests and certificates', () => {
  void it('makes an ECDSA P-256 key and a request with the node subject and names', async () => {
    const keyPem = generateKeyPem();
    assert.match(keyPem, /^-----BEGIN EC PRIVATE KEY-----/);
    assert.deepEqual(usagesFor(keyPem, 'client auth'), ['digital signature', 'client auth']);
    const csrPem = await createCsrPem(keyPem, nodeTemplate('n1', ['n1.example'], ['10.0.0.7', 'fd00::1']));
    const lib = await x509();
    const csr = new lib.Pkcs10CertificateRequest(csrPem);
    assert.equal(await csr.verify(), true);
    assert.deepEqual(csr.subjectName.getField('CN'), ['system:node:n1']);
    assert.deepEqual(csr.subjectName.getField('O'), ['system:nodes']);
    const san = csr.getExtension('2.5.29.17');
    assert.ok(san instanceof lib.SubjectAlternativeNameExtension);
    assert.deepEqual(san.names.items.map((n) => `${n.type}:${n.value}`), ['dns:n1.example', 'ip:10.0.0.7', 'ip:fd00::1']);
    const ca = await createTestCa();
    const certPem = await ca.sign(csrPem);
    assert.equal(keyMatchesCertificate(certPem, keyPem), true);
    assert.equal(keyMatchesCertificate(certPem, generateKeyPem()), false);
    const facts = certificateFacts(certPem);
    assert.equal(facts.commonName, 'system:node:n1');
    assert.deepEqual([facts.dnsNames, facts.ipAddresses], [['n1.example'], ['10.0.0.7', 'fd00::1']]);
    assert.equal(satisfiesTemplate(facts, nodeTemplate('n1', ['n1.example'], ['fd00:0:0::1', '10.0.0.7'])), true);
    assert.equal(satisfiesTemplate(facts, nodeTemplate('n1', ['n1.example'], ['10.0.0.8'])), false);
    assert.equal(satisfiesTemplate(facts, nodeTemplate('n2', ['n1.example'], ['10.0.0.7', 'fd00::1'])), false);
    const split = splitPem(certPem + keyPem);
    assert.equal(split.keyPem, keyPem);
    assert.equal(new X509Certificate(split.certPem).subject, new X509Certificate(certPem).subject);
  });

  void it('names bootstrap requests after the key, subject and usages, as DNS subdomains', () => {
    const key = generateKeyPem();
    const a = digestedCsrName(key, nodeTemplate('n1'), ['digital signature', 'client auth']);
    assert.match(a, /^node-csr-[0-9a-f]{64}$/);
    assert.equal(digestedCsrName(key, nodeTemplate('n1'), ['digital signature', 'client auth']), a);
    assert.notEqual(digestedCsrName(key, nodeTemplate('n2'), ['digital signature', 'client auth']), a);
    assert.notEqual(digestedCsrName(generateKeyPem(), nodeTemplate('n1'), ['digital signature', 'client auth']), a);
  });

  void it('builds the serving template from node addresses, only with an IP', () => {
    assert.equal(servingTemplate('n1', [{ type: 'Hostname', address: 'n1' }]), undefined);
    assert.deepEqual(servingTemplate('n1', [
      { type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: '10.0.0.7' }, { type: 'ExternalDNS', address: 'n1.example' },
      { type: 'InternalIP', address: '10.0.0.7' }, { type: 'ExternalIP', address: 'not-an-ip' },
    ]), nodeTemplate('n1', ['n1', 'n1.example'], ['10.0.0.7']));
  });

  void it('renews at 70 to 90 % of the validity, and backs off 2 s doubling to 32 s', () => {
    const from = new Date('2030-01-01T00:00:00Z');
    const to = new Date('2030-01-11T00:00:00Z');
    const day = 24 * 3600_000;
    assert.equal(rotationDeadline(from, to, 0).getTime(), from.getTime() + 7 * day);
    assert.equal(rotationDeadline(from, to, 0.5).getTime(), from.getTime() + 8 * day);
    assert.ok(rotationDeadline(from, to, 0.999999).getTime() < from.getTime() + 9 * day);
    assert.deepEqual([1, 2, 3, 4, 5, 6, 50].map((n) => backoffDelay(n, 0)), [2000, 4000, 8000, 16000, 32000, 32000, 32000]);
    assert.equal(backoffDelay(1, 0.5), 2100);
  });
});
