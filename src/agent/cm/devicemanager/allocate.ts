/**
 * Choosing a container's devices (upstream: devicesToAllocate, filterByAffinity,
 * allocateContainerResources), in upstream's order:
 *
 * 1. devices the container holds already (an agent restart) are kept; a container found running
 *    when the agent started keeps them without any check (upstream checks this only while the
 *    pod sources are not ready, which a restarted agent's first admissions need not fall in:
 *    the plugin may not be back yet, and the running container must not be refused);
 * 2. the resource must be registered, have healthy devices, and still hold the container's old
 *    devices healthy;
 * 3. devices the pod's init containers leave are reused first;
 * 4. the available devices (healthy, not in use) are split by the topology manager's affinity:
 *    on its NUMA nodes, on others, without topology. When the aligned ones are enough, the
 *    plugin's GetPreferredAllocation chooses among them; otherwise all aligned ones are taken
 *    and the plugin chooses the rest among all available, then the unaligned ones fill up.
 *
 * Devices are marked in use as they are chosen; a failure puts the in-use set back as the held
 * devices say. Errors carry upstream's texts (the admission refusal quotes them).
 */
import type { Container } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../../api/errors.js';
import { resourceAmount, type NodePod } from '../../../api/pod/index.js';
import { isSet, type TopologyHint } from '../topologymanager/index.js';
import { NODE_WITHOUT_TOPOLOGY } from './api.js';
import type { PodDevices } from './pod-devices.js';
import type { ResourceRegistry } from './resources.js';

/** A container's devices cannot be given (the pod is refused with UnexpectedAdmissionError). */
export const DEVICE_ALLOCATION_FAILED = 'DEVICE_ALLOCATION_FAILED';

export function allocationError(message: string, resource: string): OrchError {
  return new OrchError(DEVICE_ALLOCATION_FAILED, 'conflict', message, { subject: resource });
}

export interface AllocationContext {
  readonly registry: ResourceRegistry;
  readonly podDevices: PodDevices;
  /** Devices in use, by resource (chosen ones are added at once). */
  readonly allocated: Map<string, Set<string>>;
  /** The container was running when the agent started. */
  wasRunning(podUID: string, container: string): boolean;
  /** GetPreferredAllocation when the plugin offers it (undefined: it does not). */
  preferred(resource: string, available: ReadonlySet<string>, mustInclude: ReadonlySet<string>, size: number): Promise<Set<string> | undefined>;
  note(message: string, fields: Readonly<Record<string, unknown>>): void;
}

/** The whole-number limit of each resource the container asks for, in name order. */
export function containerLimits(container: Container, keep: (resource: string) => boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const [resource, value] of Object.entries(container.resources?.limits ?? {}).sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (!keep(resource)) continue;
    out.set(resource, Math.ceil(resourceAmount(value, resource)));
  }
  return out;
}

/** The pod's effective limits of the kept resources (upstream PodLimits: app containers and sidecars, or the largest init step). */
export function podLimits(pod: NodePod, keep: (resource: string) => boolean): Map<string, number> {
  const add = (into: Map<string, number>, from: ReadonlyMap<string, number>): void => {
    for (const [r, v] of from) into.set(r, (into.get(r) ?? 0) + v);
  };
  const total = new Map<string, number>();
  for (const c of pod.spec?.containers ?? []) add(total, containerLimits(c, keep));
  const sidecars = new Map<string, number>();
  const initMax = new Map<string, number>();
  for (const c of pod.spec?.initContainers ?? []) {
    const own = containerLimits(c, keep);
    let step: Map<string, number>;
    if (c.restartPolicy === 'Always') {
      add(total, own);
      add(sidecars, own);
      step = new Map(sidecars);
    } else {
      step = new Map(own);
      add(step, sidecars);
    }
    for (const [r, v] of step) initMax.set(r, Math.max(initMax.get(r) ?? 0, v));
  }
  for (const [r, v] of initMax) total.set(r, Math.max(total.get(r) ?? 0, v));
  return total;
}

/** upstream filterByAffinity: the available devices on the affinity's nodes, on other nodes, and without topology. */
export function splitByAffinity(registry: ResourceRegistry, resource: string, available: ReadonlySet<string>, affinity: TopologyHint): [Set<string>, Set<string>, Set<string>] {
  const mask = affinity.numaAffinity;
  if (!registry.hasTopology(resource) || mask === undefined) return [new Set(), new Set(), new Set(available)];
  const perNode = new Map<number, Set<string>>();
  for (const id of available) {
    const nodes = registry.device(resource, id)?.numaNodes;
    for (const n of nodes === undefined || nodes.length === 0 ? [NODE_WITHOUT_TOPOLOGY] : nodes) {
      const set = perNode.get(n) ?? new Set<string>();
      set.add(id);
      perNode.set(n, set);
    }
  }
  const size = (n: number): number => perNode.get(n)?.size ?? 0;
  const inMask = (n: number): boolean => n !== NODE_WITHOUT_TOPOLOGY && isSet(mask, n);
  // Nodes of the affinity first, then other nodes, then no topology; within each, nodes with fewer devices first.
  const nodes = [...perNode.keys()].sort((a, b) => {
    if (inMask(a) !== inMask(b)) return inMask(a) ? -1 : 1;
    if ((a === NODE_WITHOUT_TOPOLOGY) !== (b === NODE_WITHOUT_TOPOLOGY)) return a === NODE_WITHOUT_TOPOLOGY ? 1 : -1;
    return size(a) - size(b) || a - b;
  });
  const aligned = new Set<string>();
  const unaligned = new Set<string>();
  const none = new Set<string>();
  for (const id of available) {
    const first = nodes.find((n) => perNode.get(n)?.has(id) === true);
    if (first === undefined) continue;
    if (first === NODE_WITHOUT_TOPOLOGY) none.add(id);
    else if (inMask(first)) aligned.add(id);
    else unaligned.add(id);
  }
  return [aligned, unaligned, none];
}

/**
 * upstream devicesToAllocate: the devices to ask the plugin for, or an empty set when the
 * container needs no new ones. Throws DEVICE_ALLOCATION_FAILED with upstream's texts.
 */
export async function devicesToAllocate(
  ctx: AllocationContext, podUID: string, container: string, resource: string, required: number, reusable: ReadonlySet<string>, affinity: TopologyHint,
): Promise<Set<string>> {
  let needed = required;
  const held = ctx.podDevices.containerDevices(podUID, container, resource);
  if (held !== undefined) {
    needed -= held.size;
    if (needed !== 0) throw allocationError(`pod "${podUID}" container "${container}" changed request for resource "${resource}" from ${held.size} to ${required}`, resource);
  }
  // An agent restart: a container still running from before has its devices; nothing to do.
  if (ctx.wasRunning(podUID, container)) {
    ctx.note('Container detected running, nothing to do', { resource, podUID, container });
    return new Set();
  }
  const healthy = ctx.registry.healthy(resource);
  if (healthy === undefined) throw allocationError(`cannot allocate unregistered device ${resource}`, resource);
  if (healthy.size === 0) throw allocationError(`no healthy devices present; cannot allocate unhealthy devices ${resource}`, resource);
  if (held !== undefined && [...held].some((id) => !healthy.has(id))) {
    throw allocationError(`previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${resource}`, resource);
  }
  if (needed === 0) return new Set();

  const chosen = new Set<string>();
  const take = (from: Iterable<string>): boolean => {
    const inUse = ctx.allocated.get(resource) ?? new Set<string>();
    ctx.allocated.set(resource, inUse);
    for (const id of from) {
      if (chosen.has(id)) continue;
      inUse.add(id);
      chosen.add(id);
      needed--;
      if (needed === 0) return true;
    }
    return false;
  };
  if (take(reusable)) return chosen;
  const inUse = ctx.allocated.get(resource) ?? new Set<string>();
  const available = new Set([...healthy].filter((id) => !inUse.has(id)));
  if (available.size < needed) {
    throw allocationError(`requested number of devices unavailable for ${resource}. Requested: ${needed}, Available: ${available.size}`, resource);
  }
  const [aligned, unaligned, none] = splitByAffinity(ctx.registry, resource, available, affinity);
  const shortfall = (): OrchError => allocationError(`unexpectedly allocated less resources than required. Requested: ${required}, Got: ${required - needed}`, resource);
  if (needed < aligned.size) {
    const preferred = await ctx.preferred(resource, new Set([...aligned, ...chosen]), chosen, required);
    if (preferred !== undefined && take([...preferred].filter((id) => aligned.has(id)))) return chosen;
    if (take(aligned)) return chosen;
    throw shortfall();
  }
  if (take(aligned)) return chosen;
  const preferred = await ctx.preferred(resource, new Set([...available, ...chosen]), chosen, required);
  if (preferred !== undefined && take([...preferred].filter((id) => available.has(id)))) return chosen;
  if (take(unaligned)) return chosen;
  if (take(none)) return chosen;
  throw shortfall();
}

/** The chosen devices grouped by the NUMA nodes they are on (-1: without topology), as the checkpoint keeps them. */
export function byNumaNode(registry: ResourceRegistry, resource: string, ids: Iterable<string>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const id of [...ids].sort()) {
    const nodes = registry.device(resource, id)?.numaNodes;
    for (const n of nodes === undefined || nodes.length === 0 ? [NODE_WITHOUT_TOPOLOGY] : nodes) {
      const list = out.get(n) ?? [];
      list.push(id);
      out.set(n, list);
    }
  }
  return out;
}
