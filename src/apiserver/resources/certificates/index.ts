/**
 * resources/certificates: certificates.orch.io/v1 CertificateSigningRequests (`csr`) with the
 * approval and status subresources, and the signing controller that issues certificates for
 * approved requests with the server's CA. Built-in signers (upstream's with kubelet ->
 * nodeagent, k8s.io -> orch.io): orch.io/kube-apiserver-client,
 * orch.io/kube-apiserver-client-nodeagent and orch.io/nodeagent-serving; requests for other
 * signers are stored and left to their signers.
 *
 * Must not: know HTTP; it reaches the store only through the registry and watch it is given.
 */
export { csrCondition, csrDefinition } from './definition.js';
export { CsrSigner, type CsrSignerOptions } from './signer.js';
export { parseCsr, type ParsedCsr, type X509Lib } from './csr.js';
export { issueCertificate, signerProblem, DEFAULT_DURATION_SECONDS, type SigningAuthority } from './sign.js';
export {
  BUILTIN_SIGNERS, KEY_USAGES, SIGNER_APISERVER_CLIENT, SIGNER_LEGACY_UNKNOWN, SIGNER_NODEAGENT_CLIENT, SIGNER_NODEAGENT_SERVING, csrSchema,
} from './schema.js';
