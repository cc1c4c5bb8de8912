/**
 * topologymanager: NUMA alignment at admission (upstream's topology manager): policies none,
 * best-effort, restricted and single-numa-node, scopes container and pod, the option
 * prefer-closest-numa-nodes, hints from the CPU and memory managers, and the refusal
 * TopologyAffinityError.
 *
 * It owns: merging hints and keeping each admitted container's affinity. It must not: allocate
 * anything itself (the providers do), read the machine (it is handed the NUMA nodes and their
 * distances) or keep any state across agent restarts (upstream keeps none either).
 */
export { bitsOf, countOf, formatMask, isNarrowerThan, isSet, iterateBitMasks, maskOf, type BitMask } from './bitmask.js';
export { defaultAffinity, filterProvidersHints, mergeHints, type NUMAInfo, type ProviderHints, type TopologyHint } from './merge.js';
export { createPolicy, type Policy, type PolicyName, type PolicyOptions } from './policy.js';
export {
  CM_TOPOLOGY_UNSUPPORTED, MAX_NUMA_NODES, allContainers, createTopologyManager,
  type AffinityStore, type HintProvider, type ScopeName, type TopologyManager, type TopologyManagerOptions,
} from './manager.js';
