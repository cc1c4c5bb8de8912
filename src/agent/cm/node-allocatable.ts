/**
 * Node allocatable as the container manager computes it (upstream: node_container_manager_linux.go
 * and the kubelet's start-up): the reservations after `reservedSystemCPUs`, the reservation node
 * status subtracts (hard eviction thresholds included unless
 * --experimental-allocatable-ignore-eviction), and the limits of the pods cgroup and the reserved
 * cgroups. Pure.
 *
 *   | what                          | value                                                              |
 *   |-------------------------------|--------------------------------------------------------------------|
 *   | reservation (status, managers)| systemReserved + orchReserved + hard eviction (memory.available)   |
 *   | pods cgroup, `pods` enforced  | capacity − systemReserved − orchReserved (memory also − hugepages): |
 *   |                               | cpu.shares, memory limit, pids.max, hugetlb limits                 |
 *   | pods cgroup, not enforced     | capacity (the CPU shares must still not starve the pods)           |
 *   | system/orch reserved cgroup   | its reservation (cpu.shares, memory limit, pids.max)               |
 *
 * With reservedSystemCPUs the CPU reservation is that many CPUs, counted as systemReserved.cpu,
 * and orchReserved.cpu is dropped (upstream overwrites both the same way).
 */
import { parseQuantity, quantityMilliValue, quantityValue } from '../../api/quantity.js';
import { CPUSet } from './cpuset.js';
import { milliCpuToShares, type ResourceConfig } from './pod-resources.js';

export interface ReservationSettings {
  readonly systemReserved: Readonly<Record<string, string>>;
  readonly orchReserved: Readonly<Record<string, string>>;
  readonly reservedSystemCPUs: string;
  readonly evictionHard: Readonly<Record<string, string>>;
  /** --experimental-allocatable-ignore-eviction. */
  readonly ignoreEviction: boolean;
}

/** What the node offers: CPUs, memory, process IDs and hugepages by page size. */
export interface NodeResources {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
  /** min(kernel.pid_max, kernel.threads-max); undefined when unknown. */
  readonly pids?: number | undefined;
  readonly hugepages: readonly { readonly pageSizeBytes: number; readonly bytes: number }[];
}

type Reservations = { readonly systemReserved: Readonly<Record<string, string>>; readonly orchReserved: Readonly<Record<string, string>> };

/** The reservations after reservedSystemCPUs. */
export function effectiveReserved(s: ReservationSettings): Reservations {
  const cpus = CPUSet.parse(s.reservedSystemCPUs, 'reservedSystemCPUs');
  if (cpus.isEmpty()) return { systemReserved: s.systemReserved, orchReserved: s.orchReserved };
  const orchReserved = { ...s.orchReserved };
  delete orchReserved['cpu'];
  return { systemReserved: { ...s.systemReserved, cpu: String(cpus.size()) }, orchReserved };
}

/** What node status subtracts from capacity (nodestatus ReservationConfig). */
export function statusReservation(s: ReservationSettings): Reservations & { readonly evictionHard: Readonly<Record<string, string>> } {
  return { ...effectiveReserved(s), evictionHard: s.ignoreEviction ? {} : s.evictionHard };
}

function amount(resource: string, text: string): number {
  const q = parseQuantity(text, resource);
  return resource === 'cpu' ? quantityMilliValue(q) : quantityValue(q);
}

function sumOf(resource: string, ...maps: readonly Readonly<Record<string, string>>[]): number {
  return maps.reduce((sum, m) => sum + (m[resource] === undefined ? 0 : amount(resource, m[resource])), 0);
}

/** The hard eviction threshold of memory.available in bytes (a quantity or a percentage of capacity). */
function memoryEviction(s: ReservationSettings, capacity: NodeResources): number {
  const text = s.ignoreEviction ? undefined : s.evictionHard['memory.available']?.trim();
  if (text === undefined) return 0;
  if (text.endsWith('%')) return Math.floor(capacity.memoryBytes * (Number(text.slice(0, -1)) / 100));
  return amount('memory', text);
}

/**
 * upstream GetNodeAllocatableReservation: cpu (millicores), memory (bytes, hard eviction
 * included), pid and hugepages-<size> reservations; resources with nothing reserved are left out.
 */
export function allocatableReservation(s: ReservationSettings, capacity: NodeResources): Map<string, number> {
  const r = effectiveReserved(s);
  const result = new Map<string, number>();
  const resources = new Set(['cpu', 'memory', 'pid', ...Object.keys(r.systemReserved), ...Object.keys(r.orchReserved)]);
  for (const resource of resources) {
    if (resource === 'ephemeral-storage') continue;
    const value = sumOf(resource, r.systemReserved, r.orchReserved) + (resource === 'memory' ? memoryEviction(s, capacity) : 0);
    if (value !== 0) result.set(resource, value);
  }
  return result;
}

function hugepageName(pageSizeBytes: number): string {
  for (const [unit, size] of [['Gi', 1024 ** 3], ['Mi', 1024 ** 2], ['Ki', 1024]] as const) if (pageSizeBytes % size === 0) return `hugepages-${pageSizeBytes / size}${unit}`;
  return `hugepages-${pageSizeBytes}`;
}

/** upstream getNodeAllocatableAbsolute over the internal capacity: capacity − system − orch reserved, at least 0. */
export function allocatableAbsolute(s: ReservationSettings, capacity: NodeResources): NodeResources {
  const r = effectiveReserved(s);
  const minus = (resource: string, value: number): number => Math.max(0, value - sumOf(resource, r.systemReserved, r.orchReserved));
  const hugepages = capacity.hugepages.map((h) => ({ pageSizeBytes: h.pageSizeBytes, bytes: minus(hugepageName(h.pageSizeBytes), h.bytes) }));
  let memory = minus('memory', capacity.memoryBytes);
  for (const h of hugepages) memory = Math.max(0, memory - h.bytes);
  return {
    cpuMilli: minus('cpu', capacity.cpuMilli),
    memoryBytes: memory,
    ...(capacity.pids === undefined ? {} : { pids: minus('pid', capacity.pids) }),
    hugepages,
  };
}

/** upstream getCgroupConfig: CPU shares, memory limit, pids limit and hugetlb limits of `resources`. */
export function cgroupConfigOf(resources: NodeResources): ResourceConfig {
  return {
    cpuShares: milliCpuToShares(resources.cpuMilli),
    memoryLimitBytes: resources.memoryBytes,
    ...(resources.pids === undefined ? {} : { pidsLimit: resources.pids }),
    ...(resources.hugepages.length === 0 ? {} : { hugepageLimits: resources.hugepages.map((h) => ({ pageSizeBytes: h.pageSizeBytes, limitBytes: h.bytes })) }),
  };
}

/** The pods cgroup's limits: node allocatable when `pods` is enforced (with cgroupsPerQOS), else the capacity. */
export function podsCgroupConfig(s: ReservationSettings, capacity: NodeResources, enforcePods: boolean): ResourceConfig {
  return cgroupConfigOf(enforcePods ? allocatableAbsolute(s, capacity) : capacity);
}

/** A reserved cgroup's limits: the resources it reserves (cpu, memory, pid). */
export function reservedCgroupConfig(reservation: Readonly<Record<string, string>>): ResourceConfig {
  return {
    ...(reservation['cpu'] === undefined ? {} : { cpuShares: milliCpuToShares(amount('cpu', reservation['cpu'])) }),
    ...(reservation['memory'] === undefined ? {} : { memoryLimitBytes: amount('memory', reservation['memory']) }),
    ...(reservation['pid'] === undefined ? {} : { pidsLimit: amount('pid', reservation['pid']) }),
  };
}
