/**
 * The certificates.orch.io/v1 CertificateSigningRequest definition (`csr`, cluster-scoped):
 * the requester's identity is recorded on create, the spec never changes, `approval` (kubectl
 * certificate approve/deny) writes only the Approved/Denied conditions, `status` the others and
 * the certificate. Columns of kubectl get csr: NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION
 * CONDITION.
 */
import { AGE_COLUMN, humanDuration, nameOf, str, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import { rec } from '../common/index.js';
import type { X509Lib } from './csr.js';
import { csrSchema } from './schema.js';
import { checkSubjectRestriction, conditionsOf, hasCondition, isApproval, stampConditions, validateCertificate, validateConditions, validateCreate } from './validation.js';
import { formatTime } from '../../../api/time.js';

/** Pending, Approved or Denied, then Failed and Issued (upstream's printer). */
export function csrCondition(csr: WireObject): string {
  let text = hasCondition(csr, 'Denied') ? 'Denied' : hasCondition(csr, 'Approved') ? 'Approved' : 'Pending';
  if (hasCondition(csr, 'Failed')) text += ',Failed';
  if (str(rec(csr.status).certificate) !== '') text += ',Issued';
  return text;
}

function withConditions(csr: WireObject, conditions: WireObject[]): WireObject {
  const status = { ...rec(csr.status), conditions };
  if (conditions.length === 0) delete (status as { conditions?: unknown }).conditions;
  return { ...csr, status };
}

export function csrDefinition(x509: X509Lib): ResourceDefinition {
  return {
    group: 'certificates.orch.io',
    version: 'v1',
    kind: 'CertificateSigningRequest',
    listKind: 'CertificateSigningRequestList',
    plural: 'certificatesigningrequests',
    singular: 'certificatesigningrequest',
    shortNames: ['csr'],
    categories: [],
    namespaced: false,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    storage: 'certificatesigningrequests',
    schema: csrSchema,
    statusSubresource: true,
    subresources: [{
      name: 'approval',
      kind: 'CertificateSigningRequest',
      verbs: ['get', 'patch', 'update'],
      // Only the Approved/Denied conditions come from the client; the signer's stay.
      merge: (written, stored) => withConditions(stored, [...conditionsOf(written).filter(isApproval), ...conditionsOf(stored).filter((c) => !isApproval(c))]),
      fields: [['status', 'conditions']],
    }],
    fieldLabels: ['spec.signerName'],
    fields: (csr) => ({ 'spec.signerName': str(rec(csr.spec).signerName) }),
    columns: [
      AGE_COLUMN,
      { name: 'SignerName', type: 'string', description: 'The requested signer.', priority: 0, cell: (c) => str(rec(c.spec).signerName) },
      { name: 'Requestor', type: 'string', description: 'The user who made the request.', priority: 0, cell: (c) => str(rec(c.spec).username) },
      {
        name: 'RequestedDuration', type: 'string', description: 'The requested validity of the certificate.', priority: 0,
        cell: (c) => {
          const seconds = rec(c.spec).expirationSeconds;
          return typeof seconds === 'number' ? humanDuration(seconds * 1000) : '<none>';
        },
      },
      { name: 'Condition', type: 'string', description: 'Approved, Denied or Pending, Failed, Issued.', priority: 0, cell: csrCondition },
    ],
    nameColumn: true,
    nameRule: 'subdomain',
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    strategy: {
      prepareForCreate: (csr, ctx) => {
        // Who asked is the server's to say, never the client's.
        const { uid: _uid, extra: _extra, ...spec } = rec(csr.spec);
        csr.spec = { ...spec, username: ctx.user.name, ...(ctx.user.uid === '' ? {} : { uid: ctx.user.uid }), groups: [...ctx.user.groups] };
        delete csr.status;
      },
      validateCreate: (csr, errors) => {
        const parsed = validateCreate(x509, csr, errors);
        if (parsed !== undefined && errors.empty) checkSubjectRestriction(csr, parsed, nameOf(csr));
      },
      prepareForUpdate: (csr, old, ctx) => {
        if (ctx.subresource === undefined) {
          csr.spec = old.spec;
        } else if (ctx.subresource === 'status') {
          // Approval belongs to the approval subresource: its conditions stay as they were.
          Object.assign(csr, withConditions(csr, [...conditionsOf(csr).filter((c) => !isApproval(c)), ...conditionsOf(old).filter(isApproval)]));
        }
        stampConditions(csr, old, formatTime(ctx.now.getTime()));
      },
      validateUpdate: (csr, old, errors) => {
        validateConditions(csr, old, errors);
        validateCertificate(csr, old, errors);
      },
    },
  };
}
