/**
 * Capacity and allocatable (upstream: nodestatus.MachineInfo and the container manager's
 * GetNodeAllocatableReservation): allocatable = capacity − systemReserved − orchReserved −
 * hard eviction thresholds (memory.available from memory, nodefs.available from
 * ephemeral-storage; percentages are of capacity), and memory also − the hugepages capacity;
 * never below zero. Amounts are held as bigints: cpu in millicores, the rest in units.
 */
import { OrchError, messageOf } from '../../api/errors.js';
import { formatQuantity, parseQuantity, quantityMilliValue, quantityValue } from '../../api/quantity.js';
import type { MachineInfo } from './machine.js';
import { quoteValue } from '../../api/quote.js';

/** A reserved amount or a hard eviction threshold does not parse. */
export const NODE_RESOURCE_INVALID = 'NODE_RESOURCE_INVALID';

export type Amounts = ReadonlyMap<string, bigint>;

export interface ReservationConfig {
  readonly systemReserved: Readonly<Record<string, string>>;
  readonly orchReserved: Readonly<Record<string, string>>;
  /** evictionHard, e.g. { 'memory.available': '100Mi', 'nodefs.available': '10%' }. */
  readonly evictionHard: Readonly<Record<string, string>>;
}

/** Eviction signals that reserve a node resource. */
const EVICTION_SIGNALS: Readonly<Record<string, string>> = {
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
};

/** maxPods, or cores × podsPerCore when that is smaller (podsPerCore 0: unused). */
export function podCapacity(cores: number, maxPods: number, podsPerCore: number): number {
  return podsPerCore > 0 ? Math.min(cores * podsPerCore, maxPods) : maxPods;
}

/** cpu (millicores), memory, pods, ephemeral-storage (when known) and hugepages-*. */
export function capacityOf(machine: MachineInfo, pods: number): Amounts {
  const out = new Map<string, bigint>([
    ['cpu', BigInt(machine.cores) * 1000n],
    ['memory', machine.memoryBytes],
    ['pods', BigInt(pods)],
  ]);
  if (machine.ephemeralStorageBytes !== undefined) out.set('ephemeral-storage', machine.ephemeralStorageBytes);
  for (const [name, bytes] of machine.hugepages) out.set(name, bytes);
  return out;
}

function amountOf(resource: string, text: string, subject: string): bigint {
  try {
    const q = parseQuantity(text, subject);
    return BigInt(resource === 'cpu' ? quantityMilliValue(q) : quantityValue(q));
  } catch (err) {
    throw new OrchError(NODE_RESOURCE_INVALID, 'invalid', `${subject}: ${messageOf(err)}`, { subject, cause: err });
  }
}

/** The amount a hard eviction threshold keeps free: a quantity, or a percentage of capacity. */
function thresholdAmount(text: string, capacity: bigint, subject: string): bigint {
  const trimmed = text.trim();
  if (trimmed.endsWith('%')) {
    const percent = Number(trimmed.slice(0, -1));
    if (!Number.isFinite(percent) || percent < 0 || percent > 100) {
      throw new OrchError(NODE_RESOURCE_INVALID, 'invalid', `${subject}: ${quoteValue(text)} is not a percentage between 0% and 100%`, { subject });
    }
    // As upstream: the float product truncated to an integer.
    return BigInt(Math.floor(Number(capacity) * (percent / 100)));
  }
  return amountOf('memory', trimmed, subject);
}

/** What is held back from each resource. Throws NODE_RESOURCE_INVALID for unparsable amounts. */
export function reservationOf(capacity: Amounts, config: ReservationConfig): Amounts {
  const out = new Map<string, bigint>();
  const add = (resource: string, amount: bigint): void => {
    out.set(resource, (out.get(resource) ?? 0n) + amount);
  };
  for (const [field, map] of [['systemReserved', config.systemReserved], ['orchReserved', config.orchReserved]] as const) {
    for (const [resource, text] of Object.entries(map)) {
      if (!capacity.has(resource)) continue; // e.g. pid: not a node resource
      add(resource, amountOf(resource, text, `${field}.${resource}`));
    }
  }
  for (const [signal, text] of Object.entries(config.evictionHard)) {
    const resource = EVICTION_SIGNALS[signal];
    const cap = resource === undefined ? undefined : capacity.get(resource);
    if (resource === undefined || cap === undefined) continue;
    add(resource, thresholdAmount(text, cap, `evictionHard.${signal}`));
  }
  return out;
}

/** capacity − reservation, memory also − hugepages; at least zero. */
export function allocatableOf(capacity: Amounts, config: ReservationConfig): Amounts {
  const reservation = reservationOf(capacity, config);
  const out = new Map<string, bigint>();
  for (const [resource, cap] of capacity) {
    const value = cap - (reservation.get(resource) ?? 0n);
    out.set(resource, value < 0n ? 0n : value);
  }
  for (const [resource, cap] of capacity) {
    if (!resource.startsWith('hugepages-')) continue;
    const memory = out.get('memory');
    if (memory !== undefined) out.set('memory', memory - cap < 0n ? 0n : memory - cap);
  }
  return out;
}

/** Byte amounts print in binary units when whole Ki (as upstream's BinarySI quantities). */
function formatBytes(bytes: bigint): string {
  if (bytes >= 1024n && bytes % 1024n === 0n) return formatQuantity(parseQuantity(`${bytes / 1024n}Ki`));
  return bytes.toString();
}

export function formatAmount(resource: string, amount: bigint): string {
  if (resource === 'cpu') return amount % 1000n === 0n ? (amount / 1000n).toString() : `${amount}m`;
  if (resource === 'pods') return amount.toString();
  return formatBytes(amount);
}

/** The quantities map of the Node status, keys sorted. */
export function formatAmounts(amounts: Amounts): Record<string, string> {
  const out: Record<string, string> = {};
  for (const resource of [...amounts.keys()].sort()) out[resource] = formatAmount(resource, amounts.get(resource) ?? 0n);
  return out;
}
