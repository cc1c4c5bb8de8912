/**
 * The server's own PKI, kept in --cert-dir: a self-signed CA (ca.crt, ca.key; ECDSA P-256,
 * 10 years) generated once, a serving pair (apiserver.crt, apiserver.key; 1 year) for the hosts
 * given (regenerated when one is missing from its SANs or it expires within 30 days), and client
 * certificates signed by the CA on demand (the admin orchconfig). Keys are written mode 0600.
 */
import { createPrivateKey, webcrypto, X509Certificate as NodeCertificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type * as X509 from '@peculiar/x509';
import { x509Library } from '../../api/x509.js';
import { OrchError } from '../../api/errors.js';

export { x509Library };

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

export interface CertificateAuthority {
  readonly certPem: string;
  readonly keyPem: string;
  readonly cert: X509.X509Certificate;
  readonly key: CryptoKey;
}

export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']));
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' });
  return webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
}

function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
}

/** Loads the CA from `dir`, generating it the first time. Throws OrchError APISERVER_PKI. */
export async function ensureCa(dir: string, now = new Date()): Promise<CertificateAuthority> {
  const x509 = await x509Library();
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  try {
    if (existsSync(certFile) && existsSync(keyFile)) {
      const certPem = readFileSync(certFile, 'utf8');
      const pem = readFileSync(keyFile, 'utf8');
      return { certPem, keyPem: pem, cert: new x509.X509Certificate(certPem), key: await importKey(pem) };
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const keys = await newKeys();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      name: [{ CN: [`orch-apiserver-ca@${Math.floor(now.getTime() / 1000)}`] }],
      notBefore: new Date(now.getTime() - 3600_000),
      notAfter: new Date(now.getTime() + 3650 * DAY),
      keys,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const ca = { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey), cert, key: keys.privateKey };
    writeSecret(keyFile, ca.keyPem);
    writeFileSync(certFile, ca.certPem);
    return ca;
  } catch (err) {
    throw new OrchError('APISERVER_PKI', 'unavailable', `cannot load or create the CA in --cert-dir ${dir}: ${err instanceof Error ? err.message : String(err)}`, { subject: dir, cause: err });
  }
}

async function issue(ca: CertificateAuthority, subject: X509.JsonName, usage: 'server' | 'client', hosts: readonly string[], now: Date): Promise<KeyPair> {
  const x509 = await x509Library();
  const keys = await newKeys();
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey),
  ];
  if (hosts.length > 0) {
    extensions.push(new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) === 0 ? 'dns' : 'ip', value: h }))));
  }
  const cert = await x509.X509CertificateGenerator.create({
    subject,
    issuer: ca.cert.subject,
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: new Date(now.getTime() + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: ca.key,
    signingAlgorithm: ALGORITHM,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey) };
}

function covers(certPem: string, hosts: readonly string[], now: Date): boolean {
  const cert = new NodeCertificate(certPem);
  if (new Date(cert.validTo).getTime() - now.getTime() < 30 * DAY) return false;
  return hosts.every((h) => (isIP(h) === 0 ? cert.checkHost(h) !== undefined : cert.checkIP(h) !== undefined));
}

/** The serving pair in `dir` for `hosts`, (re)generated when needed. */
export async function ensureServing(dir: string, ca: CertificateAuthority, hosts: readonly string[], now = new Date()): Promise<KeyPair> {
  const certFile = join(dir, 'apiserver.crt');
  const keyFile = join(dir, 'apiserver.key');
  try {
    if (existsSync(certFile) && existsSync(keyFile)) {
      const pair = { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
      if (covers(pair.certPem, hosts, now)) return pair;
    }
    const pair = await issue(ca, [{ CN: ['orch-apiserver'] }], 'server', hosts, now);
    writeSecret(keyFile, pair.keyPem);
    writeFileSync(certFile, pair.certPem);
    return pair;
  } catch (err) {
    throw new OrchError('APISERVER_PKI', 'unavailable', `cannot create the serving certificate in --cert-dir ${dir}: ${err instanceof Error ? err.message : String(err)}`, { subject: dir, cause: err });
  }
}

/** A client certificate (CN = user, O = groups) signed by the CA. */
export function issueClientCertificate(ca: CertificateAuthority, user: string, groups: readonly string[], now = new Date()): Promise<KeyPair> {
  const subject: X509.JsonName = [{ CN: [user] }, ...(groups.length === 0 ? [] : [{ O: [...groups] }])];
  return issue(ca, subject, 'client', [], now);
}
