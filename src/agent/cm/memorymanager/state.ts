/**
 * The memory manager's state (upstream: memorymanager/state): per NUMA node the memory and
 * hugepages tables (total, system reserved, allocatable, reserved by containers, free), the
 * number of assignments and the group of nodes it is allocated with, and each container's memory
 * blocks. Kept in `<rootDir>/memory_manager_state` in upstream's checkpoint format:
 *
 *   {"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":{"memory":{"total":..,
 *    "systemReserved":..,"allocatable":..,"reserved":..,"free":..}},"cells":[0]}},
 *    "entries":{"<pod uid>":{"<container>":[{"numaAffinity":[0],"type":"memory","size":67108864}]}},"checksum":..}
 *
 * Written through on every change; read back at start, where a wrong checksum or another policy
 * stops the agent (drain the node and delete the file to change the policy).
 */
import { join } from 'node:path';

import { OrchError, messageOf } from '../../../api/errors.js';
import {
  checkpointError, field, fnv32a, goDump, goInt, goString, parseCheckpoint, readCheckpoint, writeCheckpoint, type GoValue,
} from '../checkpoint/index.js';

export const MEMORY_MANAGER_STATE_FILE = 'memory_manager_state';
/** The memory manager's state file cannot be used (policy changed, corrupt, does not add up). */
export const CM_MEMORY_STATE_INVALID = 'CM_MEMORY_STATE_INVALID';

export interface MemoryTable {
  total: number;
  systemReserved: number;
  allocatable: number;
  reserved: number;
  free: number;
}

export interface NUMANodeState {
  numberOfAssignments: number;
  memoryMap: Map<string, MemoryTable>;
  /** The nodes this one is allocated together with (itself alone when unused); null as Go's nil slice. */
  cells: number[] | null;
}

export type MachineState = Map<number, NUMANodeState>;

export interface Block {
  readonly numaAffinity: number[] | null;
  readonly type: string;
  size: number;
}

export type MemoryAssignments = Map<string, Map<string, Block[]>>;

const ints = (items: readonly number[] | null): GoValue => ({ kind: 'slice', type: '[]int', items: items === null ? null : items.map((i) => goInt(i, 'int')) });

function checksumOf(policy: string, machine: MachineState, entries: MemoryAssignments): number {
  const table = (t: MemoryTable): GoValue => ({ kind: 'ptr', type: '*state.MemoryTable', elem: { kind: 'struct', type: 'state.MemoryTable', fields: [
    ['TotalMemSize', goInt(t.total, 'uint64')], ['SystemReserved', goInt(t.systemReserved, 'uint64')], ['Allocatable', goInt(t.allocatable, 'uint64')],
    ['Reserved', goInt(t.reserved, 'uint64')], ['Free', goInt(t.free, 'uint64')],
  ] } });
  const node = (n: NUMANodeState): GoValue => ({ kind: 'ptr', type: '*state.NUMANodeState', elem: { kind: 'struct', type: 'state.NUMANodeState', fields: [
    ['NumberOfAssignments', goInt(n.numberOfAssignments, 'int')],
    ['MemoryMap', { kind: 'map', type: 'map[v1.ResourceName]*state.MemoryTable', entries: [...n.memoryMap].map(([k, t]) => [goString(k, 'v1.ResourceName'), table(t)] as const) }],
    ['Cells', ints(n.cells)],
  ] } });
  const block = (b: Block): GoValue => ({ kind: 'struct', type: 'state.Block', fields: [
    ['NUMAAffinity', ints(b.numaAffinity)], ['Type', goString(b.type, 'v1.ResourceName')], ['Size', goInt(b.size, 'uint64')],
  ] });
  return fnv32a(goDump({ kind: 'ptr', type: '*state.MemoryManagerCheckpoint', elem: { kind: 'struct', type: 'state.MemoryManagerCheckpoint', fields: [
    ['PolicyName', goString(policy)],
    ['MachineState', { kind: 'map', type: 'state.NUMANodeMap', entries: [...machine].map(([id, n]) => [goInt(id, 'int'), node(n)] as const) }],
    ['Entries', { kind: 'map', type: 'state.ContainerMemoryAssignments', entries: [...entries].map(([pod, containers]) => [goString(pod), {
      kind: 'map', type: 'map[string][]state.Block', entries: [...containers].map(([name, blocks]) => [goString(name), { kind: 'slice', type: '[]state.Block', items: blocks.map(block) }] as const),
    }] as const) }],
    ['Checksum', goInt(0, 'checksum.Checksum')],
  ] } }));
}

const sortedKeys = <K extends string | number>(m: ReadonlyMap<K, unknown>): K[] => [...m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

export function encodeMemoryCheckpoint(policy: string, machine: MachineState, entries: MemoryAssignments): string {
  const machineJSON: Record<string, unknown> = {};
  for (const id of sortedKeys(machine)) {
    const n = machine.get(id);
    if (n === undefined) continue;
    const memoryMap: Record<string, MemoryTable> = {};
    for (const r of sortedKeys(n.memoryMap)) {
      const t = n.memoryMap.get(r);
      if (t !== undefined) memoryMap[r] = { total: t.total, systemReserved: t.systemReserved, allocatable: t.allocatable, reserved: t.reserved, free: t.free };
    }
    machineJSON[String(id)] = { numberOfAssignments: n.numberOfAssignments, memoryMap, cells: n.cells };
  }
  const entriesJSON: Record<string, Record<string, Block[]>> = {};
  for (const pod of sortedKeys(entries)) {
    const byName: Record<string, Block[]> = {};
    const containers = entries.get(pod) ?? new Map<string, Block[]>();
    for (const name of sortedKeys(containers)) byName[name] = (containers.get(name) ?? []).map((b) => ({ numaAffinity: b.numaAffinity, type: b.type, size: b.size }));
    entriesJSON[pod] = byName;
  }
  return JSON.stringify({
    policyName: policy, machineState: machineJSON, ...(Object.keys(entriesJSON).length === 0 ? {} : { entries: entriesJSON }),
    checksum: checksumOf(policy, machine, entries),
  });
}

function object(value: unknown, path: string, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw checkpointError(path, `${what} is not an object`);
  return value as Record<string, unknown>;
}

function number(value: unknown, path: string, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw checkpointError(path, `${what} is not a non-negative integer`);
  return value;
}

function intList(value: unknown, path: string, what: string): number[] | null {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value)) throw checkpointError(path, `${what} is not a list`);
  return value.map((v, i) => number(v, path, `${what}[${i}]`));
}

export interface DecodedMemoryState {
  readonly policy: string;
  readonly machine: MachineState;
  readonly entries: MemoryAssignments;
}

/** Decodes and verifies a checkpoint. Throws CM_CHECKPOINT_FAILED. */
export function decodeMemoryCheckpoint(path: string, text: string): DecodedMemoryState {
  const o = parseCheckpoint(path, text);
  const policy = field(o, 'policyName');
  const checksum = field(o, 'checksum') ?? 0;
  if (typeof policy !== 'string' || typeof checksum !== 'number') throw checkpointError(path, 'policyName and checksum must be a string and a number');
  const machine: MachineState = new Map();
  for (const [id, raw] of Object.entries(object(field(o, 'machineState'), path, 'machineState'))) {
    const n = object(raw, path, `machineState.${id}`);
    const memoryMap = new Map<string, MemoryTable>();
    for (const [r, t] of Object.entries(object(field(n, 'memoryMap'), path, `machineState.${id}.memoryMap`))) {
      const tt = object(t, path, `machineState.${id}.memoryMap.${r}`);
      const get = (name: string): number => number(field(tt, name) ?? 0, path, `machineState.${id}.memoryMap.${r}.${name}`);
      memoryMap.set(r, { total: get('total'), systemReserved: get('systemReserved'), allocatable: get('allocatable'), reserved: get('reserved'), free: get('free') });
    }
    machine.set(Number(id), { numberOfAssignments: number(field(n, 'numberOfAssignments') ?? 0, path, `machineState.${id}.numberOfAssignments`), memoryMap, cells: intList(field(n, 'cells'), path, `machineState.${id}.cells`) });
  }
  const entries: MemoryAssignments = new Map();
  for (const [pod, raw] of Object.entries(object(field(o, 'entries'), path, 'entries'))) {
    const containers = new Map<string, Block[]>();
    for (const [name, blocks] of Object.entries(object(raw, path, `entries.${pod}`))) {
      if (!Array.isArray(blocks)) throw checkpointError(path, `entries.${pod}.${name} is not a list`);
      containers.set(name, blocks.map((b, i) => {
        const bb = object(b, path, `entries.${pod}.${name}[${i}]`);
        const type = field(bb, 'type');
        if (typeof type !== 'string') throw checkpointError(path, `entries.${pod}.${name}[${i}].type is not a string`);
        return { numaAffinity: intList(field(bb, 'numaAffinity'), path, `entries.${pod}.${name}[${i}].numaAffinity`), type, size: number(field(bb, 'size') ?? 0, path, `entries.${pod}.${name}[${i}].size`) };
      }));
    }
    entries.set(pod, containers);
  }
  if (checksum !== 0 && checksum !== checksumOf(policy, machine, entries)) throw checkpointError(path, 'checkpoint is corrupted (checksum mismatch)');
  return { policy, machine, entries };
}

/** The state as the policy uses it; `store()` writes it through. */
export interface MemoryState {
  readonly machine: MachineState;
  readonly entries: MemoryAssignments;
  setMachine(machine: MachineState): void;
  store(): void;
}

/** Opens `<stateDir>/memory_manager_state`, writing an empty one when there is none. Throws CM_MEMORY_STATE_INVALID. */
export function openMemoryState(stateDir: string, policy: string): MemoryState {
  const path = join(stateDir, MEMORY_MANAGER_STATE_FILE);
  const fail = (problem: string, cause?: unknown): OrchError => new OrchError(CM_MEMORY_STATE_INVALID, 'invalid',
    `could not restore state from checkpoint: ${problem}, please drain this node and delete the memory manager checkpoint file ${JSON.stringify(path)} before restarting the agent`,
    { subject: path, ...(cause === undefined ? {} : { cause }) });
  const text = readCheckpoint(path);
  let decoded: DecodedMemoryState = { policy, machine: new Map(), entries: new Map() };
  if (text !== undefined) {
    try {
      decoded = decodeMemoryCheckpoint(path, text);
    } catch (err) {
      throw fail(messageOf(err), err);
    }
    if (decoded.policy !== policy) throw fail(`[memorymanager] configured policy ${JSON.stringify(policy)} differs from state checkpoint policy ${JSON.stringify(decoded.policy)}`);
  }
  let machine = decoded.machine;
  const state: MemoryState = {
    get machine() { return machine; },
    entries: decoded.entries,
    setMachine(m) { machine = m; },
    store() { writeCheckpoint(path, encodeMemoryCheckpoint(policy, machine, decoded.entries)); },
  };
  if (text === undefined) state.store();
  return state;
}
