/**
 * Validation of CertificateSigningRequests, as upstream's: on create the request must be a
 * PEM CERTIFICATE REQUEST whose signature verifies, the signer name a `domain/path`, usages known
 * and unique, expirationSeconds at least 600; the kube-apiserver-client signer refuses the group
 * system:masters (upstream's CertificateSubjectRestriction admission, 403). On update: the spec
 * never changes; conditions have a type and a True/False/Unknown status, Approved and Denied are
 * exclusive, only True, and cannot be removed; the certificate is PEM, needs an Approved request
 * and is set once.
 */
import { X509Certificate } from 'node:crypto';
import { validateDNS1123Subdomain } from '../../../api/labels.js';
import { str, type WireObject } from '../../registry/index.js';
import { forbidden, type FieldErrors } from '../../status/index.js';
import { rec, recs, strings, type Obj } from '../common/index.js';
import { parseCsr, type ParsedCsr, type X509Lib } from './csr.js';
import { CONDITION_TYPES, KEY_USAGES, SIGNER_APISERVER_CLIENT, SIGNER_LEGACY_UNKNOWN } from './schema.js';

export const MIN_EXPIRATION_SECONDS = 600;
const STATUSES = ['True', 'False', 'Unknown'];

/** The PEM text of a `format: byte` field (base64 in JSON). */
export function pemOf(field: unknown): string {
  return typeof field === 'string' ? Buffer.from(field, 'base64').toString('utf8') : '';
}

function validateSignerName(errors: FieldErrors, name: string): void {
  if (name === '') {
    errors.required('spec.signerName');
    return;
  }
  const [domain = '', ...path] = name.split('/');
  if (path.length === 0 || path.join('/') === '') {
    errors.invalid('spec.signerName', name, "must be a fully qualified domain and path of the form 'example.com/signer-name'");
    return;
  }
  errors.invalidEach('spec.signerName', name, validateDNS1123Subdomain(domain).map((p) => `the domain ${p}`));
  if (name.length > 571) errors.tooLong('spec.signerName', 571);
  if (name === SIGNER_LEGACY_UNKNOWN) errors.invalid('spec.signerName', name, 'the legacy signerName is not allowed via this API version');
}

/** Create: returns the parsed request when it is valid (for the subject restriction). */
export function validateCreate(lib: X509Lib, csr: WireObject, errors: FieldErrors): ParsedCsr | undefined {
  const spec = rec(csr.spec);
  let parsed: ParsedCsr | undefined;
  if (str(spec.request) === '') {
    errors.required('spec.request');
  } else {
    try {
      parsed = parseCsr(lib, pemOf(spec.request));
    } catch (err) {
      errors.invalid('spec.request', '<request>', err instanceof Error ? err.message : String(err));
    }
  }
  validateSignerName(errors, str(spec.signerName));
  const usages = strings(spec.usages);
  if (usages.length === 0) errors.required('spec.usages');
  const seen = new Set<string>();
  usages.forEach((u, i) => {
    if (!KEY_USAGES.includes(u)) errors.notSupported(`spec.usages[${i}]`, u, KEY_USAGES);
    if (seen.has(u)) errors.duplicate(`spec.usages[${i}]`, u);
    seen.add(u);
  });
  const expiration = spec.expirationSeconds;
  if (typeof expiration === 'number' && expiration < MIN_EXPIRATION_SECONDS) {
    errors.invalid('spec.expirationSeconds', expiration, `may not specify a duration less than ${MIN_EXPIRATION_SECONDS} seconds (10 minutes)`);
  }
  return parsed;
}

/** 403 for a kube-apiserver-client request that asks for system:masters. */
export function checkSubjectRestriction(csr: WireObject, parsed: ParsedCsr, name: string): void {
  if (str(rec(csr.spec).signerName) !== SIGNER_APISERVER_CLIENT || !parsed.organizations.includes('system:masters')) return;
  throw forbidden({ group: 'certificates.orch.io', resource: 'certificatesigningrequests' }, name, `use of ${SIGNER_APISERVER_CLIENT} signer with system:masters group is not allowed`);
}

export const conditionsOf = (csr: WireObject): Obj[] => recs(rec(csr.status).conditions);
export const isApproval = (c: Obj): boolean => c.type === 'Approved' || c.type === 'Denied';
export const hasCondition = (csr: WireObject, type: string): boolean => conditionsOf(csr).some((c) => c.type === type && c.status === 'True');

/** Sets lastUpdateTime on new or changed conditions and lastTransitionTime when the status changed. */
export function stampConditions(csr: WireObject, old: WireObject, now: string): void {
  const before = conditionsOf(old);
  for (const c of conditionsOf(csr)) {
    if (str(c.status) === '') c.status = 'True';
    const prior = before.find((b) => b.type === c.type);
    if (str(c.lastUpdateTime) === '' && (prior === undefined || prior.status !== c.status || prior.reason !== c.reason || prior.message !== c.message)) c.lastUpdateTime = now;
    if (str(c.lastTransitionTime) === '') c.lastTransitionTime = prior !== undefined && prior.status === c.status && str(prior.lastTransitionTime) !== '' ? prior.lastTransitionTime : now;
  }
}

export function validateConditions(csr: WireObject, old: WireObject, errors: FieldErrors): void {
  const conditions = conditionsOf(csr);
  const types = new Set<string>();
  conditions.forEach((c, i) => {
    const type = str(c.type);
    if (type === '') errors.required(`status.conditions[${i}].type`);
    if (types.has(type) && CONDITION_TYPES.includes(type)) errors.duplicate(`status.conditions[${i}].type`, type);
    types.add(type);
    const status = str(c.status);
    if (isApproval(c) && status !== 'True') errors.notSupported(`status.conditions[${i}].status`, status, ['True']);
    else if (!STATUSES.includes(status)) errors.notSupported(`status.conditions[${i}].status`, status, STATUSES);
  });
  if (types.has('Approved') && types.has('Denied')) errors.invalid('status.conditions', 'Approved,Denied', 'Approved and Denied conditions are mutually exclusive');
  for (const type of CONDITION_TYPES) {
    if (conditionsOf(old).some((c) => c.type === type) && !types.has(type)) errors.forbidden('status.conditions', `updates may not remove a condition of type "${type}"`);
  }
}

export function validateCertificate(csr: WireObject, old: WireObject, errors: FieldErrors): void {
  const cert = str(rec(csr.status).certificate);
  const before = str(rec(old.status).certificate);
  if (before !== '' && cert !== before) {
    errors.forbidden('status.certificate', 'updates may not modify existing certificate content');
    return;
  }
  if (cert === '' || cert === before) return;
  if (!hasCondition(csr, 'Approved')) errors.forbidden('status.certificate', 'certificate issuance requires an Approved condition');
  if (hasCondition(csr, 'Failed')) errors.forbidden('status.certificate', 'certificate issuance is not allowed once the Failed condition is set');
  const blocks = pemOf(cert).match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) errors.invalid('status.certificate', '<certificate data>', 'must contain at least one CERTIFICATE PEM block');
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      errors.invalid('status.certificate', '<certificate data>', `must contain valid certificates: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
