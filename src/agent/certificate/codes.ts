/**
 * The error codes of the certificate module (registered in src/api/error-codes.ts by its owner).
 */

/** A CertificateSigningRequest was denied by an approver (the CSR's name is the subject). */
export const CERT_CSR_DENIED = 'CERT_CSR_DENIED';
/** The signer set the Failed condition on a CertificateSigningRequest. */
export const CERT_CSR_FAILED = 'CERT_CSR_FAILED';
/** No certificate was issued before the deadline (the CSR may still be approved later). */
export const CERT_CSR_TIMEOUT = 'CERT_CSR_TIMEOUT';
/** A CSR of the same name exists but was made for another key, subject, signer or usages. */
export const CERT_CSR_CONFLICT = 'CERT_CSR_CONFLICT';
/** The issued certificate is unusable: not PEM, not for our key, or already expired. */
export const CERT_ISSUED_INVALID = 'CERT_ISSUED_INVALID';
/** A key or certificate file in --cert-dir cannot be read, parsed or written. */
export const CERT_STORE_INVALID = 'CERT_STORE_INVALID';
/** The --orchconfig file written after bootstrap cannot be written. */
export const CERT_ORCHCONFIG_WRITE = 'CERT_ORCHCONFIG_WRITE';
/** Bootstrap was needed but no --bootstrap-orchconfig was given. */
export const CERT_BOOTSTRAP_CONFIG_MISSING = 'CERT_BOOTSTRAP_CONFIG_MISSING';
/** A wait for a certificate was cancelled (stop() or the caller's signal). */
export const CERT_CANCELLED = 'CERT_CANCELLED';
