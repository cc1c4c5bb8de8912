/**
 * The device manager's topology hints (upstream: topology_hints.go): for each device resource a
 * container (or, with the pod scope, the pod) asks for, the NUMA node sets that hold enough of
 * its available devices, the narrowest of them preferred. A resource whose devices give no
 * topology has no preference (null); one that cannot be satisfied gets no hint at all ([]); a
 * container that already holds its devices (an agent restart) gets the hints of those devices.
 */
import { countOf, isSet, iterateBitMasks, type BitMask, type ProviderHints, type TopologyHint } from '../topologymanager/index.js';
import type { PodDevices } from './pod-devices.js';
import type { ResourceRegistry } from './resources.js';

export interface HintInputs {
  /** The machine's NUMA nodes. */
  readonly numaNodes: readonly number[];
  readonly registry: ResourceRegistry;
  /** Devices in use, by resource. */
  readonly allocated: ReadonlyMap<string, ReadonlySet<string>>;
  readonly podDevices: PodDevices;
}

/** Hints are logged by the caller: each resource's outcome. */
export type HintNote = (message: string, fields: Readonly<Record<string, unknown>>) => void;

function anySet(mask: BitMask, nodes: readonly number[] | undefined): boolean {
  return (nodes ?? []).some((n) => isSet(mask, n));
}

/** upstream generateDeviceTopologyHints. */
export function deviceTopologyHints(inputs: HintInputs, resource: string, available: ReadonlySet<string>, reusable: ReadonlySet<string>, request: number): TopologyHint[] {
  const { registry } = inputs;
  let minAffinitySize = inputs.numaNodes.length;
  const hints: { numaAffinity: BitMask; preferred: boolean }[] = [];
  iterateBitMasks(inputs.numaNodes, (mask) => {
    let inMask = 0;
    for (const d of registry.devices(resource)) if (anySet(mask, d.numaNodes)) inMask++;
    if (inMask >= request && countOf(mask) < minAffinitySize) minAffinitySize = countOf(mask);
    let matching = 0;
    for (const id of reusable) {
      const nodes = registry.device(resource, id)?.numaNodes;
      if (nodes === undefined) continue;
      if (!anySet(mask, nodes)) return;
      matching++;
    }
    for (const id of available) if (anySet(mask, registry.device(resource, id)?.numaNodes)) matching++;
    if (matching < request) return;
    hints.push({ numaAffinity: mask, preferred: false });
  });
  return hints.map((h) => ({ numaAffinity: h.numaAffinity, preferred: countOf(h.numaAffinity) === minAffinitySize }));
}

function availableDevices(inputs: HintInputs, resource: string): Set<string> {
  const used = inputs.allocated.get(resource) ?? new Set<string>();
  return new Set([...(inputs.registry.healthy(resource) ?? [])].filter((id) => !used.has(id)));
}

function hintsFor(
  inputs: HintInputs, requests: ReadonlyMap<string, number>, held: (resource: string) => ReadonlySet<string>,
  reusable: (resource: string) => ReadonlySet<string>, note: HintNote,
): ProviderHints {
  const out: Record<string, readonly TopologyHint[] | null> = {};
  for (const [resource, requested] of requests) {
    if (!inputs.registry.hasTopology(resource)) {
      note('Resource does not have a topology preference', { resource });
      out[resource] = null;
      continue;
    }
    const allocated = held(resource);
    if (allocated.size > 0) {
      if (allocated.size !== requested) {
        note('Resource already allocated with a different number than requested', { resource, request: requested, allocated: allocated.size });
        out[resource] = [];
        continue;
      }
      out[resource] = deviceTopologyHints(inputs, resource, allocated, new Set(), requested);
      continue;
    }
    const available = availableDevices(inputs, resource);
    const reuse = reusable(resource);
    const union = new Set([...available, ...reuse]);
    if (union.size < requested) {
      note('Unable to generate topology hints: requested number of devices unavailable', { resource, request: requested, available: union.size });
      out[resource] = [];
      continue;
    }
    out[resource] = deviceTopologyHints(inputs, resource, available, reuse, requested);
  }
  return out;
}

/** upstream GetTopologyHints for one container; `reuse` holds the devices the pod's init containers leave. */
export function containerHints(
  inputs: HintInputs, podUID: string, container: string, requests: ReadonlyMap<string, number>,
  reuse: ReadonlyMap<string, ReadonlySet<string>> | undefined, note: HintNote,
): ProviderHints {
  return hintsFor(inputs, requests,
    (resource) => inputs.podDevices.containerDevices(podUID, container, resource) ?? new Set(),
    (resource) => reuse?.get(resource) ?? new Set(), note);
}

/** upstream GetPodTopologyHints. */
export function podHints(inputs: HintInputs, podUID: string, requests: ReadonlyMap<string, number>, note: HintNote): ProviderHints {
  return hintsFor(inputs, requests, (resource) => inputs.podDevices.podDevices(podUID, resource), () => new Set(), note);
}
