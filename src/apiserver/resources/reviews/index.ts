/**
 * resources/reviews: the create-only review resources, answered and never stored:
 * authentication.orch.io/v1 tokenreviews (who holds this bearer token: a user of the token file
 * or a service account, for the review's audiences? a client certificate cannot be reviewed this
 * way: such tokens are simply unknown) and
 * authorization.orch.io/v1 subjectaccessreviews, localsubjectaccessreviews (namespaced) and
 * selfsubjectaccessreviews (the requester's own; kubectl auth can-i), answered by the server's
 * authorizer (AlwaysAllow or the policy); selfsubjectrulesreviews and selfsubjectreviews
 * (self.ts: kubectl auth can-i --list, kubectl auth whoami).
 *
 * Must not: know HTTP or the store; it authenticates and authorizes only through the functions
 * it is given.
 */
import type { UserInfo } from '../../authn/index.js';
import type { Attributes, Authorizer } from '../../authz/index.js';
import { namespaceOf, str, type ResourceDefinition, type StrategyContext, type WireObject } from '../../registry/index.js';
import { badRequest, type FieldErrors } from '../../status/index.js';
import { rec, strings, type Obj } from '../common/index.js';
import { reviewCommon } from './common.js';
import { selfReview, selfRulesReview } from './self.js';
import { localSubjectAccessReviewSchema, selfSubjectAccessReviewSchema, subjectAccessReviewSchema, tokenReviewSchema } from './schema.js';

/** A TokenReview's answer: the user and the audiences the token holds for, or why it is refused (`error`), or nothing (unknown token). */
export interface TokenReviewAnswer {
  readonly user?: UserInfo;
  readonly audiences?: readonly string[];
  readonly error?: string;
}

export interface ReviewOptions {
  /** Who holds a bearer token, for these audiences (empty: the API server's). */
  readonly reviewToken: (token: string, audiences: readonly string[]) => Promise<TokenReviewAnswer>;
  readonly authorizer: Authorizer;
}


function tokenReview(options: ReviewOptions): ResourceDefinition {
  return {
    ...reviewCommon,
    group: 'authentication.orch.io',
    kind: 'TokenReview',
    listKind: 'TokenReviewList',
    plural: 'tokenreviews',
    singular: 'tokenreview',
    namespaced: false,
    storage: 'tokenreviews',
    schema: tokenReviewSchema,
    strategy: {
      prepareForCreate: (review) => {
        // Upstream answers a missing token with 400, not 422.
        if (str(rec(review.spec).token) === '') throw badRequest('token is required for TokenReview');
      },
      validateCreate: () => undefined,
      validateUpdate: () => undefined,
    },
    review: async (review) => {
      const spec = rec(review.spec);
      const answer = await options.reviewToken(str(spec.token), strings(spec.audiences));
      const user = answer.user;
      const audiences = answer.audiences ?? [];
      const extra = user?.extra === undefined || Object.keys(user.extra).length === 0 ? {} : { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) };
      const status: Obj = user === undefined ? { authenticated: false, ...(answer.error === undefined ? {} : { error: answer.error }) } : {
        authenticated: true,
        user: { username: user.name, ...(user.uid === '' ? {} : { uid: user.uid }), groups: [...user.groups], ...extra },
        ...(audiences.length === 0 ? {} : { audiences: [...audiences] }),
      };
      return { ...review, status };
    },
  };
}

function validateAttributes(review: WireObject, errors: FieldErrors): void {
  const spec = rec(review.spec);
  const resource = spec.resourceAttributes !== undefined;
  const nonResource = spec.nonResourceAttributes !== undefined;
  if (resource === nonResource) {
    errors.invalid('spec.resourceAttributes', resource ? 'both' : 'neither', 'exactly one of nonResourceAttributes or resourceAttributes must be specified');
  }
}

function attributesOf(spec: Obj, user: UserInfo): Attributes {
  const r = rec(spec.resourceAttributes);
  if (spec.resourceAttributes !== undefined) {
    return {
      user, verb: str(r.verb), resourceRequest: true, path: '', apiGroup: str(r.group), resource: str(r.resource),
      subresource: str(r.subresource), namespace: str(r.namespace), name: str(r.name),
    };
  }
  const n = rec(spec.nonResourceAttributes);
  return { user, verb: str(n.verb), resourceRequest: false, path: str(n.path), apiGroup: '', resource: '', subresource: '', namespace: '', name: '' };
}

function answer(options: ReviewOptions, review: WireObject, user: UserInfo): Promise<WireObject> {
  const decision = options.authorizer.authorize(attributesOf(rec(review.spec), user));
  const status: Obj = { allowed: decision.allowed, ...(decision.reason === '' ? {} : { reason: decision.reason }) };
  return Promise.resolve({ ...review, status });
}

function subjectOf(spec: Obj): UserInfo {
  return { name: str(spec.user), uid: str(spec.uid), groups: strings(spec.groups) };
}

function accessReview(options: ReviewOptions, kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview'): ResourceDefinition {
  const local = kind === 'LocalSubjectAccessReview';
  return {
    ...reviewCommon,
    group: 'authorization.orch.io',
    kind,
    listKind: `${kind}List`,
    plural: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    namespaced: local,
    storage: `${kind.toLowerCase()}s`,
    schema: local ? localSubjectAccessReviewSchema : subjectAccessReviewSchema,
    strategy: {
      validateCreate: (review, errors) => {
        validateAttributes(review, errors);
        const spec = rec(review.spec);
        if (str(spec.user) === '' && strings(spec.groups).length === 0) errors.invalid('spec.user', '', 'at least one of user or group must be specified');
        if (!local) return;
        if (spec.nonResourceAttributes !== undefined) errors.invalid('spec.nonResourceAttributes', 'set', 'disallowed on this kind of request');
        const ns = str(rec(spec.resourceAttributes).namespace);
        if (spec.resourceAttributes !== undefined && ns !== namespaceOf(review)) errors.invalid('spec.resourceAttributes.namespace', ns, 'must match metadata.namespace');
      },
      validateUpdate: () => undefined,
    },
    review: (review) => answer(options, review, subjectOf(rec(review.spec))),
  };
}

function selfAccessReview(options: ReviewOptions): ResourceDefinition {
  return {
    ...reviewCommon,
    group: 'authorization.orch.io',
    kind: 'SelfSubjectAccessReview',
    listKind: 'SelfSubjectAccessReviewList',
    plural: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview',
    namespaced: false,
    storage: 'selfsubjectaccessreviews',
    schema: selfSubjectAccessReviewSchema,
    strategy: {
      validateCreate: validateAttributes,
      validateUpdate: () => undefined,
    },
    review: (review, ctx: StrategyContext) => answer(options, review, { name: ctx.user.name, uid: ctx.user.uid, groups: ctx.user.groups }),
  };
}

/**
 * tokenreviews, subjectaccessreviews, localsubjectaccessreviews, selfsubjectaccessreviews,
 * selfsubjectrulesreviews, selfsubjectreviews.
 */
export function reviewDefinitions(options: ReviewOptions): ResourceDefinition[] {
  return [
    tokenReview(options), accessReview(options, 'SubjectAccessReview'), accessReview(options, 'LocalSubjectAccessReview'), selfAccessReview(options),
    selfRulesReview(options.authorizer), selfReview(),
  ];
}

