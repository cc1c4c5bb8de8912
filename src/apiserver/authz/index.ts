/**
 * authz: may this user do this? Request attributes (verb, API group, resource, subresource,
 * namespace, name, or a non-resource path) are checked by AlwaysAllow or by the rules of a
 * policy file (policy.ts documents the format and the built-in rules).
 *
 * Must not: authenticate, or know how requests are routed beyond their attributes.
 */
import type { UserInfo } from '../authn/index.js';
import type { PolicyRule } from './policy.js';

export { loadPolicyFile, parsePolicy, type PolicyRule } from './policy.js';

export interface Attributes {
  readonly user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection; for paths the lowercase method. */
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly path: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

export interface Decision {
  readonly allowed: boolean;
  /** Why not (appended to the 403 message), '' when allowed or nothing to say. */
  readonly reason: string;
}

/** What a user may do in a namespace, as SelfSubjectRulesReview lists it. */
export interface RuleSet {
  readonly resourceRules: readonly { verbs: string[]; apiGroups: string[]; resources: string[] }[];
  readonly nonResourceRules: readonly { verbs: string[]; nonResourceURLs: string[] }[];
}

export interface Authorizer {
  /** Synchronous, never throws. */
  authorize(attributes: Attributes): Decision;
  /** The rules that apply to `user` in `namespace` ('' for cluster scope only). */
  rules(user: UserInfo, namespace: string): RuleSet;
}

const EVERYTHING: RuleSet = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

export const alwaysAllow: Authorizer = { authorize: () => ({ allowed: true, reason: '' }), rules: () => EVERYTHING };

const DISCOVERY_PATHS = ['/api', '/api/*', '/apis', '/apis/*', '/openapi/*', '/version', '/version/', '/healthz', '/livez', '/readyz', '/healthz/*', '/livez/*', '/readyz/*'];

/** What every authenticated user may create: questions about themselves (upstream's system:basic-user). */
const SELF_REVIEWS = new Set([
  'authorization.orch.io/selfsubjectaccessreviews', 'authorization.orch.io/selfsubjectrulesreviews',
  'authorization.k8s.io/selfsubjectaccessreviews', 'authorization.k8s.io/selfsubjectrulesreviews',
  'authentication.orch.io/selfsubjectreviews', 'authentication.k8s.io/selfsubjectreviews',
]);

function pathMatches(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
}

function ruleMatches(rule: PolicyRule, a: Attributes): boolean {
  if (rule.user !== undefined && rule.user !== '*' && rule.user !== a.user.name) return false;
  if (rule.group !== undefined && rule.group !== '*' && !a.user.groups.includes(rule.group)) return false;
  if (!rule.verbs.includes('*') && !rule.verbs.includes(a.verb)) return false;
  if (!a.resourceRequest) return rule.nonResourcePaths !== undefined && pathMatches(rule.nonResourcePaths, a.path);
  if (rule.resources === undefined) return false;
  const full = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const resourceOk = rule.resources.some((r) => r === '*' || r === full || (a.subresource !== '' && r === `*/${a.subresource}`) || (a.subresource === '' && r === a.resource));
  if (!resourceOk) return false;
  if (rule.apiGroups !== undefined && !rule.apiGroups.includes('*') && !rule.apiGroups.includes(a.apiGroup)) return false;
  if (rule.namespaces !== undefined && !rule.namespaces.includes(a.namespace)) return false;
  return true;
}

function appliesTo(rule: PolicyRule, user: UserInfo, namespace: string): boolean {
  if (rule.user !== undefined && rule.user !== '*' && rule.user !== user.name) return false;
  if (rule.group !== undefined && rule.group !== '*' && !user.groups.includes(rule.group)) return false;
  return rule.namespaces === undefined || rule.namespaces.includes(namespace);
}

function ruleSet(rules: readonly PolicyRule[], user: UserInfo, namespace: string): RuleSet {
  if (user.groups.includes('system:masters')) return EVERYTHING;
  const resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[] }[] = [];
  const nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[] = [];
  if (user.groups.includes('system:authenticated')) {
    resourceRules.push({ verbs: ['create'], apiGroups: [...new Set([...SELF_REVIEWS].map((r) => r.split('/')[0] ?? ''))], resources: [...new Set([...SELF_REVIEWS].map((r) => r.split('/')[1] ?? ''))] });
    nonResourceRules.push({ verbs: ['get'], nonResourceURLs: [...DISCOVERY_PATHS] });
  }
  for (const rule of rules) {
    if (!appliesTo(rule, user, namespace)) continue;
    if (rule.resources !== undefined) resourceRules.push({ verbs: [...rule.verbs], apiGroups: [...(rule.apiGroups ?? ['*'])], resources: [...rule.resources] });
    if (rule.nonResourcePaths !== undefined) nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourcePaths] });
  }
  return { resourceRules, nonResourceRules };
}

/** The Policy authorizer over `rules` plus the built-in ones. */
export function policyAuthorizer(rules: readonly PolicyRule[]): Authorizer {
  return {
    rules: (user, namespace) => ruleSet(rules, user, namespace),
    authorize(a) {
      if (a.user.groups.includes('system:masters')) return { allowed: true, reason: '' };
      if (!a.resourceRequest && a.verb === 'get' && a.user.groups.includes('system:authenticated') && pathMatches(DISCOVERY_PATHS, a.path)) {
        return { allowed: true, reason: '' };
      }
      if (a.resourceRequest && a.verb === 'create' && SELF_REVIEWS.has(`${a.apiGroup}/${a.resource}`) && a.user.groups.includes('system:authenticated')) {
        return { allowed: true, reason: '' };
      }
      if (rules.some((r) => ruleMatches(r, a))) return { allowed: true, reason: '' };
      return { allowed: false, reason: 'no policy rule allows it' };
    },
  };
}

/** The 403 text of upstream: `User "bob" cannot list resource "events" in API group "" in the namespace "default"`. */
export function describeDenial(a: Attributes): string {
  if (!a.resourceRequest) return `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const scope = a.namespace === '' ? 'at the cluster scope' : `in the namespace "${a.namespace}"`;
  return `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" ${scope}`;
}
