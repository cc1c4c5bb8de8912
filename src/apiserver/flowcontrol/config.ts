/**
 * FlowSchema and PriorityLevelConfiguration (flowcontrol.apiserver.orch.io/v1beta3, upstream's
 * flowcontrol.apiserver.k8s.io) read from their stored objects into what the dispatcher uses,
 * and the matching of a request against a flow schema's rules (upstream's semantics: `*`
 * matches everything; resources may name a subresource as `nodes/status`; `namespaces: ["*"]`
 * matches every namespaced request and `clusterScope` the cluster-scoped ones; a non-resource
 * URL `/apis/*` matches that prefix).
 */
import type { WireObject } from '../registry/index.js';
import { num, rec, recs, strings } from '../resources/common/index.js';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface RequestDigest {
  readonly user: string;
  readonly groups: readonly string[];
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly path: string;
}

export interface LimitedLevel {
  readonly name: string;
  readonly uid: string;
  readonly exempt: false;
  readonly shares: number;
  /** 0 queues: the level rejects at once beyond its limit (limitResponse Reject). */
  readonly queues: number;
  readonly handSize: number;
  readonly queueLengthLimit: number;
}

export interface ExemptLevel {
  readonly name: string;
  readonly uid: string;
  readonly exempt: true;
}

export type PriorityLevel = LimitedLevel | ExemptLevel;

interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}

interface Rule {
  readonly subjects: readonly Subject[];
  readonly resourceRules: readonly { verbs: string[]; apiGroups: string[]; resources: string[]; clusterScope: boolean; namespaces: string[] }[];
  readonly nonResourceRules: readonly { verbs: string[]; urls: string[] }[];
}

export interface FlowSchema {
  readonly name: string;
  readonly uid: string;
  readonly level: string;
  readonly precedence: number;
  readonly distinguisher: 'ByUser' | 'ByNamespace' | '';
  readonly rules: readonly Rule[];
}

export function priorityLevelOf(o: WireObject): PriorityLevel {
  const meta = rec(o.metadata);
  const spec = rec(o.spec);
  const name = str(meta.name);
  const uid = str(meta.uid);
  if (spec.type === 'Exempt') return { name, uid, exempt: true };
  const limited = rec(spec.limited);
  const response = rec(limited.limitResponse);
  const queuing = rec(response.queuing);
  const queue = response.type !== 'Reject';
  return {
    name, uid, exempt: false,
    shares: num(limited.nominalConcurrencyShares) ?? 30,
    queues: queue ? num(queuing.queues) ?? 64 : 0,
    handSize: queue ? num(queuing.handSize) ?? 8 : 0,
    queueLengthLimit: queue ? num(queuing.queueLengthLimit) ?? 50 : 0,
  };
}

export function flowSchemaOf(o: WireObject): FlowSchema {
  const meta = rec(o.metadata);
  const spec = rec(o.spec);
  const method = str(rec(spec.distinguisherMethod).type);
  return {
    name: str(meta.name),
    uid: str(meta.uid),
    level: str(rec(spec.priorityLevelConfiguration).name),
    precedence: num(spec.matchingPrecedence) ?? 1000,
    distinguisher: method === 'ByUser' || method === 'ByNamespace' ? method : '',
    rules: recs(spec.rules).map((rule) => {
      return {
        subjects: recs(rule.subjects).map((subject) => {
          const kind = str(subject.kind);
          const inner = rec(kind === 'User' ? subject.user : kind === 'Group' ? subject.group : subject.serviceAccount);
          return { kind, name: str(inner.name), namespace: str(inner.namespace) };
        }),
        resourceRules: recs(rule.resourceRules).map((rr) => {
          return { verbs: strings(rr.verbs), apiGroups: strings(rr.apiGroups), resources: strings(rr.resources), clusterScope: rr.clusterScope === true, namespaces: strings(rr.namespaces) };
        }),
        nonResourceRules: recs(rule.nonResourceRules).map((nr) => {
          return { verbs: strings(nr.verbs), urls: strings(nr.nonResourceURLs) };
        }),
      };
    }),
  };
}

const SA_PREFIX = 'system:serviceaccount:';

function subjectMatches(s: Subject, r: RequestDigest): boolean {
  if (s.kind === 'User') return s.name === '*' || s.name === r.user;
  if (s.kind === 'Group') return s.name === '*' || r.groups.includes(s.name);
  if (s.kind === 'ServiceAccount') {
    if (!r.user.startsWith(SA_PREFIX)) return false;
    const [namespace, name] = r.user.slice(SA_PREFIX.length).split(':');
    return s.namespace === namespace && (s.name === '*' || s.name === name);
  }
  return false;
}

const has = (list: readonly string[], value: string): boolean => list.includes('*') || list.includes(value);

function urlMatches(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => p === '*' || p === path || (p.endsWith('/*') && path.startsWith(p.slice(0, -1))));
}

function ruleMatches(rule: Rule, r: RequestDigest): boolean {
  if (!rule.subjects.some((s) => subjectMatches(s, r))) return false;
  if (r.resourceRequest) {
    const resource = r.subresource === '' ? r.resource : `${r.resource}/${r.subresource}`;
    return rule.resourceRules.some((rr) => has(rr.verbs, r.verb) && has(rr.apiGroups, r.apiGroup) && has(rr.resources, resource)
      && (r.namespace === '' ? rr.clusterScope : has(rr.namespaces, r.namespace)));
  }
  return rule.nonResourceRules.some((nr) => has(nr.verbs, r.verb) && urlMatches(nr.urls, r.path));
}

/** The first schema (lowest matchingPrecedence, then name) whose rules match. */
export function classify(schemas: readonly FlowSchema[], r: RequestDigest): FlowSchema | undefined {
  return schemas.find((fs) => fs.rules.some((rule) => ruleMatches(rule, r)));
}

/** Schemas in matching order. */
export function ordered(schemas: readonly FlowSchema[]): FlowSchema[] {
  return [...schemas].sort((a, b) => a.precedence - b.precedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The flow's distinguisher within its schema. */
export function distinguisherOf(fs: FlowSchema, r: RequestDigest): string {
  if (fs.distinguisher === 'ByUser') return r.user;
  if (fs.distinguisher === 'ByNamespace') return r.namespace;
  return '';
}

/**
 * Each limited level's share of the server's concurrency limit: ceil(limit × shares / Σ shares),
 * at least 1 (upstream's nominal concurrency limit).
 */
export function concurrencyLimits(levels: readonly PriorityLevel[], serverLimit: number): Map<string, number> {
  const limited = levels.filter((l): l is LimitedLevel => !l.exempt);
  const total = limited.reduce((sum, l) => sum + l.shares, 0);
  return new Map(limited.map((l) => [l.name, Math.max(1, Math.ceil(total === 0 ? 1 : (serverLimit * l.shares) / total))]));
}
