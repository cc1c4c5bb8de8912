/**
 * Label selectors in their object form (meta/v1 LabelSelector: matchLabels and matchExpressions,
 * all ANDed), as claims select volumes with them: matching a set of labels, and upstream's
 * ValidateLabelSelector reported into a FieldProblems sink. The text form of the labelSelector
 * query parameter is the API server's (src/apiserver/selectors).
 */
import type { LabelSelector, LabelSelectorRequirement } from 'kubernetes-types/meta/v1.js';
import { maybe, type FieldProblems } from './field-problems.js';
import { validateLabelValue, validateQualifiedName } from './labels.js';

function requirementMatches(labels: Readonly<Record<string, string>>, r: LabelSelectorRequirement): boolean {
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    default: return false;
  }
}

/** Every matchLabels entry and every expression holds; the empty selector matches everything. */
export function labelSelectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (have[k] !== v) return false;
  return (selector.matchExpressions ?? []).every((r) => requirementMatches(have, r));
}

/** Upstream's ValidateLabelSelector: matchLabels as labels, each expression's operator, key and values. */
export function validateLabelSelector(p: FieldProblems, path: string, selector: LabelSelector): void {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    for (const m of validateQualifiedName(k)) p.invalid(`${path}.matchLabels`, k, m);
    for (const m of validateLabelValue(v)) p.invalid(`${path}.matchLabels`, v, m);
  }
  (selector.matchExpressions ?? []).forEach((r, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) p.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'");
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) p.forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        break;
      default:
        p.invalid(`${at}.operator`, r.operator, 'not a valid selector operator');
    }
    for (const m of validateQualifiedName(maybe(r.key) ?? '')) p.invalid(`${at}.key`, r.key, m);
    values.forEach((v, j) => {
      for (const m of validateLabelValue(v)) p.invalid(`${at}.values[${j}]`, v, m);
    });
  });
}
