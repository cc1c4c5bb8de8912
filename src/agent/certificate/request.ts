/**
 * One certificate from the cluster: a request for a template signed with a key, submitted as a
 * CertificateSigningRequest, waited for, and checked (it parses, it is for our key, it has
 * not expired). Bootstrap and the rotation managers share it; the managers get it as a
 * `CertificateRequester` that makes a new key each time and asks for a client per attempt.
 */
import type { Clock } from '../../api/clock.js';
import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { RestClient } from '../orchclient/index.js';
import { CERT_ISSUED_INVALID } from './codes.js';
import { submitCsr, waitForCertificate } from './csr.js';
import {
  certificateFacts, createCsrPem, generateKeyPem, keyMatchesCertificate, usagesFor,
  type CertificatePair, type CertificateTemplate,
} from './pki.js';

export interface ObtainOptions {
  readonly keyPem: string;
  readonly template: CertificateTemplate;
  readonly signerName: string;
  readonly purpose: 'client auth' | 'server auth';
  /** A fixed CSR name (bootstrap); otherwise generateName `csr-`. */
  readonly name?: string;
  readonly expirationSeconds?: number;
  readonly waitTimeoutMs?: number;
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  /** The wait's timers, and the time the issued certificate must not have expired at. */
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Requests and waits for a certificate for `keyPem`; returns the pair. Throws the CSR errors of
 * csr.ts, CERT_ISSUED_INVALID for an unusable certificate, and the client's OrchErrors.
 */
export async function obtainCertificate(client: RestClient, o: ObtainOptions): Promise<CertificatePair> {
  const usages = usagesFor(o.keyPem, o.purpose);
  const csrPem = await createCsrPem(o.keyPem, o.template);
  const name = await submitCsr(client, {
    csrPem, keyPem: o.keyPem, signerName: o.signerName, usages,
    ...(o.name === undefined ? {} : { name: o.name }),
    ...(o.expirationSeconds === undefined ? {} : { expirationSeconds: o.expirationSeconds }),
  }, o.signal);
  o.logger.info('waiting for the certificate signing request to be approved and issued', { csr: name, signer: o.signerName });
  const certPem = await waitForCertificate(client, name, {
    logger: o.logger,
    clock: o.clock,
    ...(o.waitTimeoutMs === undefined ? {} : { timeoutMs: o.waitTimeoutMs }),
    ...(o.pollIntervalMs === undefined ? {} : { pollIntervalMs: o.pollIntervalMs }),
    ...(o.signal === undefined ? {} : { signal: o.signal }),
  });
  const facts = certificateFacts(certPem);
  if (!keyMatchesCertificate(certPem, o.keyPem)) {
    throw new OrchError(CERT_ISSUED_INVALID, 'invalid', `the certificate issued for ${name} is not for the key it was requested with`, { subject: name });
  }
  if (facts.notAfter.getTime() <= o.clock.now()) {
    throw new OrchError(CERT_ISSUED_INVALID, 'invalid', `the certificate issued for ${name} expired at ${facts.notAfter.toISOString()}`, { subject: name });
  }
  o.logger.info('certificate issued', { csr: name, subject: facts.commonName, notAfter: facts.notAfter.toISOString() });
  return { certPem, keyPem: o.keyPem };
}

/**
 * Gets a new pair for `template` (the current pair, when there is a usable one, is given so
 * that the caller can authenticate with it). Blocks until issued; rejects on failure or abort.
 */
export type CertificateRequester = (template: CertificateTemplate, current: CertificatePair | undefined, signal: AbortSignal) => Promise<CertificatePair>;

export interface CsrRequesterOptions {
  /** A client for one attempt (closed after it), authenticated with `current` when given. */
  readonly newClient: (current: CertificatePair | undefined) => Promise<RestClient>;
  readonly signerName: string;
  readonly purpose: 'client auth' | 'server auth';
  readonly expirationSeconds?: number;
  /** Default 15 minutes, as upstream's manager. */
  readonly waitTimeoutMs?: number;
  readonly pollIntervalMs?: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** A requester that makes a new ECDSA P-256 key per request (upstream's rotation does). */
export function createCsrRequester(o: CsrRequesterOptions): CertificateRequester {
  return async (template, current, signal) => {
    const client = await o.newClient(current);
    try {
      return await obtainCertificate(client, {
        keyPem: generateKeyPem(), template, signerName: o.signerName, purpose: o.purpose, signal, logger: o.logger, clock: o.clock,
        waitTimeoutMs: o.waitTimeoutMs ?? 15 * 60_000,
        ...(o.expirationSeconds === undefined ? {} : { expirationSeconds: o.expirationSeconds }),
        ...(o.pollIntervalMs === undefined ? {} : { pollIntervalMs: o.pollIntervalMs }),
      });
    } finally {
      client.close();
    }
  };
}
