/**
 * The topology manager policies (upstream: policy_none/best_effort/restricted/single_numa_node):
 *
 *   | policy           | merged hint                                         | admits          |
 *   |------------------|-----------------------------------------------------|-----------------|
 *   | none             | none (no alignment is asked for)                    | always          |
 *   | best-effort      | the best merged hint                                | always          |
 *   | restricted       | the best merged hint                                | preferred only  |
 *   | single-numa-node | the best of the single-node and don't-care hints;   | preferred only  |
 *   |                  | a hint spanning every node becomes "any node"       |                 |
 */
import { countOf } from './bitmask.js';
import { defaultAffinity, filterProvidersHints, mergeHints, type NUMAInfo, type ProviderHints, type TopologyHint } from './merge.js';

export type PolicyName = 'none' | 'best-effort' | 'restricted' | 'single-numa-node';

export interface PolicyOptions {
  /** prefer-closest-numa-nodes (TopologyManagerPolicyOptions, TopologyManagerPolicyBetaOptions). */
  readonly preferClosestNUMA: boolean;
}

export interface Policy {
  readonly name: PolicyName;
  /** The merged hint and whether the pod (or container) may be admitted with it. */
  merge(providersHints: readonly ProviderHints[]): { readonly hint: TopologyHint; readonly admit: boolean };
}

export function createPolicy(name: PolicyName, numa: NUMAInfo, options: PolicyOptions): Policy {
  const settings = { policyName: name, preferClosestNUMA: options.preferClosestNUMA };
  switch (name) {
    case 'none':
      return { name, merge: () => ({ hint: { numaAffinity: undefined, preferred: false }, admit: true }) };
    case 'best-effort':
    case 'restricted':
      return {
        name,
        merge(providersHints) {
          const hint = mergeHints(numa, filterProvidersHints(providersHints), settings);
          return { hint, admit: name === 'best-effort' || hint.preferred };
        },
      };
    case 'single-numa-node':
      return {
        name,
        merge(providersHints) {
          const single = filterProvidersHints(providersHints).map((hints) => hints.filter((h) => h.preferred && (h.numaAffinity === undefined || countOf(h.numaAffinity) === 1)));
          const merged = mergeHints(numa, single, settings);
          const hint = merged.numaAffinity === defaultAffinity(numa) ? { numaAffinity: undefined, preferred: merged.preferred } : merged;
          return { hint, admit: hint.preferred };
        },
      };
  }
}
