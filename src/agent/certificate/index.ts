/**
 * certificate: the agent's TLS bootstrap and certificate rotation (upstream's kubelet
 * pkg/kubelet/certificate and client-go util/certificate).
 *
 * Owns: the key and certificate files in --cert-dir (nodeagent-client-*.pem,
 * nodeagent-server-*.pem, their -current links, nodeagent-client.key.tmp), the --orchconfig
 * file written after bootstrap, certificates.orch.io/v1 CertificateSigningRequests made by the
 * agent and the wait for their approval, and when certificates are renewed (70..90 % of their
 * validity, jittered). Errors: CERT_CSR_DENIED, CERT_CSR_FAILED, CERT_CSR_TIMEOUT,
 * CERT_CSR_CONFLICT, CERT_ISSUED_INVALID, CERT_STORE_INVALID, CERT_ORCHCONFIG_WRITE,
 * CERT_BOOTSTRAP_CONFIG_MISSING, CERT_CANCELLED.
 *
 * Must not: approve requests (approval belongs to the cluster), build HTTP transports (it is
 * given a RestClient factory) or serve TLS (the agent's server asks current() of the serving
 * manager, or is told by onRotated).
 */
export {
  bootstrapClientCertificate, digestedCsrName, isOrchconfigStillValid, nodeTemplate, orchconfigFor, writeOrchconfig,
  CLIENT_PREFIX, SIGNER_NODEAGENT_CLIENT, TMP_KEY_FILE, type BootstrapOptions,
} from './bootstrap.js';
export {
  CERT_BOOTSTRAP_CONFIG_MISSING, CERT_CANCELLED, CERT_CSR_CONFLICT, CERT_CSR_DENIED, CERT_CSR_FAILED, CERT_CSR_TIMEOUT,
  CERT_ISSUED_INVALID, CERT_ORCHCONFIG_WRITE, CERT_STORE_INVALID,
} from './codes.js';
export { CSR_PATH, issuedCertificate, submitCsr, waitForCertificate, type CsrSubmission, type WaitOptions } from './csr.js';
export { createCertificateManager, type CertificateManager, type CertificateManagerOptions } from './manager.js';
export {
  createClientCertificateManager, createServingCertificateManager, servingTemplate, withClientCertificate,
  SERVER_PREFIX, SIGNER_NODEAGENT_SERVING,
  type ClientManagerOptions, type ManagerTuning, type NodeAddress, type ServingManagerOptions,
} from './managers.js';
export { certificateFacts, splitPem, type CertificateFacts, type CertificatePair, type CertificateTemplate } from './pki.js';
export { createCsrRequester, obtainCertificate, type CertificateRequester, type CsrRequesterOptions, type ObtainOptions } from './request.js';
export { backoffDelay, rotationDeadline } from './schedule.js';
export { createFileStore, MemoryStore, type CertificateStore, type FileStoreOptions } from './store.js';
