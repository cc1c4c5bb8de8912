/**
 * X.509 certificates the agent makes itself: the self-signed serving certificate (when no
 * tlsCertFile/tlsPrivateKeyFile is given), and, through the same small API, the CAs and
 * client certificates the tests need. Serving keys are RSA 2048 (as upstream's self-signed
 * pair, so that every configurable RSA cipher suite works); a CA may use ECDSA P-256 (quick to
 * make; it only signs). SHA-256 signatures, PEM output (PKCS#8 keys).
 */
import { X509Certificate as NodeX509, createPrivateKey, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';
import { x509Library } from '../../api/x509.js';

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export interface Subject {
  readonly commonName: string;
  readonly organizations?: readonly string[];
}

export interface Issuer {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface CertificateRequest {
  readonly subject: Subject;
  /** Signed by this CA; self-signed when absent. */
  readonly issuer?: Issuer;
  readonly isCA?: boolean;
  readonly serverAuth?: boolean;
  readonly clientAuth?: boolean;
  /** DNS names and IP addresses (told apart by their form). */
  readonly altNames?: readonly string[];
  readonly notBefore?: Date;
  readonly notAfter?: Date;
  /** The new key's type: RSA 2048 (default) or ECDSA P-256 (much faster to make). */
  readonly keyType?: 'rsa' | 'ecdsa';
}

export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

function jsonName(s: Subject): X509.JsonName {
  return [{ CN: [s.commonName] }, ...(s.organizations ?? []).map((o) => ({ O: [o] }))];
}

/** The issuer's signing key and algorithm (RSA or ECDSA, from the key itself). */
async function importKey(keyPem: string): Promise<{ key: webcrypto.CryptoKey; algorithm: typeof RSA | typeof ECDSA }> {
  const x509 = await x509Library();
  const der = x509.PemConverter.decodeFirst(keyPem);
  const algorithm = createPrivateKey(keyPem).asymmetricKeyType === 'ec' ? ECDSA : RSA;
  return { key: await webcrypto.subtle.importKey('pkcs8', der, algorithm, false, ['sign']), algorithm };
}

/** Creates a key pair and a certificate for it. */
export async function createCertificate(r: CertificateRequest): Promise<IssuedCertificate> {
  // Loaded on first use: an agent with its certificates from files never loads it.
  const x509 = await x509Library();
  const own = r.keyType === 'ecdsa' ? ECDSA : RSA;
  const keys = await webcrypto.subtle.generateKey(own, true, ['sign', 'verify']);
  // keyUsage as its DER BIT STRING: digitalSignature and keyEncipherment, plus keyCertSign and cRLSign for a CA.
  const keyUsage = new x509.Extension('2.5.29.15', true, Uint8Array.from(r.isCA === true ? [0x03, 0x02, 0x01, 0xa6] : [0x03, 0x02, 0x05, 0xa0]));
  const eku = [...(r.serverAuth === true ? [x509.ExtendedKeyUsage.serverAuth] : []), ...(r.clientAuth === true ? [x509.ExtendedKeyUsage.clientAuth] : [])];
  const names = (r.altNames ?? []).map((n) => ({ type: isIP(n) === 0 ? 'dns' as const : 'ip' as const, value: n }));
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(r.isCA === true, undefined, true),
    keyUsage,
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ...(eku.length > 0 ? [new x509.ExtendedKeyUsageExtension(eku, false)] : []),
    ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
  ];
  const notBefore = r.notBefore ?? new Date(Date.now() - 60_000);
  const notAfter = r.notAfter ?? new Date(notBefore.getTime() + 365 * 24 * 3600_000);
  const serialNumber = Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');
  let cert: X509.X509Certificate;
  if (r.issuer === undefined) {
    cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber, name: jsonName(r.subject), notBefore, notAfter, keys, signingAlgorithm: own, extensions,
    });
  } else {
    const issuerCert = new x509.X509Certificate(r.issuer.certPem);
    extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuerCert.publicKey));
    const signing = await importKey(r.issuer.keyPem);
    cert = await x509.X509CertificateGenerator.create({
      serialNumber, subject: jsonName(r.subject), issuer: issuerCert.subjectName, notBefore, notAfter,
      publicKey: keys.publicKey, signingKey: signing.key, signingAlgorithm: signing.algorithm, extensions,
    });
  }
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { certPem: `${cert.toString('pem')}\n`, keyPem: `${x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n` };
}

export interface CertificateInfo {
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly subject: string;
  readonly altNames: readonly string[];
}

/** Validity and names of the first certificate of a PEM bundle; throws when it is not one. */
export function certificateInfo(pem: string | Buffer): CertificateInfo {
  const c = new NodeX509(pem);
  const altNames = (c.subjectAltName ?? '').split(', ').filter((s) => s !== '').map((s) => s.replace(/^(DNS|IP Address):/, ''));
  return { notBefore: new Date(c.validFrom), notAfter: new Date(c.validTo), subject: c.subject, altNames };
}

/** True when the key belongs to the (first) certificate. */
export function keyMatches(certPem: string | Buffer, keyPem: string | Buffer): boolean {
  try {
    return new NodeX509(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false; // unparsable key or certificate: it does not match (the caller regenerates or reports)
  }
}

