/**
 * The reviews a user asks about themselves: authorization.orch.io/v1 selfsubjectrulesreviews
 * (what may I do in this namespace? kubectl auth can-i --list), answered from the authorizer's
 * rules, and authentication.orch.io/v1 selfsubjectreviews (who am I? kubectl auth whoami),
 * answered with the requester as authenticated.
 */
import type { Authorizer } from '../../authz/index.js';
import { str, type ResourceDefinition } from '../../registry/index.js';
import { rec } from '../common/index.js';
import { reviewCommon } from './common.js';
import { selfSubjectReviewSchema, selfSubjectRulesReviewSchema } from './schema.js';


export function selfRulesReview(authorizer: Authorizer): ResourceDefinition {
  return {
    ...reviewCommon,
    namespaced: false,
    group: 'authorization.orch.io',
    kind: 'SelfSubjectRulesReview',
    listKind: 'SelfSubjectRulesReviewList',
    plural: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview',
    storage: 'selfsubjectrulesreviews',
    schema: selfSubjectRulesReviewSchema,
    strategy: { validateCreate: () => undefined, validateUpdate: () => undefined },
    review: (review, ctx) => {
      const namespace = str(rec(review.spec).namespace);
      const rules = authorizer.rules({ name: ctx.user.name, uid: ctx.user.uid, groups: ctx.user.groups }, namespace);
      const status = { resourceRules: rules.resourceRules, nonResourceRules: rules.nonResourceRules, incomplete: false };
      return Promise.resolve({ ...review, status });
    },
  };
}

export function selfReview(): ResourceDefinition {
  return {
    ...reviewCommon,
    namespaced: false,
    group: 'authentication.orch.io',
    kind: 'SelfSubjectReview',
    listKind: 'SelfSubjectReviewList',
    plural: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    storage: 'selfsubjectreviews',
    schema: selfSubjectReviewSchema,
    strategy: { validateCreate: () => undefined, validateUpdate: () => undefined },
    review: (review, ctx) => {
      const userInfo = { username: ctx.user.name, ...(ctx.user.uid === '' ? {} : { uid: ctx.user.uid }), groups: [...ctx.user.groups] };
      return Promise.resolve({ ...review, status: { userInfo } });
    },
  };
}
