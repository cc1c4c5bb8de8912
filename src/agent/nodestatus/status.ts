/**
 * One node status report (upstream: Kubelet.setNodeStatus with the default setters): from the
 * machine, the runtime and the last Node the server returned, the status the agent wants, the
 * question whether it differs from the server's beyond heartbeat times, and the strategic merge
 * patch of the status subresource that writes it.
 *
 * Capacity and allocatable start from the server's (upstream's setters change the Node they
 * read): the agent sets the resources it owns (cpu, memory, pods, ephemeral-storage, the
 * machine's hugepages) and the device plugin resources, and keeps the others, such as an
 * extended resource an administrator PATCHed in, whose allocatable follows its capacity.
 */
import type { NodeCondition } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
import { OWNED_CONDITIONS, computeConditions } from './conditions.js';
import type { MachineInfo } from './machine.js';
import { containerRuntimeVersion, nodeAddresses, nodeImages } from './node-object.js';
import { isExtendedResourceName } from '../../api/resource-names.js';
import { allocatableOf, capacityOf, formatAmounts, podCapacity, type ReservationConfig } from './resources.js';
import type { ExtendedResources, NodeEvent, NodeFacts, NodeStatusLogger, RuntimeStatus, WireNode, WireNodeStatus, WireNodeSystemInfo } from './types.js';
import { compareCodeUnits, compareKeys } from '../../api/order.js';

export interface StatusConfig {
  readonly nodeName: string;
  readonly hostname: string;
  /** Primary first (--node-ip or the default routes' addresses). */
  readonly nodeIPs: readonly string[];
  /** The agent's HTTPS port (status.daemonEndpoints.nodeagentEndpoint.Port). */
  readonly port: number;
  /** e.g. v0.1.0 (status.nodeInfo.nodeagentVersion). */
  readonly agentVersion: string;
  readonly maxPods: number;
  readonly podsPerCore: number;
  readonly reservation: ReservationConfig;
  /** nodeStatusMaxImages: -1 for all. */
  readonly maxImages: number;
}

export interface StatusSources {
  readonly machine: () => Promise<MachineInfo>;
  readonly facts: NodeFacts;
  readonly logger: NodeStatusLogger;
}

export interface ComputedStatus {
  readonly status: WireNodeStatus;
  /** Condition transitions, to emit once the status is written. */
  readonly events: NodeEvent[];
}

async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  try {
    return { ok: true, value: await promise };
  } catch (err) {
    return { ok: false, error: messageOf(err) };
  }
}

function machineInfoFields(m: MachineInfo): Omit<WireNodeSystemInfo, 'containerRuntimeVersion' | 'nodeagentVersion' | 'kubeletVersion' | 'kubeProxyVersion'> {
  return {
    machineID: m.machineID, systemUUID: m.systemUUID, bootID: m.bootID, kernelVersion: m.kernelVersion,
    osImage: m.osImage, operatingSystem: m.operatingSystem, architecture: m.architecture,
  };
}

/** The server's quantities as text (a number the server may have sent is printed). */
function quantities(map: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, String(v)]));
}

/**
 * Capacity and allocatable over the server's: `owned` (the machine's resources, when read) and
 * the device plugin resources set, the rest kept; an extended resource gone from capacity
 * leaves allocatable; one the agent does not own has its capacity as allocatable. With
 * `resetExtended`, every extended resource starts at zero (a recreated node).
 */
function resourceMaps(
  previous: { readonly capacity?: Readonly<Record<string, unknown>>; readonly allocatable?: Readonly<Record<string, unknown>> },
  owned: { readonly capacity: Record<string, string>; readonly allocatable: Record<string, string> } | undefined,
  devices: ExtendedResources | undefined, resetExtended: boolean,
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity = quantities(previous.capacity);
  const allocatable = quantities(previous.allocatable);
  if (resetExtended) {
    for (const map of [capacity, allocatable]) for (const key of Object.keys(map)) if (isExtendedResourceName(key)) map[key] = '0';
  }
  if (owned !== undefined) {
    // The machine's resources are the agent's: one the machine no longer has (hugepages of a size) goes.
    for (const map of [capacity, allocatable]) for (const key of Object.keys(map)) if (isMachineResource(key) && owned.capacity[key] === undefined) Reflect.deleteProperty(map, key);
    Object.assign(capacity, owned.capacity);
    Object.assign(allocatable, owned.allocatable);
  }
  const set = new Set(Object.keys(owned?.capacity ?? {}));
  for (const [resource, count] of devices?.capacity ?? []) { capacity[resource] = String(count); set.add(resource); }
  for (const [resource, count] of devices?.allocatable ?? []) allocatable[resource] = String(count);
  for (const resource of devices?.removed ?? []) {
    capacity[resource] = '0';
    allocatable[resource] = '0';
    set.add(resource);
  }
  for (const key of Object.keys(allocatable)) if (capacity[key] === undefined && isExtendedResourceName(key)) Reflect.deleteProperty(allocatable, key);
  for (const [key, value] of Object.entries(capacity)) if (!set.has(key) && isExtendedResourceName(key)) allocatable[key] = value;
  return { capacity: sortedKeys(capacity), allocatable: sortedKeys(allocatable) };
}

const MACHINE_RESOURCES = ['cpu', 'memory', 'pods', 'ephemeral-storage'];

function isMachineResource(key: string): boolean {
  return MACHINE_RESOURCES.includes(key) || key.startsWith('hugepages-');
}

function sortedKeys(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).sort((a, b) => compareCodeUnits(a[0], b[0])));
}

/**
 * The status to report. A fact that cannot be read keeps the server's previous value (machine
 * facts, runtime version, images) and is logged; a runtime that does not answer makes the node
 * NotReady. Never throws.
 */
export async function computeStatus(
  base: WireNode | undefined, sources: StatusSources, config: StatusConfig, nowMs: number, options: { readonly resetExtended?: boolean } = {},
): Promise<ComputedStatus> {
  const { facts, logger } = sources;
  const previous = base?.status ?? {};
  const [machine, runtime, version, images] = await Promise.all([
    settle(sources.machine()), settle(facts.runtimeStatus()), settle(facts.runtimeVersion()), settle(facts.images()),
  ]);
  let owned: { capacity: Record<string, string>; allocatable: Record<string, string> } | undefined;
  let info: WireNodeSystemInfo = { ...(previous.nodeInfo ?? { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', operatingSystem: '', architecture: '', kubeletVersion: '', kubeProxyVersion: '', nodeagentVersion: '' }) };
  if (machine.ok) {
    const cap = capacityOf(machine.value, podCapacity(machine.value.cores, config.maxPods, config.podsPerCore));
    const ownedCapacity = formatAmounts(cap);
    let ownedAllocatable: Record<string, string>;
    try {
      ownedAllocatable = formatAmounts(allocatableOf(cap, config.reservation));
    } catch (err) {
      logger.error('cannot compute allocatable; reporting capacity', { err: messageOf(err) });
      ownedAllocatable = ownedCapacity;
    }
    owned = { capacity: ownedCapacity, allocatable: ownedAllocatable };
    info = { ...info, ...machineInfoFields(machine.value) };
  } else {
    logger.error('cannot read machine info', { err: machine.error });
  }
  let devices: ExtendedResources | undefined;
  try {
    devices = facts.extendedResources?.();
  } catch (err) {
    logger.error('cannot read the device plugin resources; keeping the server\'s', { err: messageOf(err) });
  }
  const { capacity, allocatable } = resourceMaps(previous, owned, devices, options.resetExtended === true);
  if (version.ok) info.containerRuntimeVersion = containerRuntimeVersion(version.value.name, version.value.version);
  else logger.warn('cannot get the container runtime version', { err: version.error });
  info.nodeagentVersion = config.agentVersion;
  // Upstream v1.28 reports its own version in both (kubeProxyVersion is deprecated but required
  // by the v1.28 client libraries' models).
  info.kubeletVersion = config.agentVersion;
  info.kubeProxyVersion = config.agentVersion;
  Reflect.deleteProperty(info, 'orchProxyVersion');
  if (!images.ok) logger.warn('cannot list images for the node status', { err: images.error });

  const pressure = facts.pressure?.() ?? { memory: false, disk: false, pid: false };
  const runtimeInput: RuntimeStatus | { error: string } = runtime.ok ? runtime.value : { error: runtime.error };
  const { conditions, events } = computeConditions(
    previous.conditions,
    { runtime: runtimeInput, health: facts.health(), pressure, capacity: Object.keys(capacity) },
    nowMs,
    config.nodeName,
  );
  const status: WireNodeStatus = {
    capacity,
    allocatable,
    conditions,
    addresses: nodeAddresses(config.nodeIPs, config.hostname),
    daemonEndpoints: { nodeagentEndpoint: { Port: config.port } },
    nodeInfo: info,
  };
  const imageList = images.ok ? nodeImages(images.value, config.maxImages) : previous.images;
  if (imageList !== undefined) status.images = imageList;
  if (facts.volumesInUse !== undefined) {
    try {
      status.volumesInUse = [...(await facts.volumesInUse())];
    } catch (err) {
      logger.error('cannot list the volumes in use; keeping the server\'s', { err: messageOf(err) });
      status.volumesInUse = previous.volumesInUse ?? [];
    }
  }
  return { status, events };
}

function canonicalQuantities(map: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(map ?? {}).sort()) {
    const text = String(map?.[key]);
    try {
      out[key] = formatQuantity(parseQuantity(text));
    } catch {
      out[key] = text; // a malformed value from the server compares as its text (and so differs)
    }
  }
  return out;
}

function withoutHeartbeats(conditions: readonly NodeCondition[] | undefined): unknown[] {
  return [...(conditions ?? [])]
    .sort((a, b) => compareCodeUnits(a.type, b.type))
    .map((c) => ({ type: c.type, status: c.status, reason: c.reason ?? '', message: c.message ?? '', lastTransitionTime: c.lastTransitionTime ?? '' }));
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(compareKeys))
      : v,
  );
}

/** Whether `next` differs from `current` in anything but the conditions' heartbeat times. */
export function statusChanged(current: WireNodeStatus | undefined, next: WireNodeStatus): boolean {
  const view = (s: WireNodeStatus | undefined): string =>
    canonical({
      capacity: canonicalQuantities(s?.capacity),
      allocatable: canonicalQuantities(s?.allocatable),
      conditions: withoutHeartbeats(s?.conditions),
      addresses: s?.addresses ?? [],
      daemonEndpoints: s?.daemonEndpoints ?? {},
      nodeInfo: s?.nodeInfo ?? {},
      images: s?.images ?? [],
      volumesInUse: s?.volumesInUse ?? [],
    });
  return view(current) !== view(next);
}

function mapPatch(current: Readonly<Record<string, unknown>> | undefined, next: Readonly<Record<string, string>> | undefined): Record<string, string | null> {
  const out: Record<string, string | null> = { ...(next ?? {}) };
  for (const key of Object.keys(current ?? {})) if (next === undefined || !Object.hasOwn(next, key)) out[key] = null;
  return out;
}

/**
 * The strategic merge patch of `/status` writing `next` over `current`: resources that
 * disappeared are removed, the addresses replace the list (merging them by type would mix
 * dual-stack InternalIPs), the agent's conditions merge by type (others' are not sent).
 */
export function statusPatch(current: WireNodeStatus | undefined, next: WireNodeStatus): { status: Record<string, unknown> } {
  const status: Record<string, unknown> = {
    capacity: mapPatch(current?.capacity, next.capacity),
    allocatable: mapPatch(current?.allocatable, next.allocatable),
    conditions: (next.conditions ?? []).filter((c) => OWNED_CONDITIONS.includes(c.type)),
    addresses: [{ $patch: 'replace' }, ...(next.addresses ?? [])],
    daemonEndpoints: next.daemonEndpoints ?? {},
    nodeInfo: next.nodeInfo ?? {},
  };
  if (next.images !== undefined) status.images = next.images;
  // Replaced as a whole (the field has no merge key); null removes the last one.
  if (next.volumesInUse !== undefined && next.volumesInUse.length > 0) status.volumesInUse = next.volumesInUse;
  else if ((current?.volumesInUse?.length ?? 0) > 0) status.volumesInUse = null;
  return { status };
}
