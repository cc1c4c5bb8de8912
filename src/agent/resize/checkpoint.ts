/**
 * The resize checkpoint, `pod_status_manager_state` under the agent's root directory, in
 * upstream's format (v1.28 status/state): JSON with `allocationEntries` (pod UID → container →
 * the requests the pod was admitted or resized at), `resizeStatusEntries` (pod UID → the resize
 * decision) and a `checksum`, FNV-1a over Go's spew printing of the checkpoint struct as
 * upstream prints it, quantities included (goQuantity below), so that an edited file is refused.
 * The quantities are written as upstream's kubelet writes what its API server sends (the
 * canonical text, checkpointQuantity), so that upstream verifies this agent's file and this agent
 * upstream's.
 */
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
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

interface FastQuantity {
  readonly value: bigint;
  readonly scale: number;
  readonly format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
  /** ParseQuantity keeps the text (it is in canonical form). */
  readonly kept: boolean;
}

/**
 * apimachinery's ParseQuantity on its int64 fast path (value and scale; "0" its own shortcut),
 * or undefined off it (more than 18 digits, fractions of binary units, below nano: inf.Dec).
 */
function parseFast(text: string): FastQuantity | undefined {
  if (text === '0') return { value: 0n, scale: 0, format: 'DecimalSI', kept: true };
  const m = /^([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(text);
  const suffix = m?.[4] ?? '';
  const exp = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  const known = exp !== null ? [10, Number(exp[1]), 'DecimalExponent'] as const : SUFFIXES[suffix];
  if (m === null || known === undefined) return undefined;
  const [base, exponent, format] = known;
  // Leading zeros are dropped; no digit left before the point reads as "0".
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
  if (precision < 0 || scale < -9) return undefined;
  const shifted = num + denom;
  const value = BigInt(shifted);
  const result = value * mantissa;
  if (result > 9223372036854775807n) return undefined;
  const kept = format === 'BinarySI'
    ? exponent % 10 === 0 && (value & 7n) !== 0n
    : scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
  return { value: m[1] === '-' ? -result : result, scale, format, kept };
}

/**
 * A resource.Quantity as ParseQuantity leaves it, printed by spew. Quantities off its fast path
 * print their text only: their checksum cannot match upstream's. The agent never writes those
 * (checkpointQuantity).
 */
export function goQuantity(text: string): GoValue {
  const q = parseFast(text);
  const fields = (value: bigint, scale: number, format: string, s: string): GoValue => ({
    kind: 'struct', type: 'resource.Quantity', fields: [
      ['i', { kind: 'struct', type: 'resource.int64Amount', fields: [['value', goInt(value, 'int64')], ['scale', goInt(scale, 'resource.Scale')]] }],
      ['d', { kind: 'struct', type: 'resource.infDecAmount', fields: [['Dec', goString('<nil>', '*inf.Dec')]] }],
      ['s', goString(s)],
      ['Format', goString(format, 'resource.Format')],
    ],
  });
  return q === undefined ? fields(0n, 0, 'DecimalSI', text) : fields(q.value, q.scale, q.format, q.kept ? text : '');
}

/**
 * The text upstream's kubelet writes for a quantity the API server sent as `text`: the text
 * when ParseQuantity keeps it, else the canonical form (Quantity.MarshalJSON), as the API
 * server itself would have sent it. Such a text parses back to what was hashed, so the file
 * verifies here and upstream; the input may be any valid quantity ("1.5Gi" is written "1536Mi").
 */
export function checkpointQuantity(text: string | number): string {
  const raw = String(text);
  if (parseFast(raw)?.kept === true) return raw;
  try {
    return formatQuantity(parseQuantity(raw));
  } catch {
    // Validated by the API server; a malformed one is kept as it is (and hashed as its text).
    return raw;
  }
}

/** The allocation entries as the file holds them: null where Go has a nil map (a container without requests). */
type FileEntries = ReadonlyMap<string, ReadonlyMap<string, ResourceList | null> | null>;

function checksumOf(allocations: FileEntries, resizeStatus: ReadonlyMap<string, ResizeStatus>): number {
  const list = (l: ResourceList | null): GoValue => ({
    kind: 'map', type: 'v1.ResourceList', entries: l === null ? null : Object.entries(l).map(([r, q]) => [goString(r, 'v1.ResourceName'), goQuantity(q)] as const),
  });
  const entries: GoValue = {
    kind: 'map', type: 'map[string]map[string]v1.ResourceList',
    entries: [...allocations].map(([uid, containers]) => [goString(uid), {
      kind: 'map', type: 'map[string]v1.ResourceList',
      entries: containers === null ? null : [...containers].map(([name, l]) => [goString(name), list(l)] as const),
    }] as const),
  };
  const statuses: GoValue = {
    kind: 'map', type: 'map[string]v1.PodResizeStatus',
    entries: [...resizeStatus].map(([uid, s]) => [goString(uid), goString(s, 'v1.PodResizeStatus')] as const),
  };
  // The kubelet's maps are made before it reads or writes: an absent entry list is empty, not nil.
  return fnv32a(goDump({
    kind: 'ptr', type: '*state.PodResourceAllocationCheckpoint', elem: {
      kind: 'struct', type: 'state.PodResourceAllocationCheckpoint', fields: [
        ['AllocationEntries', entries], ['ResizeStatusEntries', statuses], ['Checksum', goInt(0, 'checksum.Checksum')],
      ],
    },
  }));
}

/**
 * The file's text for a state (Go's encoding/json: map keys sorted, empty maps left out), with
 * each quantity as upstream writes it (checkpointQuantity) and a container without requests as
 * null (upstream's allocation of a container with no requests is a nil list).
 */
export function formatResizeState(state: ResizeState): string {
  const sorted = <T>(entries: Iterable<readonly [string, T]>): (readonly [string, T])[] => [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const file = new Map([...state.allocations].map(([uid, containers]) => [uid, new Map([...containers].map(([name, l]) => {
    const written = Object.entries(l).map(([r, q]) => [r, checkpointQuantity(q)] as const);
    return [name, written.length === 0 ? null : Object.fromEntries(written)];
  }))]));
  const out: Record<string, unknown> = {};
  if (file.size > 0) {
    out.allocationEntries = Object.fromEntries(sorted(file).map(([uid, containers]) => [uid, Object.fromEntries(
      sorted(containers).map(([name, l]) => [name, l === null ? null : Object.fromEntries(sorted(Object.entries(l)))]),
    )]));
  }
  if (state.resizeStatus.size > 0) out.resizeStatusEntries = Object.fromEntries(sorted(state.resizeStatus));
  out.checksum = checksumOf(file, state.resizeStatus);
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
  const file = new Map<string, Map<string, ResourceList | null> | null>();
  for (const [uid, containers] of Object.entries(stringMap(path, field(object, 'allocationEntries'), 'allocationEntries'))) {
    if (containers === null) {
      file.set(uid, null);
      continue;
    }
    const byName = new Map<string, ResourceList | null>();
    for (const [name, list] of Object.entries(stringMap(path, containers, `allocationEntries[${uid}]`))) {
      if (list === null) {
        byName.set(name, null);
        continue;
      }
      const resources: Record<string, string> = {};
      for (const [resource, quantity] of Object.entries(stringMap(path, list, `allocationEntries[${uid}][${name}]`))) {
        if (typeof quantity !== 'string') throw checkpointError(path, `allocationEntries[${uid}][${name}][${resource}] is not a quantity string`);
        resources[resource] = quantity;
      }
      byName.set(name, resources);
    }
    file.set(uid, byName);
  }
  const resizeStatus = new Map<string, ResizeStatus>();
  for (const [uid, s] of Object.entries(stringMap(path, field(object, 'resizeStatusEntries'), 'resizeStatusEntries'))) {
    if (typeof s !== 'string' || !(RESIZE_STATUSES as readonly string[]).includes(s)) {
      throw checkpointError(path, `resizeStatusEntries[${uid}] ${JSON.stringify(s)} is not one of ${RESIZE_STATUSES.join(', ')}`);
    }
    resizeStatus.set(uid, s as ResizeStatus);
  }
  const checksum = field(object, 'checksum');
  const expected = checksumOf(file, resizeStatus);
  if (checksum !== expected) throw checkpointError(path, `checksum mismatch: the file says ${JSON.stringify(checksum)}, its content hashes to ${expected} (the file was edited or is damaged)`);
  const allocations = new Map([...file].map(([uid, containers]) => [uid, new Map([...(containers ?? [])].map(([name, l]) => [name, l ?? {}]))]));
  return { allocations, resizeStatus };
}

/** The state in the file, or an empty one when there is no file. */
export function loadResizeState(path: string): ResizeState {
  const text = readCheckpoint(path);
  return text === undefined ? { allocations: new Map(), resizeStatus: new Map() } : parseResizeState(path, text);
}

export function storeResizeState(path: string, state: ResizeState): void {
  writeCheckpoint(path, formatResizeState(state));
}
