/**
 * The policy file of --authorization-mode=Policy: a YAML or JSON list of rules, each allowing
 * some users or groups some verbs:
 *
 * ```yaml
 * - user: alice                  # optional; "*" or absent: any user
 *   group: dev                   # optional; the user must be in it ("*" or absent: any)
 *   verbs: [get, list, watch]    # required; "*" for all
 *   resources: [events, "namespaces/status", "*"]   # resource or resource/subresource
 *   apiGroups: ["", events.orch.io]                  # optional; absent or "*": any group
 *   namespaces: [default]        # optional; absent: every namespace and cluster-scoped objects
 * - group: ops
 *   verbs: [get]
 *   nonResourcePaths: [/metrics, "/debug/*"]         # exact, or a prefix ending in *
 * ```
 * A request is allowed when any rule matches it. Built in: the group `system:masters` may do
 * everything, every authenticated user may `get` the discovery, OpenAPI, version and health
 * paths (as upstream's system:discovery role) and create selfsubjectaccessreviews,
 * selfsubjectrulesreviews and selfsubjectreviews (upstream's system:basic-user).
 */
import { readFileSync } from 'node:fs';
import { OrchError } from '../../api/errors.js';
import { parseYaml } from '../http/index.js';
import { quoteValue } from '../../api/quote.js';

export interface PolicyRule {
  readonly user?: string;
  readonly group?: string;
  readonly verbs: readonly string[];
  readonly resources?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly nonResourcePaths?: readonly string[];
}

const FIELDS = new Set(['user', 'group', 'verbs', 'resources', 'apiGroups', 'namespaces', 'nonResourcePaths']);

function fail(file: string, message: string): never {
  throw new OrchError('APISERVER_POLICY_INVALID', 'invalid', `--authorization-policy-file ${file}: ${message}`, { subject: file });
}

function stringList(value: unknown, where: string, file: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) fail(file, `${where} must be a list of strings`);
  return value;
}

/** Parses and checks the rules; throws OrchError APISERVER_POLICY_INVALID naming the rule. */
export function parsePolicy(text: string, file: string): PolicyRule[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    fail(file, `not YAML or JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!Array.isArray(doc)) fail(file, 'want a list of rules');
  return doc.map((raw: unknown, i): PolicyRule => {
    const where = `rule ${i}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(file, `${where} is not an object`);
    const rule = raw as Record<string, unknown>;
    for (const key of Object.keys(rule)) if (!FIELDS.has(key)) fail(file, `${where}: unknown field ${quoteValue(key)}`);
    for (const key of ['user', 'group']) {
      if (rule[key] !== undefined && typeof rule[key] !== 'string') fail(file, `${where}: ${key} must be a string`);
    }
    const verbs = stringList(rule.verbs, `${where}: verbs`, file);
    if (verbs === undefined || verbs.length === 0) fail(file, `${where}: verbs is required`);
    const resources = stringList(rule.resources, `${where}: resources`, file);
    const nonResourcePaths = stringList(rule.nonResourcePaths, `${where}: nonResourcePaths`, file);
    if (resources === undefined && nonResourcePaths === undefined) fail(file, `${where}: give resources or nonResourcePaths`);
    const apiGroups = stringList(rule.apiGroups, `${where}: apiGroups`, file);
    const namespaces = stringList(rule.namespaces, `${where}: namespaces`, file);
    return {
      verbs,
      ...(typeof rule.user === 'string' ? { user: rule.user } : {}),
      ...(typeof rule.group === 'string' ? { group: rule.group } : {}),
      ...(resources === undefined ? {} : { resources }),
      ...(nonResourcePaths === undefined ? {} : { nonResourcePaths }),
      ...(apiGroups === undefined ? {} : { apiGroups }),
      ...(namespaces === undefined ? {} : { namespaces }),
    };
  });
}

export function loadPolicyFile(file: string): PolicyRule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(file, `cannot read it: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parsePolicy(text, file);
}
