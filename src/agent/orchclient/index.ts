/**
 * orchclient: the agent's client of the cluster API server, from the connection file of
 * --orchconfig (kubeconfig format): the JSON POST client of the review APIs (createOrchClient),
 * the full REST client the node controllers use (createRestClient: get, list, create, update,
 * patch, delete, watch; orchAPIQPS/orchAPIBurst token bucket with exempt calls; JSON always:
 * the protobuf contentTypes are served by it silently, other types with one warning), and the list-and-watch loop (createReflector:
 * resume from the last resourceVersion, re-list on 410, back-off while the server is down).
 *
 * Owns: the connection file's format, TLS and credentials toward the API server, the rate limit
 * of API calls, watch stream decoding, mapping HTTP failures to OrchErrors that keep the Status
 * (OrchApiError, statusOf; codes ORCHCLIENT_CONFIG_INVALID, ORCHCLIENT_REQUEST_FAILED,
 * ORCHCLIENT_TIMEOUT, ORCHCLIENT_UNAVAILABLE, ORCHCLIENT_ABORTED, ORCHCLIENT_OPTIONS_INVALID,
 * ORCHCLIENT_WATCH_DECODE_FAILED). Must not: cache objects or decide anything with them (its
 * callers and the reflector's consumers do), know resource kinds beyond the review APIs, or
 * retry writes that may have been applied.
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
export type { ObjectList, PatchType, RestCallOptions, RestClient, WatchEvent, WatchHandle } from './rest-types.js';
export {
  createRestClient, withQuery, DEFAULT_BURST, DEFAULT_CONTENT_TYPE, DEFAULT_QPS, PATCH_CONTENT_TYPES, type RestClientOptions,
} from './rest.js';
export { createRateLimiter, ORCHCLIENT_OPTIONS_INVALID, type RateLimiter, type RateLimiterOptions } from './rate-limit.js';
export {
  decodeStatus, errorFromWatchEvent, isResourceExpired, statusOf, OrchApiError, ORCHCLIENT_ABORTED,
  type ApiStatus, type ApiStatusCause,
} from './status.js';
export { createWatchDecoder, parseWatchLine, ORCHCLIENT_WATCH_DECODE_FAILED, type WatchDecoder } from './watch-decoder.js';
export { createReflector, type Reflector, type ReflectorBackoff, type ReflectorOptions } from './reflector.js';
export { getIfExists } from './get-if-exists.js';
export { swappableRestClient, SWAP_GRACE_MS, type SwappableRestClient } from './swappable.js';
