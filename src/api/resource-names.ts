/**
 * Extended resource names (upstream: v1helper.IsExtendedResourceName, with kubernetes.io read as
 * orch.io): a domain-prefixed name outside the orch.io namespace (the node's own resources:
 * cpu, memory, orch.io/...), not starting with `requests.` (quota's prefix), and a qualified
 * name once that prefix is put in front. Device plugins register such names; the node status
 * reports them; the scheduler and admission count them.
 */
import { DNS1123_SUBDOMAIN_MAX_LENGTH, validateDNS1123Subdomain, validateQualifiedName } from './labels.js';

/** Namespaces of the node's own resources; the upstream agent's kubernetes.io is refused too. */
const NATIVE_NAMESPACES = ['orch.io/', 'kubernetes.io/'];
const QUOTA_PREFIX = 'requests.';

/** Why `name` is not an extended resource name (empty: it is one). */
export function extendedResourceNameProblems(name: string): string[] {
  if (!name.includes('/')) return ['must be a domain-prefixed name such as example.com/gpu'];
  const native = NATIVE_NAMESPACES.find((ns) => name.includes(ns));
  if (native !== undefined) return [`must not be in the ${native.slice(0, -1)} namespace, which holds the node's own resources`];
  if (name.startsWith(QUOTA_PREFIX)) return [`must not start with "${QUOTA_PREFIX}"`];
  const slash = name.indexOf('/');
  const domain = name.slice(0, slash);
  const rest = name.slice(slash + 1);
  if (rest.includes('/')) return ["must have a single '/' between the domain and the name"];
  const problems: string[] = [];
  // The quota form requests.<name> must still be a qualified name: the domain gets shorter by that prefix.
  const maxDomain = DNS1123_SUBDOMAIN_MAX_LENGTH - QUOTA_PREFIX.length;
  if (domain.length > maxDomain) problems.push(`domain must be at most ${maxDomain} characters (it has ${domain.length})`);
  else if (domain === '') problems.push('domain must not be empty');
  else problems.push(...validateDNS1123Subdomain(domain).map((p) => `domain ${p}`));
  problems.push(...validateQualifiedName(rest));
  return problems;
}

export function isExtendedResourceName(name: string): boolean {
  return extendedResourceNameProblems(name).length === 0;
}
