/**
 * The review APIs the agent's server delegates to: TokenReview (authentication.orch.io/v1:
 * who holds this bearer token?) and SubjectAccessReview (authorization.orch.io/v1: may this
 * user do this?), as upstream's JSON shapes with the group renamed. Each call is one POST
 * through an OrchClient; answers are not cached here (the authenticator and authorizer do).
 */
import type { OrchClient, RequestOptions } from './client.js';

export const TOKEN_REVIEW_API_VERSION = 'authentication.orch.io/v1';
export const SUBJECT_ACCESS_REVIEW_API_VERSION = 'authorization.orch.io/v1';
export const TOKEN_REVIEW_PATH = '/apis/authentication.orch.io/v1/tokenreviews';
export const SUBJECT_ACCESS_REVIEW_PATH = '/apis/authorization.orch.io/v1/subjectaccessreviews';

export interface ReviewedUser {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface TokenReviewStatus {
  readonly authenticated?: boolean;
  readonly user?: ReviewedUser;
  readonly audiences?: readonly string[];
  readonly error?: string;
}

export interface ResourceAttributes {
  readonly namespace?: string;
  readonly verb?: string;
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly name?: string;
}

export interface NonResourceAttributes {
  readonly path?: string;
  readonly verb?: string;
}

export interface SubjectAccessReviewSpec {
  readonly resourceAttributes?: ResourceAttributes;
  readonly nonResourceAttributes?: NonResourceAttributes;
  readonly user?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
  readonly uid?: string;
}

export interface SubjectAccessReviewStatus {
  readonly allowed: boolean;
  readonly denied?: boolean;
  readonly reason?: string;
  readonly evaluationError?: string;
}

interface Review<S, T> {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly spec?: S;
  readonly status?: T;
}

/** Asks the API server who holds `token`. Rejects when the server cannot answer. */
export async function createTokenReview(client: OrchClient, token: string, options: RequestOptions & { readonly audiences?: readonly string[] } = {}): Promise<TokenReviewStatus> {
  const { audiences, ...request } = options;
  const body = {
    apiVersion: TOKEN_REVIEW_API_VERSION,
    kind: 'TokenReview',
    spec: { token, ...(audiences === undefined || audiences.length === 0 ? {} : { audiences }) },
  };
  const answer = await client.postJson<Review<unknown, TokenReviewStatus>>(TOKEN_REVIEW_PATH, body, request);
  return answer.status ?? { authenticated: false };
}

/** Asks the API server whether the subject of `spec` may act. Rejects when the server cannot answer. */
export async function createSubjectAccessReview(client: OrchClient, spec: SubjectAccessReviewSpec, options: RequestOptions = {}): Promise<SubjectAccessReviewStatus> {
  const body = { apiVersion: SUBJECT_ACCESS_REVIEW_API_VERSION, kind: 'SubjectAccessReview', spec };
  const answer = await client.postJson<Review<unknown, Partial<SubjectAccessReviewStatus>>>(SUBJECT_ACCESS_REVIEW_PATH, body, options);
  const s = answer.status ?? {};
  return {
    allowed: s.allowed === true,
    ...(s.denied === undefined ? {} : { denied: s.denied }),
    ...(s.reason === undefined ? {} : { reason: s.reason }),
    ...(s.evaluationError === undefined ? {} : { evaluationError: s.evaluationError }),
  };
}
