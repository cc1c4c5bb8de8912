/**
 * Merging the hint providers' topology hints into one (upstream: topologymanager/policy.go and
 * numa_info.go). Every permutation of one hint per provider and resource is ANDed into a merged
 * hint (preferred when every hint in it is preferred and all affinities are equal); the best
 * merged hint wins:
 *
 * - a preferred hint beats a non-preferred one;
 * - between preferred hints, the narrower mask wins (fewer nodes, then lower node numbers), or
 *   with prefer-closest-numa-nodes and a policy other than single-numa-node, among masks of the
 *   same size the one with the shorter average distance between its nodes;
 * - between non-preferred hints, the one whose size is closest to, without exceeding, the largest
 *   of the providers' narrowest hint sizes.
 *
 * A provider with no hints at all, or none for a resource (null), has no preference: one
 * preferred hint without affinity. A resource with an empty list of hints cannot be satisfied:
 * one non-preferred hint without affinity.
 */
import { and, countOf, bitsOf, isNarrowerThan, maskOf, type BitMask } from './bitmask.js';

export interface TopologyHint {
  /** The NUMA nodes; undefined: any (upstream's nil affinity). */
  readonly numaAffinity: BitMask | undefined;
  readonly preferred: boolean;
}

/** A provider's hints by resource: null for "no preference", [] for "cannot be satisfied"; undefined or {}: no preference at all. */
export type ProviderHints = Readonly<Record<string, readonly TopologyHint[] | null>> | undefined;

export interface NUMAInfo {
  /** The machine's NUMA nodes, ascending. */
  readonly nodes: readonly number[];
  /** distances[a][b], read only with prefer-closest-numa-nodes. */
  readonly distances: ReadonlyMap<number, readonly number[]>;
}

export function defaultAffinity(numa: NUMAInfo): BitMask {
  return maskOf(...numa.nodes);
}

export function filterProvidersHints(providersHints: readonly ProviderHints[]): TopologyHint[][] {
  const all: TopologyHint[][] = [];
  for (const hints of providersHints) {
    if (hints === undefined || Object.keys(hints).length === 0) {
      all.push([{ numaAffinity: undefined, preferred: true }]);
      continue;
    }
    for (const resource of Object.keys(hints).sort()) {
      const list = hints[resource];
      if (list === null || list === undefined) all.push([{ numaAffinity: undefined, preferred: true }]);
      else if (list.length === 0) all.push([{ numaAffinity: undefined, preferred: false }]);
      else all.push([...list]);
    }
  }
  return all;
}

function mergePermutation(defaultMask: BitMask, permutation: readonly TopologyHint[]): Required<TopologyHint> & { numaAffinity: BitMask } {
  let preferred = true;
  const masks: BitMask[] = [];
  for (const hint of permutation) {
    if (hint.numaAffinity !== undefined) {
      masks.push(hint.numaAffinity);
      if (hint.numaAffinity !== masks[0]) preferred = false;
    }
    if (!hint.preferred) preferred = false;
  }
  return { numaAffinity: and(defaultMask, ...masks), preferred };
}

function iteratePermutations(all: readonly (readonly TopologyHint[])[], callback: (permutation: readonly TopologyHint[]) => void): void {
  const iterate = (i: number, accum: readonly TopologyHint[]): void => {
    if (i === all.length) {
      callback(accum);
      return;
    }
    for (const hint of all[i] ?? []) iterate(i + 1, [...accum, hint]);
  };
  iterate(0, []);
}

function averageDistance(numa: NUMAInfo, mask: BitMask): number {
  const bits = bitsOf(mask);
  if (bits.length === 0) return 0;
  let sum = 0;
  for (const a of bits) for (const b of bits) sum += numa.distances.get(a)?.[b] ?? 0;
  return sum / (bits.length * bits.length);
}

function closest(numa: NUMAInfo, a: BitMask, b: BitMask): BitMask {
  if (countOf(a) !== countOf(b)) return isNarrowerThan(a, b) ? a : b;
  const da = averageDistance(numa, a);
  const db = averageDistance(numa, b);
  if (da === db) return a < b ? a : b;
  return da < db ? a : b;
}

function maxOfMinAffinityCounts(all: readonly (readonly TopologyHint[])[]): number {
  let max = 0;
  for (const hints of all) {
    let narrowest: BitMask | undefined;
    for (const h of hints) {
      if (h.numaAffinity === undefined) continue;
      if (narrowest === undefined || isNarrowerThan(h.numaAffinity, narrowest)) narrowest = h.numaAffinity;
    }
    if (narrowest !== undefined) max = Math.max(max, countOf(narrowest));
  }
  return max;
}

export interface MergeSettings {
  readonly policyName: string;
  readonly preferClosestNUMA: boolean;
}

type Merged = { readonly numaAffinity: BitMask; readonly preferred: boolean };

/** The best merged hint of `filtered` (upstream HintMerger.Merge); the default affinity, not preferred, when none has nodes. */
export function mergeHints(numa: NUMAInfo, filtered: readonly (readonly TopologyHint[])[], settings: MergeSettings): Merged {
  const defaultMask = defaultAffinity(numa);
  const bestNonPreferred = maxOfMinAffinityCounts(filtered);
  const fitter = (current: Merged, candidate: Merged): Merged => {
    if (candidate.numaAffinity === current.numaAffinity) return current;
    const best = settings.policyName !== 'single-numa-node' && settings.preferClosestNUMA
      ? closest(numa, current.numaAffinity, candidate.numaAffinity)
      : (isNarrowerThan(current.numaAffinity, candidate.numaAffinity) ? current.numaAffinity : candidate.numaAffinity);
    return best === current.numaAffinity ? current : candidate;
  };
  const compare = (current: Merged | undefined, candidate: Merged): Merged | undefined => {
    if (countOf(candidate.numaAffinity) === 0) return current;
    if (current === undefined) return candidate;
    if (!current.preferred && candidate.preferred) return candidate;
    if (current.preferred && !candidate.preferred) return current;
    if (current.preferred && candidate.preferred) return fitter(current, candidate);
    const cur = countOf(current.numaAffinity);
    const cand = countOf(candidate.numaAffinity);
    if (cur > bestNonPreferred) return fitter(current, candidate);
    if (cur === bestNonPreferred) return cand !== bestNonPreferred ? current : fitter(current, candidate);
    if (cand > bestNonPreferred) return current;
    if (cand === bestNonPreferred) return candidate;
    if (cand > cur) return candidate;
    if (cand < cur) return current;
    return fitter(current, candidate);
  };
  let best: Merged | undefined;
  iteratePermutations(filtered, (permutation) => {
    best = compare(best, mergePermutation(defaultMask, permutation));
  });
  return best ?? { numaAffinity: defaultMask, preferred: false };
}
