/**
 * Webhook authorization: a SubjectAccessReview per distinct (user, attributes), answered by
 * the API server. Allowed answers are cached cacheAuthorizedTTL, denied ones
 * cacheUnauthorizedTTL (as upstream); a failed review is an error and is not cached.
 * Concurrent identical questions share one review.
 */
import type { Clock } from '../../api/clock.js';
import type { SubjectAccessReviewSpec, SubjectAccessReviewStatus } from '../orchclient/index.js';
import type { NodeRequestAttributes } from './attributes.js';
import type { Authorizer, Decision } from './types.js';

export interface WebhookAuthorizerOptions {
  /** Asks the API server (orchclient's createSubjectAccessReview). */
  review(spec: SubjectAccessReviewSpec): Promise<SubjectAccessReviewStatus>;
  readonly authorizedTtlMs: number;
  readonly unauthorizedTtlMs: number;
  /** The cache's expiry times. */
  readonly clock: Pick<Clock, 'now'>;
  /** Most answers kept (oldest dropped first); default 8192. */
  readonly maxEntries?: number;
}

/** The SubjectAccessReview spec of a request (empty fields left out, as upstream's JSON omits them). */
export function reviewSpec(a: NodeRequestAttributes): SubjectAccessReviewSpec {
  const resourceAttributes = Object.fromEntries(Object.entries({
    namespace: a.namespace, verb: a.verb, group: a.apiGroup, version: a.apiVersion,
    resource: a.resource, subresource: a.subresource, name: a.name,
  }).filter(([, v]) => v !== ''));
  return {
    resourceAttributes,
    user: a.user.name,
    groups: a.user.groups,
    ...(a.user.uid === '' ? {} : { uid: a.user.uid }),
    ...(Object.keys(a.user.extra).length === 0 ? {} : { extra: a.user.extra }),
  };
}

export interface WebhookAuthorizer extends Authorizer {
  /** Review calls made so far. */
  reviews(): number;
}

export function createWebhookAuthorizer(options: WebhookAuthorizerOptions): WebhookAuthorizer {
  const now = (): number => options.clock.now();
  const max = options.maxEntries ?? 8192;
  const cache = new Map<string, { decision: Decision; expires: number }>();
  const inFlight = new Map<string, Promise<Decision>>();
  let calls = 0;

  async function review(key: string, spec: SubjectAccessReviewSpec): Promise<Decision> {
    calls++;
    const status = await options.review(spec);
    const decision: Decision = status.allowed
      ? { allowed: true, reason: status.reason ?? '' }
      : { allowed: false, reason: status.reason ?? '' };
    cache.delete(key);
    cache.set(key, { decision, expires: now() + (decision.allowed ? options.authorizedTtlMs : options.unauthorizedTtlMs) });
    while (cache.size > max) {
      const oldest = cache.keys().next();
      if (oldest.done === true) break;
      cache.delete(oldest.value);
    }
    return decision;
  }

  return {
    authorize(attributes) {
      const spec = reviewSpec(attributes);
      const key = JSON.stringify(spec);
      const hit = cache.get(key);
      if (hit !== undefined && hit.expires > now()) return Promise.resolve(hit.decision);
      let pending = inFlight.get(key);
      if (pending === undefined) {
        pending = review(key, spec).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
    reviews: () => calls,
  };
}
