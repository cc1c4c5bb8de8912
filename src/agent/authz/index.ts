/**
 * authz: may an authenticated user do this request on the agent? authorization.mode
 * AlwaysAllow, or Webhook (SubjectAccessReview through the API server, answers cached
 * cacheAuthorizedTTL / cacheUnauthorizedTTL). Requests map to attributes on the node object
 * as upstream maps them (attributes.ts), and the 403 and 500 bodies are upstream's words.
 *
 * Must not: authenticate (authn), or talk HTTP itself (the review function is injected;
 * orchclient implements it).
 */
import type { Authorizer } from './types.js';

export {
  authorizationErrorMessage, forbiddenMessage, isSubpath, nodeRequestAttributes, subresourceOf, verbOf,
  type NodeRequestAttributes,
} from './attributes.js';
export { createWebhookAuthorizer, reviewSpec, type WebhookAuthorizer, type WebhookAuthorizerOptions } from './webhook.js';
export type { Authorizer, Decision } from './types.js';

/** authorization.mode AlwaysAllow. */
export function alwaysAllow(): Authorizer {
  return { authorize: () => Promise.resolve({ allowed: true, reason: 'AlwaysAllow' }) };
}
