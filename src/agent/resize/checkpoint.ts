/**
 * The resize checkpoint, `pod_status_manager_state` under the agent's root directory, in
 * upstream's format (v1.28 status/state): JSON with `allocationEntries` (pod UID → container →
 * the requests the pod was admitted or resized at), `resizeStatusEntries` (pod UID → the resize
 * decision) and a `checksum`, FNV-1a over Go's spew printing of the checkpoint struct as
 * upstream prints it, quantities included (goQuantity below), so that an edited file is refused.
 */
import { checkpointError, field, fnv32a, goDump, goInt, goString, parseCheckpoint, readCheckpoint, writeCheckpoint, type GoValue } from '../cm/index.js';

export const POD_STATUS_MANAGER_STATE_FILE = 'pod_status_manager_state';

/** A container's resource list (resource name → quantity text). */
export type ResourceList = Readonly<Record<string, string>>;

export type ResizeStatus = 'Proposed' | 'InProgress' | 'Deferred' | 'Infeasible';

export const RESIZE_STATUSES: readonly ResizeStatus[] = ['Proposed', 'InProgress', 'Deferred', 'Infeasible'];

export interface ResizeState {
  /** Pod UID → container name → allocated requests. */
  readonly allocations: ReadonlyMap<string, ReadonlyMap<string, ResourceList>>;
  /** Pod UID → the last resize decision. */
  readonly resizeStatus: ReadonlyMap<string, ResizeStatus>;
}

const SUFFIXES: Readonly<Record<string, readonly [number, number, 'DecimalSI' | 'BinarySI']>> = {
  '': [10, 0, 'DecimalSI'], n: [10, -9, 'DecimalSI'], u: [10, -6, 'DecimalSI'], m: [10, -3, 'DecimalSI'], k: [10, 3, 'DecimalSI'],
  M: [10, 6, 'DecimalSI'], G: [10, 9, 'DecimalSI'], T: [10, 12, 'DecimalSI'], P: [10, 15, 'DecimalSI'], E: [10, 18, 'DecimalSI'],
  Ki: [2, 10, 'BinarySI'], Mi: [2, 20, 'BinarySI'], Gi: [2, 30, 'BinarySI'], Ti: [2, 40, 'BinarySI'], Pi: [2, 50, 'BinarySI'], Ei: [2, 60, 'BinarySI'],
};

/**
 * A resource.Quantity as apimachinery's ParseQuantity leaves it (its int64 fast path: value and
 * scale, the text kept when it is in canonical form), printed by spew. Quantities off that path
 * (more than 18 digits, fractions of binary units) print their text only: their checksum cannot
 * match upstream's, which then refuses the file (and this agent refuses upstream's).
 */
export function goQuantity(text: string): GoValue {
  const m = /^([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(text);
  const suffix = m?.[4] ?? '';
  const exp = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  const known: readonly [number, number, string] | undefined = exp !== null ? [10, Number(exp[1]), 'DecimalExponent'] : SUFFIXES[suffix];
  const fields = (value: bigint, scale: number, format: string, s: string): GoValue => ({
    kind: 'struct', type: 'resource.Quantity', fields: [
      ['i', { kind: 'struct', type: 'resource.int64Amount', fields: [['value', goInt(value, 'int64')], ['scale', goInt(scale, 'resource.Scale')]] }],
      ['d', { kind: 'struct', type: 'resource.infDecAmount', fields: [['Dec', goString('<nil>', '*inf.Dec')]] }],
      ['s', goString(s)],
      ['Format', goString(format, 'resource.Format')],
    ],
  });
  if (m === null || known === undefined) return fields(0n, 0, 'DecimalSI', text);
  const [base, exponent, format] = known;
  const positive = m[1] !== '-';
  const num = m[2] === '' ? '0' : m[2] ?? '0';
  const denom = m[3] ?? '';
  let scale = 0;
  let mantissa = 1n;
  let precision: number;
  if (base === 10) {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  } else if (exponent >= 0 && denom === '') {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
  } else {
    precision = -1;
  }
  scale -= denom.length;
  if (precision < 0 || scale < -9) return fields(0n, 0, format, text);
  const shifted = num + denom;
  const value = BigInt(shifted);
  let result = value * mantissa;
  if (result > 9223372036854775807n) return fields(0n, 0, format, text);
  if (!positive) result = -result;
  const canonical = format === 'BinarySI'
    ? exponent % 10 === 0 && (value & 7n) !== 0n
    : scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
  return fields(result, scale, format, canonical ? text : '');
}

function checksumOf(state: ResizeState): number {
  const allocations: GoValue = {
    kind: 'map', type: 'map[string]map[string]v1.ResourceList',
    entries: [...state.allocations].map(([uid, containers]) => [goString(uid), {
      kind: 'map', type: 'map[string]v1.ResourceList',
      entries: [...containers].map(([name, list]) => [goString(name), {
        kind: 'map', type: 'v1.ResourceList', entries: Object.entries(list).map(([r, q]) => [goString(r, 'v1.ResourceName'), goQuantity(q)] as const),
      }] as const),
    }] as const),
  };
  const statuses: GoValue = {
    kind: 'map', type: 'map[string]v1.PodResizeStatus',
    entries: [...state.resizeStatus].map(([uid, s]) => [goString(uid), goString(s, 'v1.PodResizeStatus')] as const),
  };
  return fnv32a(goDump({
    kind: 'ptr', type: '*state.PodResourceAllocationCheckpoint', elem: {
      kind: 'struct', type: 'state.PodResourceAllocationCheckpoint', fields: [
        ['AllocationEntries', allocations], ['ResizeStatusEntries', statuses], ['Checksum', goInt(0, 'checksum.Checksum')],
      ],
    },
  }));
}

/** The file's text for a state (Go's encoding/json: map keys sorted, empty maps left out). */
export function formatResizeState(state: ResizeState): string {
  const sorted = <T>(entries: Iterable<readonly [string, T]>): (readonly [string, T])[] => [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: Record<string, unknown> = {};
  if (state.allocations.size > 0) {
    out.allocationEntries = Object.fromEntries(sorted(state.allocations).map(([uid, containers]) => [uid, Object.fromEntries(
      sorted(containers).map(([name, list]) => [name, Object.fromEntries(sorted(Object.entries(list)))]),
    )]));
  }
  if (state.resizeStatus.size > 0) out.resizeStatusEntries = Object.fromEntries(sorted(state.resizeStatus));
  out.checksum = checksumOf(state);
  return JSON.stringify(out);
}

function stringMap(path: string, value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw checkpointError(path, `${what} is not an object`);
  return value as Record<string, unknown>;
}

/** Parses and verifies a state file's text. Throws CM_CHECKPOINT_FAILED naming the file and what is wrong. */
export function parseResizeState(path: string, text: string): ResizeState {
  const object = parseCheckpoint(path, text);
  const allocations = new Map<string, Map<string, ResourceList>>();
  for (const [uid, containers] of Object.entries(stringMap(path, field(object, 'allocationEntries'), 'allocationEntries'))) {
    const byName = new Map<string, ResourceList>();
    for (const [name, list] of Object.entries(stringMap(path, containers, `allocationEntries[${uid}]`))) {
      const resources: Record<string, string> = {};
      for (const [resource, quantity] of Object.entries(stringMap(path, list, `allocationEntries[${uid}][${name}]`))) {
        if (typeof quantity !== 'string') throw checkpointError(path, `allocationEntries[${uid}][${name}][${resource}] is not a quantity string`);
        resources[resource] = quantity;
      }
      byName.set(name, resources);
    }
    allocations.set(uid, byName);
  }
  const resizeStatus = new Map<string, ResizeStatus>();
  for (const [uid, s] of Object.entries(stringMap(path, field(object, 'resizeStatusEntries'), 'resizeStatusEntries'))) {
    if (typeof s !== 'string' || !(RESIZE_STATUSES as readonly string[]).includes(s)) {
      throw checkpointError(path, `resizeStatusEntries[${uid}] ${JSON.stringify(s)} is not one of ${RESIZE_STATUSES.join(', ')}`);
    }
    resizeStatus.set(uid, s as ResizeStatus);
  }
  const state = { allocations, resizeStatus };
  const checksum = field(object, 'checksum');
  const expected = checksumOf(state);
  if (checksum !== expected) throw checkpointError(path, `checksum mismatch: the file says ${JSON.stringify(checksum)}, its content hashes to ${expected} (the file was edited or is damaged)`);
  return state;
}

/** The state in the file, or an empty one when there is no file. */
export function loadResizeState(path: string): ResizeState {
  const text = readCheckpoint(path);
  return text === undefined ? { allocations: new Map(), resizeStatus: new Map() } : parseResizeState(path, text);
}

export function storeResizeState(path: string, state: ResizeState): void {
  writeCheckpoint(path, formatResizeState(state));
}
