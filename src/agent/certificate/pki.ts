/**
 * Keys, certificate requests and certificates as the agent's certificate managers need them:
 * a new ECDSA P-256 key (PEM, "EC PRIVATE KEY" as upstream writes it), a PKCS#10 request for a
 * subject and subject alternative names signed with it (@peculiar/x509 over Node's WebCrypto,
 * loaded on first use), PEM bundles split into certificates and key, and what a certificate
 * says (validity, common name, organizations, DNS and IP names). RSA keys found on disk are
 * accepted too (their requests add the "key encipherment" usage, as upstream).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { x509Library } from '../../api/x509.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { CERT_ISSUED_INVALID, CERT_STORE_INVALID } from './codes.js';

/** @peculiar/x509 with Node's WebCrypto (src/api/x509.ts: loaded once, on first use). */
export const x509 = x509Library;

/** What a certificate is requested for: the subject and, for serving certificates, the names. */
export interface CertificateTemplate {
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

/** A certificate (chain, PEM) and its private key (PEM). */
export interface CertificatePair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface CertificateFacts {
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

/** A new ECDSA P-256 private key, PEM (SEC 1, "EC PRIVATE KEY"). */
export function generateKeyPem(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'sec1', format: 'pem' }).toString();
}

/** The private key of `pem`; throws an Error when it is not one. */
export function parsePrivateKey(pem: string): KeyObject {
  return createPrivateKey(pem);
}

/** True when `pem` holds a usable private key. */
export function isPrivateKey(pem: string): boolean {
  try {
    parsePrivateKey(pem);
    return true;
  } catch {
    return false; // not a key: the caller makes a new one (the answer is the report)
  }
}

/** The usages requested for a key: upstream adds "key encipherment" for RSA keys only. */
export function usagesFor(keyPem: string, purpose: 'client auth' | 'server auth'): string[] {
  const rsa = parsePrivateKey(keyPem).asymmetricKeyType === 'rsa';
  return rsa ? ['key encipherment', 'digital signature', purpose] : ['digital signature', purpose];
}

/** A PEM PKCS#10 request for `template`, signed with `keyPem` (ECDSA P-256 or RSA). */
export async function createCsrPem(keyPem: string, template: CertificateTemplate): Promise<string> {
  const lib = await x509();
  const key = parsePrivateKey(keyPem);
  const ec = key.asymmetricKeyType === 'ec';
  if (!ec && key.asymmetricKeyType !== 'rsa') throw new OrchError(CERT_STORE_INVALID, 'invalid', `keys of type ${key.asymmetricKeyType ?? 'unknown'} are not supported (ECDSA or RSA)`);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (ec && curve !== 'prime256v1') throw new OrchError(CERT_STORE_INVALID, 'invalid', `ECDSA keys on curve ${curve ?? 'unknown'} are not supported (P-256)`);
  const algorithm = ec ? { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const privateKey = await webcrypto.subtle.importKey('pkcs8', key.export({ type: 'pkcs8', format: 'der' }), algorithm, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', createPublicKey(key).export({ type: 'spki', format: 'der' }), algorithm, true, ['verify']);
  const names = [
    ...template.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...template.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
  ];
  const request = await lib.Pkcs10CertificateRequestGenerator.create({
    // Organization before common name, in the order Go's pkix.Name writes them.
    name: [...template.organizations.map((o) => ({ O: [o] })), { CN: [template.commonName] }],
    keys: { privateKey, publicKey },
    signingAlgorithm: algorithm,
    extensions: names.length === 0 ? [] : [new lib.SubjectAlternativeNameExtension(names)],
  });
  return `${request.toString('pem')}\n`;
}

/** The public key (SPKI DER, base64) of a PEM certificate request; throws when it does not parse. */
export async function csrPublicKey(csrPem: string): Promise<string> {
  const lib = await x509();
  return Buffer.from(new lib.Pkcs10CertificateRequest(csrPem).publicKey.rawData).toString('base64');
}

/** The public key (SPKI DER, base64) of a private key. */
export function keyPublicKey(keyPem: string): string {
  return createPublicKey(parsePrivateKey(keyPem)).export({ type: 'spki', format: 'der' }).toString('base64');
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The certificates (in order, one PEM) and the first private key of a PEM bundle. */
export function splitPem(text: string): { certPem: string; keyPem: string | undefined } {
  const certs: string[] = [];
  let keyPem: string | undefined;
  for (const m of text.matchAll(BLOCK)) {
    const type = m[1] ?? '';
    if (type === 'CERTIFICATE') certs.push(`${m[0]}\n`);
    else if (type.endsWith('PRIVATE KEY')) keyPem ??= `${m[0]}\n`;
  }
  return { certPem: certs.join(''), keyPem };
}

/** What the first certificate of `certPem` says; throws an OrchError (CERT_ISSUED_INVALID) when it is not one. */
export function certificateFacts(certPem: string): CertificateFacts {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new OrchError(CERT_ISSUED_INVALID, 'invalid', `not a PEM certificate: ${messageOf(err)}`, { cause: err });
  }
  const subject = cert.subject.split('\n');
  const field = (name: string): string[] => subject.filter((s) => s.startsWith(`${name}=`)).map((s) => s.slice(name.length + 1));
  const sans = (cert.subjectAltName ?? '').split(', ').filter((s) => s !== '');
  return {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    commonName: field('CN')[0] ?? '',
    organizations: field('O'),
    dnsNames: sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)),
    ipAddresses: sans.filter((s) => s.startsWith('IP Address:')).map((s) => normalizeIp(s.slice(11))),
  };
}

/** IPv6 addresses as Node prints them in SANs (upper case, no zero compression) compared in one form. */
function normalizeIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase(); // not parseable as IPv6: compared as written
  }
}

/** True when the key belongs to the first certificate of `certPem`. */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(parsePrivateKey(keyPem));
  } catch {
    return false; // unparsable certificate or key: it does not match (callers report it)
  }
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
};

/** True when the certificate has the template's subject and exactly its names (upstream's certSatisfiesTemplate). */
export function satisfiesTemplate(facts: CertificateFacts, template: CertificateTemplate): boolean {
  return facts.commonName === template.commonName && sameSet(facts.organizations, template.organizations)
    && sameSet(facts.dnsNames, template.dnsNames) && sameSet(facts.ipAddresses, template.ipAddresses.map(normalizeIp));
}
