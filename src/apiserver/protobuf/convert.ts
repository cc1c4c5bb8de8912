/**
 * Between the JSON form of an object (what the registry handles) and protobufjs message
 * objects, by reflection over the message types:
 * - field names are the JSON names; an `(orch.inline)` field's fields sit at the parent's level;
 * - scalar zeros of fields without `optional` read as absent (Go writes them always, and its
 *   JSON leaves them out); `optional` fields keep what the wire says; sub-messages present on
 *   the wire are kept even when empty (`emptyDir: {}`);
 * - the apimachinery value types have their JSON forms: Time and MicroTime are RFC 3339 texts,
 *   Duration Go's duration text, Quantity its text, IntOrString a number or a text, FieldsV1 and
 *   RawExtension the JSON their bytes hold, ExtraValue a list of texts; bytes are base64.
 */
import protobuf from 'protobufjs';
import { formatDuration, parseDuration } from '../../api/duration.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** A protobufjs int64 (a Long when long.js is loaded) as a number. */
function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && 'toNumber' in value && typeof value.toNumber === 'function') return (value.toNumber as () => number)();
  if (typeof value === 'string') return Number(value);
  return 0;
}

function isZero(value: unknown): boolean {
  if (value === '' || value === false || value === 0) return true;
  return typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && num(value) === 0 && 'low' in value;
}

function timeText(message: Obj, micro: boolean): string | undefined {
  const seconds = num(message.seconds);
  const nanos = num(message.nanos);
  if (seconds === 0 && nanos === 0) return undefined;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!micro) return `${iso}Z`;
  return `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

function timeMessage(text: unknown): Obj | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  const seconds = Math.floor(ms / 1000);
  const nanos = Number(fraction.padEnd(9, '0').slice(0, 9));
  return { seconds, ...(nanos === 0 ? {} : { nanos }) };
}

function parseRawJson(raw: unknown): unknown {
  if (!(raw instanceof Uint8Array) || raw.length === 0) return undefined;
  return JSON.parse(Buffer.from(raw).toString('utf8')) as unknown;
}

interface ValueType {
  toJson(message: Obj): unknown;
  fromJson(value: unknown): Obj | undefined;
}

/** The apimachinery value types, by the full name of their message. */
const VALUE_TYPES: Readonly<Record<string, ValueType>> = {
  'orch.meta.v1.Time': { toJson: (m) => timeText(m, false), fromJson: timeMessage },
  'orch.meta.v1.MicroTime': { toJson: (m) => timeText(m, true), fromJson: timeMessage },
  'orch.meta.v1.Duration': {
    toJson: (m) => formatDuration(num(m.duration)),
    fromJson: (v) => (typeof v === 'string' ? { duration: parseDuration(v) } : undefined),
  },
  'orch.meta.v1.Quantity': {
    toJson: (m) => (typeof m.string === 'string' ? m.string : ''),
    fromJson: (v) => (typeof v === 'string' || typeof v === 'number' ? { string: String(v) } : undefined),
  },
  'orch.meta.v1.IntOrString': {
    toJson: (m) => (num(m.type) === 1 ? (typeof m.strVal === 'string' ? m.strVal : '') : num(m.intVal)),
    fromJson: (v) => (typeof v === 'number' ? { type: 0, intVal: v } : typeof v === 'string' ? { type: 1, strVal: v } : undefined),
  },
  'orch.meta.v1.FieldsV1': {
    toJson: (m) => parseRawJson(m.Raw),
    fromJson: (v) => ({ Raw: Buffer.from(JSON.stringify(v)) }),
  },
  'orch.meta.v1.RawExtension': {
    toJson: (m) => parseRawJson(m.raw),
    fromJson: (v) => ({ raw: Buffer.from(JSON.stringify(v)) }),
  },
};

const EXTRA_VALUE: ValueType = {
  toJson: (m) => (Array.isArray(m.items) ? [...(m.items as string[])] : []),
  fromJson: (v) => (Array.isArray(v) ? { items: v.filter((s) => typeof s === 'string') } : undefined),
};

function valueType(type: protobuf.Type): ValueType | undefined {
  const name = type.fullName.replace(/^\./, '');
  return VALUE_TYPES[name] ?? (type.name === 'ExtraValue' ? EXTRA_VALUE : undefined);
}

const isInline = (field: protobuf.Field): boolean => field.options?.['(orch.inline)'] === true;
const hasPresence = (field: protobuf.Field): boolean => field.options?.proto3_optional === true;

function scalarToJson(field: protobuf.Field, value: unknown): unknown {
  if (field.bytes) return Buffer.from(value as Uint8Array).toString('base64');
  if (field.long) return num(value);
  return value;
}

function valueToJson(field: protobuf.Field, value: unknown): unknown {
  const type = field.resolvedType;
  if (type instanceof protobuf.Type) return messageToJson(type, value as Obj);
  return scalarToJson(field, value);
}

/** The JSON form of a decoded message (undefined for a value type that reads as absent). */
export function messageToJson(type: protobuf.Type, message: Obj): unknown {
  const special = valueType(type);
  if (special !== undefined) return special.toJson(message);
  const out: Obj = {};
  for (const field of type.fieldsArray) {
    if (!Object.hasOwn(message, field.name)) continue;
    const value = message[field.name];
    if (value === null || value === undefined) continue;
    if (field.map) {
      const entries = Object.entries(value as Obj).map(([k, v]) => [k, valueToJson(field, v)] as const).filter(([, v]) => v !== undefined);
      if (entries.length > 0) out[field.name] = Object.fromEntries(entries);
    } else if (field.repeated) {
      const items = (value as unknown[]).map((v) => valueToJson(field, v));
      if (items.length > 0) out[field.name] = items;
    } else if (field.resolvedType instanceof protobuf.Type) {
      const converted = messageToJson(field.resolvedType, value as Obj);
      if (isInline(field) && isObj(converted)) Object.assign(out, converted);
      else if (converted !== undefined) out[field.name] = converted;
    } else if (hasPresence(field) || !isZero(value)) {
      out[field.name] = scalarToJson(field, value);
    }
  }
  return out;
}

function scalarFromJson(field: protobuf.Field, value: unknown): unknown {
  if (field.bytes) return typeof value === 'string' ? Buffer.from(value, 'base64') : undefined;
  return value;
}

function valueFromJson(field: protobuf.Field, value: unknown): unknown {
  const type = field.resolvedType;
  if (type instanceof protobuf.Type) return messageFromJson(type, value);
  return scalarFromJson(field, value);
}

/**
 * The message object (for Type.encode) of a JSON value; fields the type does not have are left
 * out (the registry has checked the object against its schema).
 */
export function messageFromJson(type: protobuf.Type, value: unknown): Obj | undefined {
  const special = valueType(type);
  if (special !== undefined) return special.fromJson(value);
  if (!isObj(value)) return undefined;
  const out: Obj = {};
  for (const field of type.fieldsArray) {
    if (isInline(field) && field.resolvedType instanceof protobuf.Type) {
      const inner = messageFromJson(field.resolvedType, value);
      if (inner !== undefined && Object.keys(inner).length > 0) out[field.name] = inner;
      continue;
    }
    const v = value[field.name];
    if (v === undefined || v === null) continue;
    if (field.map) {
      if (!isObj(v)) continue;
      const entries = Object.entries(v).map(([k, item]) => [k, valueFromJson(field, item)] as const).filter(([, item]) => item !== undefined);
      out[field.name] = Object.fromEntries(entries);
    } else if (field.repeated) {
      if (!Array.isArray(v)) continue;
      out[field.name] = v.map((item) => valueFromJson(field, item)).filter((item) => item !== undefined);
    } else {
      const converted = valueFromJson(field, v);
      if (converted !== undefined) out[field.name] = converted;
    }
  }
  return out;
}
