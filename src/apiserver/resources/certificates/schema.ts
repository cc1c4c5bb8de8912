/**
 * The wire schema of certificates.orch.io/v1 CertificateSigningRequest (upstream's
 * certificates.k8s.io/v1 shape), and the names of its signers, usages and conditions.
 */
import { array, int32, object, objectMeta, str, time, type ObjectSchema } from '../../schema/index.js';

/** The signers this server signs for (upstream's kubernetes.io/... with kubelet -> nodeagent, kube stays in kube-apiserver). */
export const SIGNER_APISERVER_CLIENT = 'orch.io/kube-apiserver-client';
export const SIGNER_NODEAGENT_CLIENT = 'orch.io/kube-apiserver-client-nodeagent';
export const SIGNER_NODEAGENT_SERVING = 'orch.io/nodeagent-serving';
export const SIGNER_LEGACY_UNKNOWN = 'orch.io/legacy-unknown';
export const BUILTIN_SIGNERS = [SIGNER_APISERVER_CLIENT, SIGNER_NODEAGENT_CLIENT, SIGNER_NODEAGENT_SERVING];

/** Upstream's KeyUsage values (x509 key usages and extended key usages). */
export const KEY_USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign',
  'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system',
  'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
];

export const CONDITION_TYPES = ['Approved', 'Denied', 'Failed'];

const condition = object(
  {
    type: str('Approved, Denied or Failed (other types are kept).'),
    status: str('True, False or Unknown; Approved and Denied only True.'),
    reason: str('A brief reason for the request state.'),
    message: str('Human-readable details about the request state.'),
    lastUpdateTime: time('When this condition was last updated.'),
    lastTransitionTime: time('When the condition last changed status.'),
  },
  { name: 'io.orch.api.certificates.v1.CertificateSigningRequestCondition', required: ['type', 'status'] },
);

export const csrSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: CertificateSigningRequest.'),
    apiVersion: str('Versioned schema of the object: certificates.orch.io/v1.'),
    metadata: objectMeta,
    spec: object(
      {
        request: str('A PEM-encoded PKCS#10 CERTIFICATE REQUEST (base64 in JSON).', { format: 'byte' }),
        signerName: str('The requested signer: orch.io/kube-apiserver-client, orch.io/kube-apiserver-client-nodeagent, orch.io/nodeagent-serving, or another signer\'s name.'),
        expirationSeconds: int32('The requested validity of the certificate, at least 600.'),
        usages: array(str(), { description: 'Key usages requested in the certificate (digital signature, key encipherment, client auth, server auth...).' }),
        username: str('The requesting user (set by the server).'),
        uid: str('The uid of the requesting user (set by the server).'),
        groups: array(str(), { description: 'The groups of the requesting user (set by the server).' }),
        extra: { type: 'map', values: array(str()), description: 'Extra attributes of the requesting user (set by the server).' },
      },
      { name: 'io.orch.api.certificates.v1.CertificateSigningRequestSpec', required: ['request', 'signerName'] },
    ),
    status: object(
      {
        conditions: array(condition, { listType: 'map', listMapKeys: ['type'], description: 'Approved or Denied (approval subresource), Failed (signer).' }),
        certificate: str('The issued certificate, PEM (base64 in JSON); set once, through the status subresource.', { format: 'byte' }),
      },
      { name: 'io.orch.api.certificates.v1.CertificateSigningRequestStatus' },
    ),
  },
  {
    name: 'io.orch.api.certificates.v1.CertificateSigningRequest',
    gvk: [{ group: 'certificates.orch.io', version: 'v1', kind: 'CertificateSigningRequest' }],
    description: 'CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by submitting a certificate signing request, and having it asynchronously approved and issued.',
  },
);
