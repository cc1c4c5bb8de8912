/**
 * server: the process edge of orch-apiserver: the command line (kube-apiserver flag names), the
 * PKI kept in --cert-dir, the admin orchconfig, and the HTTPS listener.
 *
 * Must not: route or serve requests (routing does), or open the store (the composition root
 * does).
 */
export { API_SERVER_GATES, apiServerGateEnabled, DEFAULTS, FLAGS, helpText, parseCommandLine, type ApiServerOptions, type AuthorizationMode, type CommandLine, type StorageBackend } from './flags.js';
export { ensureCa, ensureServing, issueClientCertificate, x509Library, type CertificateAuthority, type KeyPair } from './pki.js';
export { localServerUrl, renderKubeconfig, writeKubeconfig, type AdminConfig } from './kubeconfig.js';
export { startHttpsServer, type HttpsOptions, type HttpsServer } from './https.js';
export { waitForStore } from './startup.js';
