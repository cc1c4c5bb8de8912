/**
 * The signing controller inside the server: watches CertificateSigningRequests and, for each
 * one that is Approved (not Denied, not Failed, no certificate yet) with a built-in signer,
 * checks the signer's rules and either issues the certificate with the server's CA (status
 * subresource, the request's resourceVersion as precondition) or sets the Failed condition
 * (reason SignerValidationFailure). A conflicting write is retried on the next change; a
 * broken watch is re-established from a fresh list.
 */
import { formatTime } from '../../../api/time.js';
import { messageOf } from '../../../api/errors.js';
import { metaOf, nameOf, str, type ResourceRegistry, type StrategyContext, type WireObject } from '../../registry/index.js';
import type { Store, Watch } from '../../storage/index.js';
import { StatusError } from '../../status/index.js';
import { rec, strings } from '../common/index.js';
import { parseCsr, type X509Lib } from './csr.js';
import { BUILTIN_SIGNERS } from './schema.js';
import { issueCertificate, signerProblem, type SigningAuthority } from './sign.js';
import { conditionsOf, hasCondition, pemOf } from './validation.js';

const SIGNER: StrategyContext['user'] = { name: 'system:orch-apiserver:csr-signer', uid: '', groups: ['system:masters'] };
/** Upstream's signer runs in kube-controller-manager, whose writes carry its name. */
const SIGNER_FIELD_MANAGER = 'orch-controller-manager';

export interface CsrSignerOptions {
  readonly store: Store;
  /** The certificates.orch.io registry (status writes go through its validation). */
  readonly registry: ResourceRegistry;
  readonly x509: X509Lib;
  readonly ca: SigningAuthority;
  readonly log: (message: string) => void;
  readonly now?: () => Date;
  /** Pause before re-establishing a failed watch (default 1 s). */
  readonly retryMs?: number;
}

export class CsrSigner {
  private readonly options: CsrSignerOptions;
  private readonly inFlight = new Set<string>();
  private watch: Watch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: CsrSignerOptions) {
    this.options = options;
  }

  /** Signs what is waiting and starts watching. Throws store errors. */
  async start(): Promise<void> {
    const prefix = this.options.registry.prefix('');
    const list = await this.options.store.list(prefix);
    for (const csr of list.items) this.consider(csr);
    this.watch = await this.options.store.watch(prefix, {
      resourceVersion: list.resourceVersion,
      onEvent: (event) => {
        if (event.type === 'ADDED' || event.type === 'MODIFIED') this.consider(event.object);
        if (event.type !== 'ERROR') return;
        this.options.log(`csr signer: the watch failed (re-listing): ${event.error.message}`);
        this.restart();
      },
    });
  }

  /** Stops watching; requests being signed finish. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.watch?.close();
  }

  private restart(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.start().catch((err: unknown) => {
        this.options.log(`csr signer: re-listing failed (will retry): ${messageOf(err)}`);
        this.restart();
      });
    }, this.options.retryMs ?? 1000);
    this.timer.unref();
  }

  private consider(stored: WireObject): void {
    const csr = this.options.registry.present(stored);
    const uid = str(metaOf(csr).uid);
    const signer = str(rec(csr.spec).signerName);
    if (this.closed || this.inFlight.has(uid) || !BUILTIN_SIGNERS.includes(signer)) return;
    if (!hasCondition(csr, 'Approved') || hasCondition(csr, 'Denied') || hasCondition(csr, 'Failed')) return;
    if (str(rec(csr.status).certificate) !== '' || str(metaOf(csr).deletionTimestamp) !== '') return;
    this.inFlight.add(uid);
    this.sign(csr, signer).catch((err: unknown) => {
      this.options.log(`csr signer: signing ${nameOf(csr)} failed (will retry on its next change): ${messageOf(err)}`);
    }).finally(() => {
      this.inFlight.delete(uid);
    });
  }

  private async sign(csr: WireObject, signer: string): Promise<void> {
    const spec = rec(csr.spec);
    const usages = strings(spec.usages);
    let problem: string | undefined;
    let certificate = '';
    try {
      const parsed = parseCsr(this.options.x509, pemOf(spec.request));
      problem = signerProblem(signer, parsed, usages);
      if (problem === undefined) {
        const expiration = spec.expirationSeconds;
        certificate = await issueCertificate(this.options.x509, this.options.ca, parsed, {
          signer, usages, expirationSeconds: typeof expiration === 'number' ? expiration : undefined, now: this.now(),
        });
      }
    } catch (err) {
      problem = `the request cannot be signed: ${messageOf(err)}`;
    }
    const status = rec(csr.status);
    const next: WireObject = problem === undefined
      ? { ...csr, status: { ...status, certificate: Buffer.from(certificate, 'utf8').toString('base64') } }
      : {
        ...csr,
        status: {
          ...status,
          conditions: [...conditionsOf(csr), {
            type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem,
            lastUpdateTime: formatTime(this.now().getTime()), lastTransitionTime: formatTime(this.now().getTime()),
          }],
        },
      };
    try {
      await this.options.registry.update({ user: SIGNER, now: this.now() }, '', nameOf(csr), next, { dryRun: false, subresource: 'status', fieldManager: SIGNER_FIELD_MANAGER });
      this.options.log(problem === undefined ? `csr signer: issued a certificate for ${nameOf(csr)} (${signer})` : `csr signer: refused ${nameOf(csr)}: ${problem}`);
    } catch (err) {
      // Changed or deleted meanwhile: the watch brings the new state, which is considered again.
      if (err instanceof StatusError && (err.httpCode === 409 || err.httpCode === 404)) return;
      throw err;
    }
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }
}
