/**
 * The device manager's checkpoint, `<device-plugins dir>/nodeagent_internal_checkpoint`, in the
 * upstream agent's format (Go's encoding/json of its checkpoint.Data):
 *
 *   {"Data":{"PodDeviceEntries":[{"PodUID":"…","ContainerName":"main","ResourceName":"example.com/dev",
 *     "DeviceIDs":{"0":["dev-0"],"-1":["dev-9"]},"AllocResp":"<base64 of ContainerAllocateResponse>"}],
 *     "RegisteredDevices":{"example.com/dev":["dev-0","dev-1"]}},"Checksum":1234567890}
 *
 * DeviceIDs groups a container's devices by NUMA node (-1: no topology); AllocResp is the
 * plugin's answer in protobuf bytes; RegisteredDevices holds the healthy devices of each
 * resource. The checksum is FNV-1a over Go's spew printing of `Data` (cm/checkpoint), so a
 * checkpoint written by either agent is read by the other, and an edited one is refused.
 */
import { checkpointError, field, fnv32a, goDump, goInt, goString, parseCheckpoint, type GoValue } from '../checkpoint/index.js';
import { decodeContainerAllocation, type ContainerAllocation } from './api.js';

/** One container's devices of one resource. */
export interface CheckpointEntry {
  readonly podUID: string;
  readonly containerName: string;
  readonly resourceName: string;
  /** Device IDs by NUMA node (-1: devices without topology). */
  readonly deviceIds: ReadonlyMap<number, readonly string[]>;
  /** The plugin's answer, as protobuf bytes. */
  readonly allocResp: Uint8Array;
}

export interface CheckpointData {
  /** Null when there are none (Go writes a nil slice as null, and the checksum tells the two apart). */
  readonly entries: readonly CheckpointEntry[] | null;
  /** The healthy devices of each registered resource. */
  readonly registered: ReadonlyMap<string, readonly string[]>;
}

function entryValue(e: CheckpointEntry): GoValue {
  const ids: GoValue = {
    kind: 'map', type: 'checkpoint.DevicesPerNUMA',
    entries: [...e.deviceIds].map(([node, list]) => [goInt(node, 'int64'), { kind: 'slice', type: '[]string', items: list.map((id) => goString(id)) }] as const),
  };
  return {
    kind: 'struct', type: 'checkpoint.PodDevicesEntry', fields: [
      ['PodUID', goString(e.podUID)],
      ['ContainerName', goString(e.containerName)],
      ['ResourceName', goString(e.resourceName)],
      ['DeviceIDs', ids],
      ['AllocResp', { kind: 'slice', type: '[]uint8', items: [...e.allocResp].map((b) => goInt(b, 'uint8')) }],
    ],
  };
}

/** The checksum upstream computes over its checkpointData struct. */
export function checkpointChecksum(data: CheckpointData): number {
  return fnv32a(goDump({
    kind: 'struct', type: 'checkpoint.checkpointData', fields: [
      ['PodDeviceEntries', { kind: 'slice', type: '[]checkpoint.PodDevicesEntry', items: data.entries === null ? null : data.entries.map(entryValue) }],
      ['RegisteredDevices', {
        kind: 'map', type: 'map[string][]string',
        entries: [...data.registered].map(([resource, ids]) => [goString(resource), { kind: 'slice', type: '[]string', items: ids.map((id) => goString(id)) }] as const),
      }],
    ],
  }));
}

/** The file's text: Go's encoding/json of checkpoint.Data (map keys sorted as Go sorts them). */
export function encodeCheckpoint(data: CheckpointData): string {
  const sortedObject = <T>(entries: Iterable<readonly [string, T]>): Record<string, T> => {
    const out: Record<string, T> = {};
    for (const [k, v] of [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) out[k] = v;
    return out;
  };
  const entries = data.entries === null ? null : data.entries.map((e) => ({
    PodUID: e.podUID,
    ContainerName: e.containerName,
    ResourceName: e.resourceName,
    DeviceIDs: sortedObject([...e.deviceIds].map(([node, ids]) => [String(node), ids] as const)),
    AllocResp: Buffer.from(e.allocResp).toString('base64'),
  }));
  return JSON.stringify({ Data: { PodDeviceEntries: entries, RegisteredDevices: sortedObject(data.registered) }, Checksum: checkpointChecksum(data) });
}

function strings(value: unknown, path: string, what: string): string[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw checkpointError(path, `${what} is not a list of strings`);
  return value as string[];
}

function object(value: unknown, path: string, what: string): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw checkpointError(path, `${what} is not an object`);
  return value as Record<string, unknown>;
}

function decodeEntry(raw: unknown, path: string, i: number): CheckpointEntry {
  const o = object(raw, path, `PodDeviceEntries[${i}]`);
  const text = (name: string): string => {
    const v = field(o, name);
    if (typeof v !== 'string') throw checkpointError(path, `PodDeviceEntries[${i}].${name} is not a string`);
    return v;
  };
  const ids = new Map<number, string[]>();
  for (const [node, list] of Object.entries(object(field(o, 'DeviceIDs'), path, `PodDeviceEntries[${i}].DeviceIDs`))) {
    const n = Number(node);
    if (!/^-?\d+$/.test(node) || !Number.isSafeInteger(n)) throw checkpointError(path, `PodDeviceEntries[${i}].DeviceIDs: NUMA node "${node}" is not an integer`);
    ids.set(n, strings(list, path, `PodDeviceEntries[${i}].DeviceIDs[${node}]`));
  }
  const resp = field(o, 'AllocResp');
  if (resp !== null && resp !== undefined && (typeof resp !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(resp))) {
    throw checkpointError(path, `PodDeviceEntries[${i}].AllocResp is not base64`);
  }
  return {
    podUID: text('PodUID'), containerName: text('ContainerName'), resourceName: text('ResourceName'), deviceIds: ids,
    allocResp: Buffer.from(typeof resp === 'string' ? resp : '', 'base64'),
  };
}

/**
 * Parses and verifies a checkpoint's text. Throws CM_CHECKPOINT_FAILED naming `path` when it is
 * not JSON of that shape or its checksum does not match (an edited or damaged file).
 */
export function decodeCheckpoint(path: string, text: string): CheckpointData {
  const top = parseCheckpoint(path, text);
  const dataObject = object(field(top, 'Data'), path, 'Data');
  const rawEntries = field(dataObject, 'PodDeviceEntries');
  if (rawEntries !== null && rawEntries !== undefined && !Array.isArray(rawEntries)) throw checkpointError(path, 'Data.PodDeviceEntries is not a list');
  const entries = Array.isArray(rawEntries) ? rawEntries.map((e, i) => decodeEntry(e, path, i)) : null;
  const registered = new Map<string, string[]>();
  for (const [resource, ids] of Object.entries(object(field(dataObject, 'RegisteredDevices'), path, 'Data.RegisteredDevices'))) {
    registered.set(resource, strings(ids, path, `Data.RegisteredDevices[${resource}]`));
  }
  const data: CheckpointData = { entries, registered };
  const stored = field(top, 'Checksum');
  const actual = checkpointChecksum(data);
  if (stored !== actual) {
    throw checkpointError(path, `checksum ${String(stored)} does not match the content (${actual}): the file was changed or damaged`);
  }
  return data;
}

/** An entry's allocation. Throws when its bytes are not a ContainerAllocateResponse. */
export function entryAllocation(entry: CheckpointEntry): ContainerAllocation {
  return decodeContainerAllocation(entry.allocResp);
}
