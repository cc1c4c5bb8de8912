/**
 * Node selectors (core/v1 NodeSelector: terms ORed, each term's requirements ANDed), as the pod's
 * required node affinity and a PersistentVolume's node affinity use them: matching a node's labels
 * (matchExpressions) and name (matchFields on metadata.name), and upstream's validation
 * (ValidateNodeSelector), reported into a FieldProblems sink.
 */
import type { Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm } from 'kubernetes-types/core/v1.js';
import { maybe, type FieldProblems } from './field-problems.js';
import { validateDNS1123Subdomain, validateLabelValue, validateQualifiedName } from './labels.js';

function matchesRequirement(labels: Readonly<Record<string, string>>, r: NodeSelectorRequirement): boolean {
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0] ?? '')) return false;
      const diff = BigInt(value) - BigInt(values[0] ?? '0');
      return r.operator === 'Gt' ? diff > 0n : diff < 0n;
    }
    default: return false;
  }
}

function matchesTerm(node: Pick<Node, 'metadata'>, term: NodeSelectorTerm): boolean {
  const labels = node.metadata?.labels ?? {};
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const nodeFields = { 'metadata.name': node.metadata?.name ?? '' };
  return expressions.every((r) => matchesRequirement(labels, r)) && fields.every((r) => matchesRequirement(nodeFields, r));
}

/** A node selector matches the node when one of its terms does; a term without requirements matches nothing. */
export function nodeSelectorMatches(selector: NodeSelector, node: Pick<Node, 'metadata'>): boolean {
  return (selector.nodeSelectorTerms as NodeSelectorTerm[] | undefined ?? []).some((t) => matchesTerm(node, t));
}

function validateExpression(p: FieldProblems, path: string, r: NodeSelectorRequirement): void {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) p.required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'");
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) p.forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) p.required(`${path}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'");
      break;
    default:
      p.invalid(`${path}.operator`, r.operator, 'not a valid selector operator');
  }
  for (const m of validateQualifiedName(maybe(r.key) ?? '')) p.invalid(`${path}.key`, r.key, m);
  values.forEach((v, i) => {
    for (const m of validateLabelValue(v)) p.invalid(`${path}.values[${i}]`, v, m);
  });
}

function validateField(p: FieldProblems, path: string, r: NodeSelectorRequirement): void {
  const values = r.values ?? [];
  if (r.operator === 'In' || r.operator === 'NotIn') {
    if (values.length !== 1) p.required(`${path}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector");
  } else {
    p.invalid(`${path}.operator`, r.operator, 'not a valid selector operator');
  }
  if (r.key !== 'metadata.name') {
    p.invalid(`${path}.key`, r.key, 'not a valid field selector key');
    return;
  }
  values.forEach((v, i) => {
    for (const m of validateDNS1123Subdomain(v)) p.invalid(`${path}.values[${i}]`, v, m);
  });
}

/** Upstream's ValidateNodeSelector: at least one term; each requirement's operator, key and values. */
export function validateNodeSelector(p: FieldProblems, path: string, selector: NodeSelector): void {
  const terms = selector.nodeSelectorTerms as NodeSelectorTerm[] | undefined ?? [];
  if (terms.length === 0) {
    p.required(`${path}.nodeSelectorTerms`, 'must have at least one node selector term');
    return;
  }
  terms.forEach((term, i) => {
    const at = `${path}.nodeSelectorTerms[${i}]`;
    (term.matchExpressions ?? []).forEach((r, j) => { validateExpression(p, `${at}.matchExpressions[${j}]`, r); });
    (term.matchFields ?? []).forEach((r, j) => { validateField(p, `${at}.matchFields[${j}]`, r); });
  });
}
