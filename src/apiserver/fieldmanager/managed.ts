/**
 * metadata.managedFields in and out: each entry names a manager (its name, operation Apply or
 * Update, the API version for updates, the subresource) and holds its field set in FieldsV1.
 * Decoded, the entries are a map from the manager's identity (upstream's: the JSON of the entry
 * without time and fields, the API version left out for appliers) to its set, time and whether
 * it applied. Encoding sorts the entries as upstream: by operation, then time, then name.
 */
import type { Schema } from '../schema/index.js';
import { FieldsError, readFields, setToFields, type FieldsV1 } from './fieldsv1.js';
import { FieldSet } from './set.js';

export type Operation = 'Apply' | 'Update';

export interface ManagerId {
  readonly manager: string;
  readonly operation: Operation;
  /** Set for Update managers only (an applier is one manager whatever version it applied). */
  readonly apiVersion: string;
  readonly subresource: string;
}

export interface ManagedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
  /** The FieldsV1 the set was read from, reused when it is written back unchanged. */
  readonly fields?: FieldsV1;
}

export interface Managed {
  /** Sets by manager identity. */
  readonly fields: Map<string, ManagedSet>;
  /** metav1.Time of each manager's last change, by identity. */
  readonly times: Map<string, string>;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

/** Keys made: every write of an object names the same few managers. Bounded. */
const MADE_KEYS = new Map<string, string>();

/** Upstream's identity of a manager: the JSON of its entry without time and fields. */
export function managerKey(id: ManagerId): string {
  // Lengths first: no manager name or version, whatever it holds, makes another tuple's text.
  const tuple = `${id.manager.length}:${id.manager}\0${id.operation}\0${id.apiVersion.length}:${id.apiVersion}\0${id.subresource}`;
  let key = MADE_KEYS.get(tuple);
  if (key === undefined) {
    key = keyText(id);
    if (MADE_KEYS.size >= 10_000) MADE_KEYS.clear();
    MADE_KEYS.set(tuple, key);
  }
  return key;
}

function keyText(id: ManagerId): string {
  return JSON.stringify({
    manager: id.manager,
    operation: id.operation,
    ...(id.operation === 'Apply' || id.apiVersion === '' ? {} : { apiVersion: id.apiVersion }),
    ...(id.subresource === '' ? {} : { subresource: id.subresource }),
  });
}

/** Parsed identities: every write of an object names the same few managers. Bounded. */
const PARSED_KEYS = new Map<string, ManagerId>();

/** The entry fields a key stands for (the inverse of managerKey). */
export function parseManagerKey(key: string): ManagerId {
  const known = PARSED_KEYS.get(key);
  if (known !== undefined) return known;
  const id = parseKeyText(key);
  if (PARSED_KEYS.size >= 10_000) PARSED_KEYS.clear();
  PARSED_KEYS.set(key, id);
  return id;
}

function parseKeyText(key: string): ManagerId {
  const parsed = JSON.parse(key) as Partial<Record<keyof ManagerId, string>>;
  return {
    manager: parsed.manager ?? '',
    operation: parsed.operation === 'Apply' ? 'Apply' : 'Update',
    apiVersion: parsed.apiVersion ?? '',
    subresource: parsed.subresource ?? '',
  };
}

export class ManagedFieldsError extends Error {
  override readonly name = 'ManagedFieldsError';
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Decodes managedFields entries; throws ManagedFieldsError naming the entry that is not valid.
 * With `schema`, each set is fitted to the schema's present rules (see readFields).
 */
export function decodeManaged(entries: readonly unknown[], schema?: Schema): Managed {
  const managed = emptyManaged();
  entries.forEach((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ManagedFieldsError(`managed fields entry ${i} is not an object`);
    const entry = raw as Record<string, unknown>;
    const operation = entry.operation;
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    const apiVersion = str(entry.apiVersion);
    if (apiVersion === '') throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = str(entry.fieldsType);
    if (fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`);
    const key = managerKey({ manager: str(entry.manager), operation, apiVersion, subresource: str(entry.subresource) });
    let read: { set: FieldSet; reconciled: boolean };
    const fields = entry.fieldsV1 ?? {};
    try {
      read = readFields(fields, schema);
    } catch (err) {
      if (err instanceof FieldsError) throw new ManagedFieldsError(`error decoding versioned set of managed fields entry ${i}: ${err.message}`);
      throw err;
    }
    const applied = operation === 'Apply';
    managed.fields.set(key, read.reconciled ? { set: read.set, apiVersion, applied } : { set: read.set, apiVersion, applied, fields: fields as FieldsV1 });
    const time = str(entry.time);
    if (time !== '') managed.times.set(key, time);
  });
  return managed;
}

function seconds(time: string | undefined): number {
  if (time === undefined) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The managedFields entries of `managed`, sorted as upstream (undefined when there are none). */
export function encodeManaged(managed: Managed): Record<string, unknown>[] | undefined {
  if (managed.fields.size === 0) return undefined;
  const rows = [...managed.fields].map(([key, vs]) => {
    const id = parseManagerKey(key);
    const time = managed.times.get(key);
    const fields = vs.fields ?? setToFields(vs.set);
    const operation: Operation = vs.applied ? 'Apply' : 'Update';
    const entry: Record<string, unknown> = {
      manager: id.manager,
      operation,
      apiVersion: vs.apiVersion,
      ...(time === undefined ? {} : { time }),
      fieldsType: 'FieldsV1',
      fieldsV1: fields,
      ...(id.subresource === '' ? {} : { subresource: id.subresource }),
    };
    return { entry, id: { ...id, operation, apiVersion: vs.apiVersion }, time: seconds(time) };
  });
  rows.sort((p, q) => compareText(p.id.operation, q.id.operation) || p.time - q.time || compareText(p.id.manager, q.id.manager)
    || compareText(p.id.apiVersion, q.id.apiVersion) || compareText(p.id.subresource, q.id.subresource));
  return rows.map((r) => r.entry);
}

/** A new versioned set (the FieldsV1 cache dropped: the set changed). */
export function versioned(set: FieldSet, apiVersion: string, applied: boolean): ManagedSet {
  return { set, apiVersion, applied };
}
