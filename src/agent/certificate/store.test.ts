import assert from 'node:assert/strict';
import { lstat, mkdtemp, readFile, readlink, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { CERT_STORE_INVALID } from './codes.js';
import { createFileStore, fileTimestamp } from './store.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nodeagent-cert-store-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CERT = (n: number): string => `-----BEGIN CERTIFICATE-----\nQ0VSVCR${n}\n-----END CERTIFICATE-----\n`;
const KEY = (n: number): string => `-----BEGIN EC PRIVATE KEY-----\nS0VZ${n}\n-----END EC PRIVATE KEY-----\n`;

void describe('the file store', () => {
  void it('writes timestamped pairs (0600) and swings the -current link', async () => {
    const clock = new FakeClock(Date.parse('2030-02-03T04:05:06Z'));
    const store = createFileStore({ dir: join(dir, 'pki'), prefix: 'nodeagent-client', clock });
    assert.equal(store.currentPath, join(dir, 'pki', 'nodeagent-client-current.pem'));
    assert.equal(await store.current(), undefined);
    await store.update({ certPem: CERT(1), keyPem: KEY(1) });
    assert.equal(await readlink(store.currentPath), 'nodeagent-client-2030-02-03-04-05-06.pem');
    assert.equal((await lstat(join(dir, 'pki', 'nodeagent-client-2030-02-03-04-05-06.pem'))).mode & 0o777, 0o600);
    assert.deepEqual(await store.current(), { certPem: CERT(1), keyPem: KEY(1) });
    clock.set(Date.parse('2030-02-04T00:00:00Z'));
    await store.update({ certPem: CERT(2), keyPem: KEY(2) });
    assert.equal(await readFile(store.currentPath, 'utf8'), CERT(2) + KEY(2));
    assert.deepEqual((await readdir(join(dir, 'pki'))).sort(), [
      'nodeagent-client-2030-02-03-04-05-06.pem', 'nodeagent-client-2030-02-04-00-00-00.pem', 'nodeagent-client-current.pem',
    ]);
  });

  void it('reports a current file without a key', async () => {
    const store = createFileStore({ dir, prefix: 'broken', clock: new FakeClock() });
    await writeFile(store.currentPath, CERT(1));
    await assert.rejects(store.current(), (err) => isOrchError(err) && err.code === CERT_STORE_INVALID);
  });

  void it('formats timestamps as upstream (UTC)', () => {
    assert.equal(fileTimestamp(new Date('2031-12-01T23:09:08Z')), '2031-12-01-23-09-08');
  });
});
