/**
 * One node status report (upstream: Kubelet.setNodeStatus with the default setters): from the
 * machine, the runtime and the last Node the server returned, the status the agent wants, the
 * question whether it differs from the server's beyond heartbeat times, and the strategic merge
 * patch of the status subresource that writes it.
 */
import type { NodeCondition } from 'kubernetes-types/core/v1.js';
import { messageOf } from '../../api/errors.js';
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
import { OWNED_CONDITIONS, computeConditions } from './conditions.js';
import type { MachineInfo } from './machine.js';
import { containerRuntimeVersion, nodeAddresses, nodeImages } from './node-object.js';
import { allocatableOf, capacityOf, formatAmounts, podCapacity, type ReservationConfig } from './resources.js';
import type { NodeEvent, NodeFacts, NodeStatusLogger, RuntimeStatus, WireNode, WireNodeStatus, WireNodeSystemInfo } from './types.js';
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

function machineInfoFields(m: MachineInfo): Omit<WireNodeSystemInfo, 'containerRuntimeVersion' | 'nodeagentVersion'> {
  return {
    machineID: m.machineID, systemUUID: m.systemUUID, bootID: m.bootID, kernelVersion: m.kernelVersion,
    osImage: m.osImage, operatingSystem: m.operatingSystem, architecture: m.architecture,
  };
}

/**
 * The status to report. A fact that cannot be read keeps the server's previous value (machine
 * facts, runtime version, images) and is logged; a runtime that does not answer makes the node
 * NotReady. Never throws.
 */
export async function computeStatus(base: WireNode | undefined, sources: StatusSources, config: StatusConfig, nowMs: number): Promise<ComputedStatus> {
  const { facts, logger } = sources;
  const previous = base?.status ?? {};
  const [machine, runtime, version, images] = await Promise.all([
    settle(sources.machine()), settle(facts.runtimeStatus()), settle(facts.runtimeVersion()), settle(facts.images()),
  ]);
  let capacity = previous.capacity ?? {};
  let allocatable = previous.allocatable ?? {};
  let info: WireNodeSystemInfo = { ...(previous.nodeInfo ?? { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', operatingSystem: '', architecture: '', nodeagentVersion: '' }) };
  if (machine.ok) {
    const cap = capacityOf(machine.value, podCapacity(machine.value.cores, config.maxPods, config.podsPerCore));
    capacity = formatAmounts(cap);
    try {
      allocatable = formatAmounts(allocatableOf(cap, config.reservation));
    } catch (err) {
      logger.error('cannot compute allocatable; reporting capacity', { err: messageOf(err) });
      allocatable = capacity;
    }
    info = { ...info, ...machineInfoFields(machine.value) };
  } else {
    logger.error('cannot read machine info', { err: machine.error });
  }
  if (version.ok) info.containerRuntimeVersion = containerRuntimeVersion(version.value.name, version.value.version);
  else logger.warn('cannot get the container runtime version', { err: version.error });
  info.nodeagentVersion = config.agentVersion;
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
  return { status };
}
