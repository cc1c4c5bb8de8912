import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { nodeTemplate } from './bootstrap.js';
import { CERT_CANCELLED, CERT_CSR_CONFLICT, CERT_CSR_DENIED, CERT_CSR_FAILED, CERT_CSR_TIMEOUT } from './codes.js';
import { issuedCertificate, submitCsr, waitForCertificate } from './csr.js';
import { realClock } from '../../api/clock.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { createTestCa, FakeCsrApi } from './fakes.js';
import { createCsrPem, generateKeyPem } from './pki.js';

const SIGNER = 'orch.io/kube-apiserver-client-nodeagent';
const USAGES = ['digital signature', 'client auth'];
const code = (c: string) => (err: unknown): boolean => isOrchError(err) && err.code === c;

async function submission(keyPem = generateKeyPem()) {
  return { csrPem: await createCsrPem(keyPem, nodeTemplate('n1')), keyPem, signerName: SIGNER, usages: USAGES };
}

void describe('certificate signing requests', () => {
  void it('creates with generateName, or reuses a fixed-name request made for the same key', async () => {
    const api = new FakeCsrApi();
    const s = await submission();
    const generated = await submitCsr(api, s);
    assert.match(generated, /^csr-[a-z0-9]{5}$/);
    assert.equal(await submitCsr(api, { ...s, name: 'node-csr-a' }), 'node-csr-a');
    assert.equal(await submitCsr(api, { ...s, name: 'node-csr-a' }), 'node-csr-a', 'the same key resumes the request');
    assert.deepEqual(api.created, [generated, 'node-csr-a']);
    const other = await submission();
    await assert.rejects(submitCsr(api, { ...other, name: 'node-csr-a' }), (err) => code(CERT_CSR_CONFLICT)(err) && /another key/.test((err as Error).message));
    await assert.rejects(submitCsr(api, { ...s, name: 'node-csr-a', signerName: 'x.io/y' }), code(CERT_CSR_CONFLICT));
  });

  void it('reads the outcome from the conditions', () => {
    const csr = (conditions: unknown[], certificate?: string) => ({ metadata: { name: 'c1' }, status: { conditions, ...(certificate === undefined ? {} : { certificate }) } });
    assert.equal(issuedCertificate(csr([])), undefined);
    assert.equal(issuedCertificate(csr([{ type: 'Approved', status: 'True' }])), undefined);
    assert.equal(issuedCertificate(csr([{ type: 'Approved', status: 'True' }], Buffer.from('PEM').toString('base64'))), 'PEM');
    assert.throws(() => issuedCertificate(csr([{ type: 'Denied', status: 'True', reason: 'NotOurs', message: 'no' }])), (err) => code(CERT_CSR_DENIED)(err) && /c1 was denied: reason "NotOurs"/.test((err as Error).message));
    assert.throws(() => issuedCertificate(csr([{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure' }])), code(CERT_CSR_FAILED));
  });

  void it('waits through the watch until approved and issued', async () => {
    const api = new FakeCsrApi();
    const ca = await createTestCa();
    const name = await submitCsr(api, await submission());
    const waiting = waitForCertificate(api, name, { pollIntervalMs: 60_000, clock: realClock });
    await settle();
    assert.equal(api.watching, 1);
    await api.issue(name, ca);
    assert.match(await waiting, /BEGIN CERTIFICATE/);
    assert.equal(api.watching, 0, 'the watch is stopped');
  });

  void it('fails at once when denied, and names the request', async () => {
    const api = new FakeCsrApi();
    const name = await submitCsr(api, await submission());
    const waiting = waitForCertificate(api, name, { clock: realClock });
    await settle();
    api.condition(name, 'Denied');
    await assert.rejects(waiting, (err) => code(CERT_CSR_DENIED)(err) && (err as { subject?: string }).subject === name);
  });

  void it('polls when the watch says nothing, and gives up at the deadline or on abort', async () => {
    const time = new FakeClock();
    const api = new FakeCsrApi();
    const ca = await createTestCa();
    const name = await submitCsr(api, await submission());
    const late = assert.rejects(waitForCertificate(api, name, { clock: time, timeoutMs: 10_000, pollIntervalMs: 1000 }),
      (err) => code(CERT_CSR_TIMEOUT)(err) && /within 10 s/.test((err as Error).message));
    await settle();
    assert.deepEqual(time.pending().map((t) => [t.delayMs, t.keepAlive]), [[1000, true], [10_000, true]], 'the next poll and the deadline; both keep the process alive');
    await time.advance(10_000);
    await late;
    const controller = new AbortController();
    const aborted = waitForCertificate(api, name, { clock: time, signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, code(CERT_CANCELLED));
    // Issued while the watch is silent: the next poll finds it.
    api.silentWatches = true;
    const polled = waitForCertificate(api, name, { clock: time, pollIntervalMs: 1000 });
    await settle();
    await api.issue(name, ca);
    await time.advance(1000);
    assert.match(await polled, /BEGIN CERTIFICATE/);
    assert.deepEqual(time.pending(), [], 'no timer left behind');
  });
});
