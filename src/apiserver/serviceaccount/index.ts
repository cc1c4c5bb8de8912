/**
 * serviceaccount: the service account tokens of orch-apiserver (upstream's TokenRequest API and
 * service account token authenticator). It owns the signing and verifying keys
 * (--service-account-signing-key-file, --service-account-key-file, or a key made once under
 * --data-dir), issuing bound tokens (JWTs signed with jose: issuer, subject, audiences, expiry,
 * and the service account, pod or secret they are bound to) through the serviceaccounts/token
 * subresource, and authenticating them: signature, issuer, times, audiences (--api-audiences or
 * a TokenReview's), and the service account and bound object still being there with their UIDs.
 *
 * Must not: authorize, know HTTP beyond the token subresource's connector, or write objects;
 * the pods' token volumes are the ServiceAccount admission's (../admission) and the node
 * agents' business.
 */
export { APISERVER_SERVICE_ACCOUNT_KEY_INVALID, GENERATED_KEY_FILE, keyId, loadServiceAccountKeys, type KeyFiles, type ServiceAccountKeys } from './keys.js';
export { LEEWAY_SECONDS, PRIVATE_CLAIM, TokenIssuer, type IssueRequest, type TokenSubject, type VerifiedToken, type VerifyResult } from './tokens.js';
export {
  createServiceAccountAuthenticator, serviceAccountUserName, EXTRA_CREDENTIAL_ID, EXTRA_POD_NAME, EXTRA_POD_UID, SERVICE_ACCOUNTS_GROUP,
  type ObjectLookup, type ServiceAccountAuthenticator, type ServiceAccountAuthResult, type ServiceAccountUser,
} from './authenticator.js';
export {
  answerTokenRequest, tokenRequestConnector, tokenRequestSchema, DEFAULT_EXPIRATION_SECONDS, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
  TOKEN_REQUEST_VERSIONS, type TokenRequestOptions,
} from './token-request.js';
export { serviceAccountTokens, type ServiceAccountTokens, type ServiceAccountTokensOptions } from './setup.js';
