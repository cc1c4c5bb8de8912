import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDirs } from '../../../test/helpers/tempdir.js';
import { OrchError } from '../../api/errors.js';
import { FAKE_CLOCK_START, FakeClock } from '../../api/fake-clock.js';
import { certificateInfo, createCertificate } from './certs.js';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY, cipherString, servingCertificate, tlsServerOptions } from './tls.js';

const names = { altNames: ['node1', 'host1', '10.0.0.5'], commonName: 'node1' };

void describe('the serving certificate', () => {
  const tempDir = tempDirs('tls-test-');

  void it('is generated into the certificate directory, reused, and generated again once expired', async () => {
    const certDir = join(await tempDir(), 'pki');
    const clock = new FakeClock();
    const first = await servingCertificate({ tlsCertFile: '', tlsPrivateKeyFile: '', certDir, clock, ...names });
    assert.equal(first.origin, 'generated');
    assert.equal(first.certPath, join(certDir, SELF_SIGNED_CERT));
    assert.equal((await stat(join(certDir, SELF_SIGNED_KEY))).mode & 0o777, 0o600);
    const info = certificateInfo(first.cert);
    assert.deepEqual(info.altNames, ['node1', 'host1', '10.0.0.5', 'localhost', '127.0.0.1']);
    assert.match(info.subject, new RegExp(`CN=node1@${FAKE_CLOCK_START / 1000}`));
    assert.equal(info.notBefore.getTime(), FAKE_CLOCK_START - 3600_000);
    assert.equal(info.notAfter.getTime(), FAKE_CLOCK_START + 365 * 24 * 3600_000);
    clock.set(info.notAfter.getTime() - 1);
    const again = await servingCertificate({ tlsCertFile: '', tlsPrivateKeyFile: '', certDir, clock, ...names });
    assert.equal(again.origin, 'reused');
    assert.deepEqual(again.cert, first.cert);
    await clock.advance(1);
    const renewed = await servingCertificate({ tlsCertFile: '', tlsPrivateKeyFile: '', certDir, clock, ...names });
    assert.equal(renewed.origin, 'generated');
    assert.notDeepEqual(renewed.cert, first.cert);
    assert.deepEqual(await readFile(join(certDir, SELF_SIGNED_CERT)), renewed.cert);
  });

  void it('comes from the given files, which must both be there and match', async () => {
    const dir = await tempDir();
    const a = await createCertificate({ subject: { commonName: 'a' }, serverAuth: true, keyType: 'ecdsa' });
    const b = await createCertificate({ subject: { commonName: 'b' }, serverAuth: true, keyType: 'ecdsa' });
    await writeFile(join(dir, 'a.crt'), a.certPem);
    await writeFile(join(dir, 'a.key'), a.keyPem);
    await writeFile(join(dir, 'b.key'), b.keyPem);
    const given = await servingCertificate({ tlsCertFile: join(dir, 'a.crt'), tlsPrivateKeyFile: join(dir, 'a.key'), certDir: '/nonexistent', clock: new FakeClock(), ...names });
    assert.equal(given.origin, 'files');
    const bad = (err: unknown, text: RegExp): boolean => err instanceof OrchError && err.code === 'SERVER_TLS_INVALID' && text.test(err.message);
    await assert.rejects(servingCertificate({ tlsCertFile: join(dir, 'a.crt'), tlsPrivateKeyFile: join(dir, 'b.key'), certDir: '', clock: new FakeClock(), ...names }), (e) => bad(e, /does not match/));
    await assert.rejects(servingCertificate({ tlsCertFile: join(dir, 'a.crt'), tlsPrivateKeyFile: '', certDir: '', clock: new FakeClock(), ...names }), (e) => bad(e, /given together/));
    await assert.rejects(servingCertificate({ tlsCertFile: join(dir, 'x.crt'), tlsPrivateKeyFile: join(dir, 'a.key'), certDir: '', clock: new FakeClock(), ...names }), (e) => bad(e, /cannot read/));
  });
});

void describe('TLS settings', () => {
  void it('map IANA cipher suite names to OpenSSL ones and keep the TLS 1.3 suites', () => {
    assert.equal(cipherString([], ''), undefined);
    assert.equal(
      cipherString(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_RSA_WITH_3DES_EDE_CBC_SHA'], 'VersionTLS12'),
      'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:DES-CBC3-SHA:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256',
    );
    assert.match(cipherString(['TLS_RSA_WITH_AES_128_CBC_SHA'], 'VersionTLS10') ?? '', /@SECLEVEL=0$/);
    assert.throws(() => cipherString(['TLS_NOPE'], ''), /unknown cipher suite/);
  });

  void it('set the minimum version and ask for client certificates without refusing the connection', () => {
    const serving = { cert: Buffer.from(''), key: Buffer.from(''), certPath: '', keyPath: '', origin: 'files' as const };
    const o = tlsServerOptions({ serving, tlsMinVersion: 'VersionTLS13', tlsCipherSuites: [], clientCA: Buffer.from('CA') });
    assert.equal(o.minVersion, 'TLSv1.3');
    assert.equal(o.requestCert, true);
    assert.equal(o.rejectUnauthorized, false);
    assert.equal(tlsServerOptions({ serving, tlsMinVersion: '', tlsCipherSuites: [] }).requestCert, undefined);
    assert.throws(() => tlsServerOptions({ serving, tlsMinVersion: 'VersionTLS14', tlsCipherSuites: [] }), /unknown TLS version/);
  });
});
