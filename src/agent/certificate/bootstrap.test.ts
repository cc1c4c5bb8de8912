import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { realClock } from '../../api/clock.js';
import { isOrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { loadOrchconfig } from '../orchclient/index.js';
import { bootstrapClientCertificate, isOrchconfigStillValid, TMP_KEY_FILE, type BootstrapOptions } from './bootstrap.js';
import { CERT_CSR_DENIED, CERT_CSR_TIMEOUT, CERT_ISSUED_INVALID } from './codes.js';
import { setTimeout as delay } from 'node:timers/promises';
import { FakeLogger } from '../logging/testing.js';
import { createTestCa, FakeCsrApi, type TestCa } from './fakes.js';

let root: string;
let ca: TestCa;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'nodeagent-bootstrap-'));
  ca = await createTestCa();
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Polls `probe` (every 10 ms, up to 5 s) until it gives a value. */
async function until<T>(probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting in the test');
    await delay(10);
  }
}

let n = 0;
async function setup(api: FakeCsrApi): Promise<BootstrapOptions & { dir: string; logger: FakeLogger }> {
  const dir = join(root, `case-${++n}`);
  const logger = new FakeLogger();
  const bootstrapOrchconfigPath = join(dir, 'bootstrap.orchconfig');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(dir, { recursive: true });
  await writeFile(bootstrapOrchconfigPath, stringify({
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
    users: [{ name: 'u', user: { token: 'abcdef.0123456789abcdef' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }));
  return {
    dir, logger, bootstrapOrchconfigPath, orchconfigPath: join(dir, 'nodeagent.orchconfig'), certDir: join(dir, 'pki'), nodeName: 'n1', clock: realClock,
    createClient: (connection) => {
      assert.equal(connection.token, 'abcdef.0123456789abcdef', 'the bootstrap token is used');
      return api;
    },
  };
}

void describe('TLS bootstrap', () => {
  void it('requests a client certificate and writes the orchconfig that names the current pair', async () => {
    const api = new FakeCsrApi();
    api.autoSign = ca;
    const o = await setup(api);
    await bootstrapClientCertificate(o);
    assert.equal(api.created.length, 1);
    const name = api.created[0] ?? '';
    assert.match(name, /^node-csr-[0-9a-f]{64}$/);
    const spec = api.csrs.get(name)?.spec as Record<string, unknown>;
    assert.equal(spec.signerName, 'orch.io/kube-apiserver-client-nodeagent');
    assert.deepEqual(spec.usages, ['digital signature', 'client auth']);
    assert.equal(api.closed, 1);
    const link = join(o.certDir, 'nodeagent-client-current.pem');
    assert.match(await readlink(link), /^nodeagent-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    assert.equal(existsSync(join(o.certDir, TMP_KEY_FILE)), false, 'the kept key is removed');
    const connection = await loadOrchconfig(o.orchconfigPath);
    assert.equal(connection.server, 'https://127.0.0.1:6443');
    assert.equal(connection.ca?.toString(), ca.certPem);
    assert.equal(connection.token, undefined);
    assert.equal(new X509Certificate(connection.clientCert ?? '').subject, 'O=system:nodes\nCN=system:node:n1');
    assert.match(await readFile(o.orchconfigPath, 'utf8'), new RegExp(`client-key: ${link}`));
    assert.equal(await isOrchconfigStillValid(o.orchconfigPath, o.logger), true);
    // Valid: nothing more is asked.
    await bootstrapClientCertificate(o);
    assert.equal(api.created.length, 1);
    // Expired (seen from the future): a new request, with a new key.
    const future = (): Date => new Date(Date.now() + 2 * 24 * 3600_000);
    assert.equal(await isOrchconfigStillValid(o.orchconfigPath, o.logger, future()), false);
    // The fake signer uses real time, so the new certificate is expired in that future: refused.
    await assert.rejects(bootstrapClientCertificate({ ...o, clock: { ...realClock, now: () => future().getTime() } }), (err) => isOrchError(err) && err.code === CERT_ISSUED_INVALID);
    assert.equal(api.created.length, 2);
    assert.notEqual(api.created[1], name, 'a new key, so a new request');
  });

  void it('keeps the key while waiting, so that a restart resumes the same request', async () => {
    const api = new FakeCsrApi();
    const o = await setup(api);
    const clock = new FakeClock();
    // Polled every 10 minutes here, so that the hour passes in few steps.
    const first = assert.rejects(bootstrapClientCertificate({ ...o, clock, pollIntervalMs: 600_000 }), (err) => isOrchError(err) && err.code === CERT_CSR_TIMEOUT);
    await until(() => api.watching > 0 || undefined);
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [600_000, 3600_000], 'bootstrap waits an hour for the certificate');
    await clock.advance(3600_000);
    await first;
    assert.equal(existsSync(join(o.certDir, TMP_KEY_FILE)), true);
    assert.equal(existsSync(o.orchconfigPath), false);
    const second = bootstrapClientCertificate({ ...o, waitTimeoutMs: 10_000 });
    await until(() => api.watching > 0 || undefined);
    assert.equal(api.created.length, 1, 'no second request');
    await api.issue(api.created[0] ?? '', ca);
    await second;
    assert.equal(await isOrchconfigStillValid(o.orchconfigPath, o.logger), true);
  });

  void it('fails clearly when the request is denied', async () => {
    const api = new FakeCsrApi();
    const o = await setup(api);
    const running = bootstrapClientCertificate({ ...o, waitTimeoutMs: 10_000 });
    const name = await until(() => api.created[0]);
    api.condition(name, 'Denied');
    await assert.rejects(running, (err) => isOrchError(err) && err.code === CERT_CSR_DENIED && err.message.includes(name));
    assert.equal(existsSync(o.orchconfigPath), false);
  });
});
