/**
 * Reading PKCS#10 certificate requests: the PEM block of `spec.request`, the request itself
 * (@peculiar/x509), its self-signature checked synchronously with Node's crypto (the DER is
 * split by hand into the signed part, the algorithm and the signature), and the subject and
 * subject alternative names the signers look at.
 */
import { createPublicKey, verify } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

export type X509Lib = typeof X509;

export interface ParsedCsr {
  readonly request: X509.Pkcs10CertificateRequest;
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly emails: readonly string[];
  readonly uris: readonly string[];
}

interface Tlv {
  readonly tag: number;
  /** Offset of the first content byte. */
  readonly start: number;
  readonly end: number;
  /** Offset of the tag byte. */
  readonly head: number;
}

function tlv(der: Buffer, at: number): Tlv {
  const tag = der[at];
  let length = der[at + 1];
  if (tag === undefined || length === undefined) throw new Error('truncated DER');
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] ?? 0);
    start += bytes;
  }
  if (start + length > der.length) throw new Error('truncated DER');
  return { tag, start, end: start + length, head: at };
}

function oidText(bytes: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      parts.push(value);
      value = 0;
    }
  }
  const first = parts.shift() ?? 0;
  return [Math.min(2, Math.floor(first / 40)), first - Math.min(2, Math.floor(first / 40)) * 40, ...parts].join('.');
}

/** Signature algorithm OIDs of requests, to Node's digest names (null: the key decides, Ed25519). */
const DIGESTS: Readonly<Record<string, string | null>> = {
  '1.2.840.10045.4.3.2': 'sha256', '1.2.840.10045.4.3.3': 'sha384', '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256', '1.2.840.113549.1.1.12': 'sha384', '1.2.840.113549.1.1.13': 'sha512', '1.2.840.113549.1.1.5': 'sha1',
  '1.3.101.112': null,
};

/** Checks the request's self-signature; throws an Error saying why it does not verify. */
function checkSignature(der: Buffer, spki: ArrayBuffer): void {
  const outer = tlv(der, 0);
  const info = tlv(der, outer.start);
  const algorithm = tlv(der, info.end);
  const oid = tlv(der, algorithm.start);
  const signature = tlv(der, algorithm.end);
  if (outer.tag !== 0x30 || info.tag !== 0x30 || algorithm.tag !== 0x30 || oid.tag !== 0x06 || signature.tag !== 0x03) throw new Error('not a PKCS#10 certification request');
  const name = oidText(der.subarray(oid.start, oid.end));
  const digest = DIGESTS[name];
  if (digest === undefined) throw new Error(`unsupported signature algorithm ${name}`);
  const key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  // The BIT STRING's first byte counts unused bits (0 for signatures).
  if (!verify(digest, der.subarray(info.head, info.end), key, der.subarray(signature.start + 1, signature.end))) {
    throw new Error('the signature of the request does not verify with its public key');
  }
}

const PEM = /-----BEGIN ((?:NEW )?CERTIFICATE REQUEST)-----([\s\S]*?)-----END \1-----/;

/**
 * The request in `pem` (the decoded bytes of spec.request). Throws an Error saying what is
 * wrong: no CERTIFICATE REQUEST block, not parseable, or a signature that does not verify.
 */
export function parseCsr(lib: X509Lib, pem: string): ParsedCsr {
  const block = PEM.exec(pem);
  if (block === null) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const der = Buffer.from((block[2] ?? '').replace(/\s+/g, ''), 'base64');
  let request: X509.Pkcs10CertificateRequest;
  try {
    request = new lib.Pkcs10CertificateRequest(der);
  } catch (err) {
    throw new Error(`the certificate request does not parse: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  checkSignature(der, request.publicKey.rawData);
  const names = request.getExtension('2.5.29.17');
  const san = names instanceof lib.SubjectAlternativeNameExtension ? names.names.items : [];
  const of = (type: string): string[] => san.filter((n) => n.type === type).map((n) => n.value);
  return {
    request,
    commonName: request.subjectName.getField('CN')[0] ?? '',
    organizations: request.subjectName.getField('O'),
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    emails: of('email'),
    uris: of('url'),
  };
}
