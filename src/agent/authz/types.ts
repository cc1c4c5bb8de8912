/**
 * The authorizer seam: AlwaysAllow or the SubjectAccessReview webhook.
 */
import type { NodeRequestAttributes } from './attributes.js';

export interface Decision {
  readonly allowed: boolean;
  /** The reviewer's reason, for logs (not sent to the client). */
  readonly reason: string;
}

export interface Authorizer {
  /** Rejects when no decision could be made (the review failed): answer 500. */
  authorize(attributes: NodeRequestAttributes): Promise<Decision>;
}
