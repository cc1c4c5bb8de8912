/**
 * orchclient: the agent's client of the cluster API server, from the connection file of
 * --orchconfig (kubeconfig format). For now it reads the connection file and POSTs JSON
 * (TokenReview and SubjectAccessReview for the agent's server); node registration, leases,
 * pods and events will grow it.
 *
 * Owns: the connection file's format, TLS and credentials toward the API server, mapping
 * HTTP failures to OrchErrors (ORCHCLIENT_CONFIG_INVALID, ORCHCLIENT_REQUEST_FAILED,
 * ORCHCLIENT_TIMEOUT, ORCHCLIENT_UNAVAILABLE). Must not: cache answers or decide anything
 * with them (its callers do).
 */
export { loadOrchconfig, resolveOrchconfig, ORCHCLIENT_CONFIG_INVALID, type OrchConnection } from './kubeconfig.js';
export {
  createOrchClient, ORCHCLIENT_REQUEST_FAILED, ORCHCLIENT_TIMEOUT, ORCHCLIENT_UNAVAILABLE,
  type OrchClient, type OrchClientOptions, type RequestOptions,
} from './client.js';
export {
  createSubjectAccessReview, createTokenReview,
  SUBJECT_ACCESS_REVIEW_API_VERSION, SUBJECT_ACCESS_REVIEW_PATH, TOKEN_REVIEW_API_VERSION, TOKEN_REVIEW_PATH,
  type NonResourceAttributes, type ResourceAttributes, type ReviewedUser, type SubjectAccessReviewSpec,
  type SubjectAccessReviewStatus, type TokenReviewStatus,
} from './reviews.js';
