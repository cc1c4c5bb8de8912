/**
 * Issuing certificates for approved requests with the server's CA: each built-in signer's
 * rules (upstream's, with kubelet -> nodeagent), and the certificate itself: the request's
 * subject and public key, key usages and extended key usages from spec.usages, the request's
 * subject alternative names where the signer honours them, valid from five minutes ago (clock
 * skew) for spec.expirationSeconds (default one year), never past the CA.
 */
import { randomBytes } from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import type { ParsedCsr, X509Lib } from './csr.js';
import { SIGNER_APISERVER_CLIENT, SIGNER_NODEAGENT_CLIENT, SIGNER_NODEAGENT_SERVING } from './schema.js';

export interface SigningAuthority {
  readonly cert: X509.X509Certificate;
  readonly key: webcrypto.CryptoKey;
}

export const DEFAULT_DURATION_SECONDS = 365 * 24 * 3600;
const BACKDATE_MS = 5 * 60 * 1000;

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

function nodeSubject(csr: ParsedCsr): string | undefined {
  if (!sameSet(csr.organizations, ['system:nodes'])) return 'subject organization must be exactly ["system:nodes"]';
  if (!csr.commonName.startsWith('system:node:') || csr.commonName === 'system:node:') return 'subject common name must begin with "system:node:" and name the node';
  return undefined;
}

/** Why `signer` refuses this request (upstream's signer checks), or undefined. */
export function signerProblem(signer: string, csr: ParsedCsr, usages: readonly string[]): string | undefined {
  switch (signer) {
    case SIGNER_NODEAGENT_CLIENT: {
      const subject = nodeSubject(csr);
      if (subject !== undefined) return subject;
      if (csr.dnsNames.length + csr.ipAddresses.length + csr.emails.length + csr.uris.length > 0) return 'subject alternative names are not allowed';
      if (!sameSet(usages, ['digital signature', 'client auth']) && !sameSet(usages, ['key encipherment', 'digital signature', 'client auth'])) {
        return 'usages must be ["digital signature", "client auth"] or ["key encipherment", "digital signature", "client auth"]';
      }
      return undefined;
    }
    case SIGNER_NODEAGENT_SERVING: {
      const subject = nodeSubject(csr);
      if (subject !== undefined) return subject;
      if (csr.emails.length + csr.uris.length > 0) return 'email and URI subject alternative names are not allowed';
      if (csr.dnsNames.length + csr.ipAddresses.length === 0) return 'at least one DNS or IP subject alternative name is required';
      if (!sameSet(usages, ['digital signature', 'server auth']) && !sameSet(usages, ['key encipherment', 'digital signature', 'server auth'])) {
        return 'usages must be ["digital signature", "server auth"] or ["key encipherment", "digital signature", "server auth"]';
      }
      return undefined;
    }
    case SIGNER_APISERVER_CLIENT:
      if (!usages.includes('client auth')) return 'usages must include "client auth"';
      if (!usages.every((u) => ['digital signature', 'key encipherment', 'client auth'].includes(u))) return 'usages must be among "digital signature", "key encipherment" and "client auth"';
      return undefined;
    default:
      return `the signer ${signer} is not served by this server`;
  }
}

/** Bit positions of the KeyUsage BIT STRING (RFC 5280 4.2.1.3). */
const KEY_USAGE_BITS: Readonly<Record<string, number>> = {
  signing: 0, 'digital signature': 0, 'content commitment': 1, 'key encipherment': 2, 'data encipherment': 3,
  'key agreement': 4, 'cert sign': 5, 'crl sign': 6, 'encipher only': 7, 'decipher only': 8,
};

/** The critical KeyUsage extension for `usages`, DER-encoded by hand (undefined when none applies). */
function keyUsageExtension(lib: X509Lib, usages: readonly string[]): X509.Extension | undefined {
  const bits = [...new Set(usages.map((u) => KEY_USAGE_BITS[u]).filter((b): b is number => b !== undefined))];
  if (bits.length === 0) return undefined;
  const bytes = Buffer.alloc(Math.max(...bits) >= 8 ? 2 : 1);
  for (const bit of bits) bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) | (0x80 >> (bit & 7));
  const last = bytes[bytes.length - 1] ?? 0;
  let unused = 0;
  while (unused < 7 && (last & (1 << unused)) === 0) unused++;
  const der = Buffer.concat([Buffer.from([0x03, bytes.length + 1, unused]), bytes]);
  return new lib.Extension('2.5.29.15', true, der);
}

const EXTENDED: Readonly<Record<string, string>> = {
  any: '2.5.29.37.0', 'server auth': '1.3.6.1.5.5.7.3.1', 'client auth': '1.3.6.1.5.5.7.3.2', 'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4', 's/mime': '1.3.6.1.5.5.7.3.4', 'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6', 'ipsec user': '1.3.6.1.5.5.7.3.7', timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9', 'microsoft sgc': '1.3.6.1.4.1.311.10.3.3', 'netscape sgc': '2.16.840.1.113730.4.1',
};

export interface IssueOptions {
  readonly signer: string;
  readonly usages: readonly string[];
  readonly expirationSeconds: number | undefined;
  readonly now: Date;
}

/** The PEM of the certificate for `csr`, signed by `ca`. */
export async function issueCertificate(lib: X509Lib, ca: SigningAuthority, csr: ParsedCsr, options: IssueOptions): Promise<string> {
  const extensions: X509.Extension[] = [new lib.BasicConstraintsExtension(false, undefined, true)];
  const keyUsage = keyUsageExtension(lib, options.usages);
  if (keyUsage !== undefined) extensions.push(keyUsage);
  const extended = [...new Set(options.usages.map((u) => EXTENDED[u]).filter((u): u is string => u !== undefined))];
  if (extended.length > 0) extensions.push(new lib.ExtendedKeyUsageExtension(extended));
  extensions.push(await lib.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey));
  if (options.signer !== SIGNER_NODEAGENT_CLIENT) {
    const names = [
      ...csr.dnsNames.map((value) => ({ type: 'dns' as const, value })), ...csr.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
      ...csr.emails.map((value) => ({ type: 'email' as const, value })), ...csr.uris.map((value) => ({ type: 'url' as const, value })),
    ];
    if (names.length > 0) extensions.push(new lib.SubjectAlternativeNameExtension(names));
  }
  const seconds = options.expirationSeconds ?? DEFAULT_DURATION_SECONDS;
  const notAfter = new Date(Math.min(options.now.getTime() + seconds * 1000, ca.cert.notAfter.getTime()));
  // A positive 128-bit serial number.
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const cert = await lib.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: csr.request.subjectName,
    issuer: ca.cert.subjectName,
    notBefore: new Date(options.now.getTime() - BACKDATE_MS),
    notAfter,
    publicKey: csr.request.publicKey,
    signingKey: ca.key,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions,
  });
  return `${cert.toString('pem')}\n`;
}
