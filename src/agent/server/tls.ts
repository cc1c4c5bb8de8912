/**
 * The secure server's TLS settings: the serving certificate (tlsCertFile + tlsPrivateKeyFile,
 * or a pair generated on first start and kept in --cert-dir as nodeagent.crt / nodeagent.key,
 * reused on later starts and generated again once expired or unreadable), the minimum
 * version (VersionTLS10..13), the cipher suites by their IANA names (TLS 1.3 suites stay
 * fixed, as upstream), and the client CA bundle for client certificates.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_CIPHERS, type SecureVersion, type TlsOptions } from 'node:tls';
import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { INSECURE_CIPHER_SUITES, SECURE_CIPHER_SUITES } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { certificateInfo, createCertificate, keyMatches } from './certs.js';
import { quoteValue } from '../../api/quote.js';

export const SERVER_TLS_INVALID = 'SERVER_TLS_INVALID';
export const SELF_SIGNED_CERT = 'nodeagent.crt';
export const SELF_SIGNED_KEY = 'nodeagent.key';
/** TLS 1.3 suites are not configurable: always offered. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

export interface ServingCertificate {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly certPath: string;
  readonly keyPath: string;
  readonly origin: 'files' | 'generated' | 'reused';
}

export interface ServingCertificateOptions {
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  readonly certDir: string;
  /** Names for the generated certificate: node name, hostname, node IPs (localhost and 127.0.0.1 are added). */
  readonly altNames: readonly string[];
  readonly commonName: string;
  /** The validity of a generated certificate, and whether the stored one expired. */
  readonly clock: Pick<Clock, 'now'>;
  readonly logger?: Logger;
}

function tlsError(message: string, subject: string, cause?: unknown): OrchError {
  return new OrchError(SERVER_TLS_INVALID, 'invalid', message, { subject, cause });
}

async function readPem(path: string, what: string, subject: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw tlsError(`cannot read the ${what} ${path}: ${messageOf(err)}`, subject, err);
  }
}

async function reusable(certPath: string, keyPath: string, now: Date): Promise<{ cert: Buffer; key: Buffer } | string> {
  let cert: Buffer;
  let key: Buffer;
  try {
    [cert, key] = await Promise.all([readFile(certPath), readFile(keyPath)]);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'none yet' : `unreadable: ${messageOf(err)}`;
  }
  try {
    const info = certificateInfo(cert);
    if (info.notAfter.getTime() <= now.getTime()) return `expired at ${info.notAfter.toISOString()}`;
  } catch (err) {
    return `not a certificate: ${messageOf(err)}`;
  }
  return keyMatches(cert, key) ? { cert, key } : 'the key does not match the certificate';
}

async function writeAtomically(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}

/** The serving certificate and key; generates (and stores) a self-signed pair when none is given. */
export async function servingCertificate(o: ServingCertificateOptions): Promise<ServingCertificate> {
  if (o.tlsCertFile !== '' || o.tlsPrivateKeyFile !== '') {
    if (o.tlsCertFile === '' || o.tlsPrivateKeyFile === '') {
      throw tlsError('tlsCertFile and tlsPrivateKeyFile must be given together', o.tlsCertFile === '' ? 'tlsCertFile' : 'tlsPrivateKeyFile');
    }
    const cert = await readPem(o.tlsCertFile, 'certificate (tlsCertFile)', 'tlsCertFile');
    const key = await readPem(o.tlsPrivateKeyFile, 'private key (tlsPrivateKeyFile)', 'tlsPrivateKeyFile');
    if (!keyMatches(cert, key)) throw tlsError(`the private key ${o.tlsPrivateKeyFile} does not match the certificate ${o.tlsCertFile}`, 'tlsPrivateKeyFile');
    return { cert, key, certPath: o.tlsCertFile, keyPath: o.tlsPrivateKeyFile, origin: 'files' };
  }
  const certPath = join(o.certDir, SELF_SIGNED_CERT);
  const keyPath = join(o.certDir, SELF_SIGNED_KEY);
  const now = new Date(o.clock.now());
  const existing = await reusable(certPath, keyPath, now);
  if (typeof existing !== 'string') return { ...existing, certPath, keyPath, origin: 'reused' };
  o.logger?.info('Generating a self-signed serving certificate', { certDir: o.certDir, why: existing });
  const names = [...new Set([...o.altNames, 'localhost', '127.0.0.1'].filter((n) => n !== ''))];
  const stamp = Math.floor(now.getTime() / 1000);
  const notBefore = new Date(now.getTime() - 3600_000);
  const notAfter = new Date(now.getTime() + 365 * 24 * 3600_000);
  const ca = await createCertificate({ subject: { commonName: `${o.commonName}-ca@${stamp}` }, isCA: true, keyType: 'ecdsa', notBefore, notAfter });
  const leaf = await createCertificate({
    subject: { commonName: `${o.commonName}@${stamp}` }, issuer: ca, serverAuth: true, altNames: names, notBefore, notAfter,
  });
  try {
    await mkdir(o.certDir, { recursive: true, mode: 0o755 });
    await writeAtomically(keyPath, leaf.keyPem, 0o600);
    await writeAtomically(certPath, leaf.certPem + ca.certPem, 0o644);
  } catch (err) {
    throw tlsError(`cannot store the self-signed certificate in ${o.certDir}: ${messageOf(err)}`, '--cert-dir', err);
  }
  return { cert: Buffer.from(leaf.certPem + ca.certPem), key: Buffer.from(leaf.keyPem), certPath, keyPath, origin: 'generated' };
}

const VERSIONS: Readonly<Record<string, SecureVersion>> = {
  VersionTLS10: 'TLSv1', VersionTLS11: 'TLSv1.1', VersionTLS12: 'TLSv1.2', VersionTLS13: 'TLSv1.3',
};

/** The OpenSSL cipher string for the IANA names (TLS 1.3 suites always on); undefined: Node's defaults. */
export function cipherString(suites: readonly string[], minVersion: string): string | undefined {
  const legacy = minVersion === 'VersionTLS10' || minVersion === 'VersionTLS11';
  if (suites.length === 0) return legacy ? `${DEFAULT_CIPHERS}:@SECLEVEL=0` : undefined;
  const names: string[] = [];
  for (const suite of suites) {
    const name = SECURE_CIPHER_SUITES.has(suite) ? SECURE_CIPHER_SUITES.get(suite) : INSECURE_CIPHER_SUITES.get(suite);
    if (name === undefined) throw tlsError(`unknown cipher suite ${quoteValue(suite)}`, 'tlsCipherSuites');
    if (name !== null && !names.includes(name)) names.push(name);
  }
  return [...names, ...TLS13_SUITES, ...(legacy ? ['@SECLEVEL=0'] : [])].join(':');
}

export interface TlsSettings {
  /** Absent: the settings alone (serverTLSBootstrap adds the pair per handshake, dynamic-tls.ts). */
  readonly serving?: ServingCertificate;
  /** PEM bundle of client CAs (authentication.x509.clientCAFile). */
  readonly clientCA?: Buffer;
  readonly tlsMinVersion: string;
  readonly tlsCipherSuites: readonly string[];
}

export function tlsServerOptions(s: TlsSettings): TlsOptions {
  const minVersion = VERSIONS[s.tlsMinVersion];
  if (s.tlsMinVersion !== '' && minVersion === undefined) throw tlsError(`unknown TLS version ${quoteValue(s.tlsMinVersion)}`, 'tlsMinVersion');
  const ciphers = cipherString(s.tlsCipherSuites, s.tlsMinVersion);
  return {
    ...(s.serving === undefined ? {} : { cert: s.serving.cert, key: s.serving.key }),
    ...(minVersion === undefined ? {} : { minVersion }),
    ...(ciphers === undefined ? {} : { ciphers }),
    ...(s.clientCA === undefined ? {} : { ca: s.clientCA, requestCert: true, rejectUnauthorized: false }),
  };
}

/** Reads authentication.x509.clientCAFile ('' : none). */
export async function loadClientCA(path: string): Promise<Buffer | undefined> {
  if (path === '') return undefined;
  const pem = await readPem(path, 'client CA bundle (authentication.x509.clientCAFile)', 'authentication.x509.clientCAFile');
  try {
    certificateInfo(pem);
  } catch (err) {
    throw tlsError(`the client CA bundle ${path} holds no PEM certificate: ${messageOf(err)}`, 'authentication.x509.clientCAFile', err);
  }
  return pem;
}
