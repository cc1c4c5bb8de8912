/**
 * certificates.orch.io/v1 CertificateSigningRequests from the agent's side (upstream's
 * client-go util/certificate/csr): create one for a PEM request (a fixed name, or a generated
 * one), accept an existing request of the same name only when it was made for the same key,
 * signer and usages, and wait until it is Approved and has a certificate (a watch on the one
 * object, and a GET every poll interval in case the watch breaks). Denied or Failed requests and
 * the deadline end the wait with an OrchError naming the request.
 */
import { OrchError, isAlreadyExists, isConflict, isNotFound, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { RestClient, WatchHandle } from '../orchclient/index.js';
import { CERT_CANCELLED, CERT_CSR_CONFLICT, CERT_CSR_DENIED, CERT_CSR_FAILED, CERT_CSR_TIMEOUT } from './codes.js';
import { csrPublicKey, keyPublicKey } from './pki.js';
import type { Clock } from '../../api/clock.js';
import { MAX_TIMER_MS } from './schedule.js';
import { quoteValue } from '../../api/quote.js';

export const CSR_API_VERSION = 'certificates.orch.io/v1';
export const CSR_PATH = '/apis/certificates.orch.io/v1/certificatesigningrequests';

type Obj = Record<string, unknown>;

export interface CsrSubmission {
  /** The PEM PKCS#10 request. */
  readonly csrPem: string;
  /** Its private key (to recognise an existing request of the same name as ours). */
  readonly keyPem: string;
  readonly signerName: string;
  readonly usages: readonly string[];
  /** A fixed name (bootstrap derives it from the key); otherwise generateName is used. */
  readonly name?: string;
  /** Default `csr-`. */
  readonly generateName?: string;
  readonly expirationSeconds?: number;
}

const rec = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Obj : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const nameOf = (csr: Obj): string => text(rec(csr.metadata).name);

/** The CSR body that `submission` describes. */
export function csrBody(s: CsrSubmission): Obj {
  return {
    apiVersion: CSR_API_VERSION,
    kind: 'CertificateSigningRequest',
    metadata: s.name === undefined ? { generateName: s.generateName ?? 'csr-' } : { name: s.name },
    spec: {
      request: Buffer.from(s.csrPem, 'utf8').toString('base64'),
      signerName: s.signerName,
      usages: [...s.usages],
      ...(s.expirationSeconds === undefined ? {} : { expirationSeconds: s.expirationSeconds }),
    },
  };
}

/** Why an existing request cannot stand for ours (upstream's ensureCompatible), or undefined. */
async function incompatibility(existing: Obj, s: CsrSubmission): Promise<string | undefined> {
  const spec = rec(existing.spec);
  if (text(spec.signerName) !== s.signerName) return `it asks signer ${text(spec.signerName)}, not ${s.signerName}`;
  const usages = Array.isArray(spec.usages) ? spec.usages.map(text) : [];
  if (usages.length !== s.usages.length || !s.usages.every((u) => usages.includes(u))) return `its usages are [${usages.join(', ')}]`;
  try {
    const pem = Buffer.from(text(spec.request), 'base64').toString('utf8');
    if (await csrPublicKey(pem) !== keyPublicKey(s.keyPem)) return 'it was made for another key';
  } catch (err) {
    return `its request does not parse: ${messageOf(err)}`;
  }
  return undefined;
}

/**
 * Creates the request; returns its name. With a fixed name that exists already, the existing
 * request is used when it was made for the same key, signer and usages (a restart resumes the
 * wait) and CERT_CSR_CONFLICT is thrown otherwise. Other failures are the client's OrchErrors.
 */
export async function submitCsr(client: RestClient, s: CsrSubmission, signal?: AbortSignal): Promise<string> {
  const options = signal === undefined ? {} : { signal };
  try {
    return nameOf(await client.create<Obj>(CSR_PATH, csrBody(s), options));
  } catch (err) {
    if (s.name === undefined || !(isAlreadyExists(err) || isConflict(err))) throw err;
    const existing = await client.get<Obj>(`${CSR_PATH}/${s.name}`, options);
    const problem = await incompatibility(existing, s);
    if (problem !== undefined) {
      throw new OrchError(CERT_CSR_CONFLICT, 'conflict', `certificate signing request ${s.name} exists and does not match ours: ${problem}`, { subject: s.name, cause: err });
    }
    return s.name;
  }
}

/**
 * The issued certificate (PEM) of `csr` once it is Approved and has one; undefined while it
 * waits. Throws CERT_CSR_DENIED or CERT_CSR_FAILED (with the condition's reason and message).
 */
export function issuedCertificate(csr: Obj): string | undefined {
  const name = nameOf(csr);
  const status = rec(csr.status);
  const conditions = Array.isArray(status.conditions) ? status.conditions.map(rec) : [];
  const find = (type: string): Obj | undefined => conditions.find((c) => c.type === type && (c.status === undefined || c.status === 'True'));
  const detail = (c: Obj): string => `reason ${quoteValue(text(c.reason))}, message ${quoteValue(text(c.message))}`;
  const denied = find('Denied');
  if (denied !== undefined) throw new OrchError(CERT_CSR_DENIED, 'forbidden', `certificate signing request ${name} was denied: ${detail(denied)}`, { subject: name });
  const failed = find('Failed');
  if (failed !== undefined) throw new OrchError(CERT_CSR_FAILED, 'invalid', `certificate signing request ${name} failed: ${detail(failed)}`, { subject: name });
  const certificate = text(status.certificate);
  if (find('Approved') === undefined || certificate === '') return undefined;
  return Buffer.from(certificate, 'base64').toString('utf8');
}

export interface WaitOptions {
  /** Default 15 minutes (upstream's certificate manager; bootstrap passes one hour). */
  readonly timeoutMs?: number;
  /** GET the request this often besides watching it (default 2 s). */
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  /** The deadline and the polls (timers that keep the process alive while it waits). */
  readonly clock: Clock;
  readonly logger?: Logger;
}

/**
 * Waits for the certificate of the request `name` and returns it (PEM). Blocks until issued,
 * denied, failed, deleted, the deadline (CERT_CSR_TIMEOUT) or the signal (CERT_CANCELLED).
 * Errors of single GETs and broken watches are logged and retried.
 */
export function waitForCertificate(client: RestClient, name: string, options: WaitOptions): Promise<string> {
  const { clock } = options;
  const timeoutMs = options.timeoutMs ?? 15 * 60_000;
  const pollMs = options.pollIntervalMs ?? 2000;
  const signal = options.signal;
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    let watch: WatchHandle | undefined;
    const cancels = new Set<() => void>();
    const later = (ms: number, fn: () => void): void => {
      const timer = clock.setTimer(Math.min(MAX_TIMER_MS, ms), () => {
        cancels.delete(cancel);
        fn();
      }, { keepAlive: true });
      const cancel = (): void => {
        timer.cancel();
      };
      cancels.add(cancel);
    };
    const finish = (err: unknown, cert?: string): void => {
      if (settled) return;
      settled = true;
      for (const cancel of cancels) cancel();
      cancels.clear();
      watch?.stop();
      signal?.removeEventListener('abort', onAbort);
      if (cert !== undefined) resolve(cert);
      else reject(err instanceof Error ? err : new Error(String(err)));
    };
    const consider = (csr: Obj): void => {
      try {
        const cert = issuedCertificate(csr);
        if (cert !== undefined) finish(undefined, cert);
      } catch (err) {
        finish(err);
      }
    };
    const poll = (): void => {
      if (settled) return;
      client.get<Obj>(`${CSR_PATH}/${name}`, signal === undefined ? {} : { signal }).then(consider, (err: unknown) => {
        if (isNotFound(err)) finish(new OrchError(CERT_CSR_FAILED, 'not-found', `certificate signing request ${name} was deleted before a certificate was issued`, { subject: name, cause: err }));
        else options.logger?.v(2, 'reading the certificate signing request failed; retrying', { csr: name, err: messageOf(err) });
      }).finally(() => {
        if (!settled) later(pollMs, poll);
      });
    };
    const openWatch = (): void => {
      if (settled) return;
      try {
        watch = client.watch<Obj>(CSR_PATH, (event) => {
          if (event.type === 'ADDED' || event.type === 'MODIFIED') consider(event.object);
        }, { query: { fieldSelector: `metadata.name=${name}` }, ...(signal === undefined ? {} : { signal }) });
      } catch (err) {
        options.logger?.v(2, 'watching the certificate signing request failed; polling', { csr: name, err: messageOf(err) });
        later(pollMs, openWatch);
        return;
      }
      void watch.done.then(() => {
        if (!settled) later(pollMs, openWatch);
      });
    };
    const onAbort = (): void => {
      finish(new OrchError(CERT_CANCELLED, 'unavailable', `waiting for certificate signing request ${name} was cancelled`, { subject: name }));
    };
    if (signal?.aborted === true) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    later(timeoutMs, () => {
      finish(new OrchError(CERT_CSR_TIMEOUT, 'timeout', `no certificate was issued for certificate signing request ${name} within ${Math.round(timeoutMs / 1000)} s (is it approved?)`, { subject: name }));
    });
    openWatch();
    poll();
  });
}
