/**
 * A small declarative schema language for the configuration-file types. One description of
 * each field drives everything that would otherwise be written several times: the TypeScript
 * type (derived below), defaults, decoding with type checks, unknown-field detection, drop-in
 * merging, source tracking and printing.
 *
 * Durations are held in memory as nanoseconds (a number; see src/api/duration.ts) and printed
 * as Go prints them ("1m0s"). Quantities stay strings, as upstream's types keep them. Lists and
 * maps are never null in memory: Go's nil and empty mean the same for every one of them, and
 * the two with non-empty defaults (enforceNodeAllocatable, evictionHard) are defaulted when nil.
 */

export type Nanoseconds = number;

interface FieldBase<T> {
  readonly default: T;
  /**
   * Upstream keeps this field as a non-pointer and replaces a zero value (0, '', false is never
   * used) by the default when it decodes a file: `port: 0` in a file still means 10250.
   */
  readonly zeroIsUnset?: boolean;
  /** A field the spec marks [Required] (documented; defaults still apply as upstream's do). */
  readonly required?: boolean;
}

export interface BoolField extends FieldBase<boolean> { readonly kind: 'bool' }
export interface IntField extends FieldBase<number> {
  readonly kind: 'int';
  readonly bits: 32 | 64;
  readonly unsigned?: boolean;
}
export interface FloatField extends FieldBase<number> { readonly kind: 'float' }
export interface StringField extends FieldBase<string> { readonly kind: 'string' }
export interface DurationField extends FieldBase<Nanoseconds> { readonly kind: 'duration' }
export interface StringListField extends FieldBase<readonly string[]> { readonly kind: 'strings' }
export interface StringMapField extends FieldBase<Readonly<Record<string, string>>> {
  readonly kind: 'map-string';
}
export interface BoolMapField extends FieldBase<Readonly<Record<string, boolean>>> {
  readonly kind: 'map-bool';
}
export interface StringListMapField extends FieldBase<Readonly<Record<string, readonly string[]>>> {
  readonly kind: 'map-strings';
}
/** An optional int (a Go pointer with no default): null when unset. */
export interface OptionalIntField extends FieldBase<number | null> { readonly kind: 'optional-int'; readonly bits: 32 | 64 }
/** An optional string (a Go pointer with no default, e.g. a time): null when unset, left out when printed. */
export interface OptionalStringField extends FieldBase<string | null> { readonly kind: 'optional-string' }
/** A Go duration that may also be given as an integer number of nanoseconds (TimeOrMetaDuration). */
export interface TimeOrDurationField extends FieldBase<Nanoseconds> { readonly kind: 'time-or-duration' }
/** A nested struct. */
export interface StructField<S extends Schema = Schema> {
  readonly kind: 'struct';
  readonly fields: S;
  /** A Go pointer struct that is nil (printed as absent) unless given. */
  readonly nullable?: boolean;
  readonly required?: boolean;
}
/** A list of structs; elements are checked against `element`. */
export interface ListField<S extends Schema = Schema> {
  readonly kind: 'list';
  readonly element: S;
  readonly default: readonly [];
  readonly required?: boolean;
}

export type Field =
  | BoolField
  | IntField
  | FloatField
  | StringField
  | DurationField
  | StringListField
  | StringMapField
  | BoolMapField
  | StringListMapField
  | OptionalIntField
  | OptionalStringField
  | TimeOrDurationField
  | StructField
  | ListField;

export type Schema = Readonly<Record<string, Field>>;

/** The in-memory value of a field, derived from its description. */
export type ValueOf<F> = F extends StructField<infer S>
  ? F extends { readonly nullable: true }
    ? ObjectOf<S> | null
    : ObjectOf<S>
  : F extends ListField<infer S>
    ? readonly ObjectOf<S>[]
    : F extends FieldBase<infer T>
      ? T
      : never;

export type ObjectOf<S extends Schema> = { -readonly [K in keyof S]: ValueOf<S[K]> };

// Builders keep the schema declarations short and keep literal kinds for the derived types.
type Opts = { zeroIsUnset?: boolean; required?: boolean };

export const bool = (d: boolean, o: Opts = {}): BoolField => ({ kind: 'bool', default: d, ...o });
export const int32 = (d: number, o: Opts = {}): IntField => ({ kind: 'int', bits: 32, default: d, ...o });
export const int64 = (d: number, o: Opts = {}): IntField => ({ kind: 'int', bits: 64, default: d, ...o });
export const uint32 = (d: number, o: Opts = {}): IntField => ({ kind: 'int', bits: 32, unsigned: true, default: d, ...o });
export const float = (d: number, o: Opts = {}): FloatField => ({ kind: 'float', default: d, ...o });
export const str = (d: string, o: Opts = {}): StringField => ({ kind: 'string', default: d, ...o });
export const duration = (d: Nanoseconds, o: Opts = {}): DurationField => ({ kind: 'duration', default: d, ...o });
export const timeOrDuration = (d: Nanoseconds, o: Opts = {}): TimeOrDurationField => ({ kind: 'time-or-duration', default: d, ...o });
export const strings = (d: readonly string[] = [], o: Opts = {}): StringListField => ({ kind: 'strings', default: d, ...o });
export const stringMap = (d: Readonly<Record<string, string>> = {}, o: Opts = {}): StringMapField => ({ kind: 'map-string', default: d, ...o });
export const boolMap = (): BoolMapField => ({ kind: 'map-bool', default: {} });
export const stringListMap = (): StringListMapField => ({ kind: 'map-strings', default: {} });
export const optionalInt32 = (): OptionalIntField => ({ kind: 'optional-int', bits: 32, default: null });
export const optionalString = (): OptionalStringField => ({ kind: 'optional-string', default: null });
export function struct<S extends Schema>(fields: S, o: { required?: boolean } = {}): StructField<S> {
  return { kind: 'struct', fields, ...o };
}
export function nullableStruct<S extends Schema>(fields: S): StructField<S> & { readonly nullable: true } {
  return { kind: 'struct', fields, nullable: true };
}
export function list<S extends Schema>(element: S, o: { required?: boolean } = {}): ListField<S> {
  return { kind: 'list', element, default: [], ...o };
}

export const SECOND: Nanoseconds = 1_000_000_000;
export const MINUTE: Nanoseconds = 60 * SECOND;
export const HOUR: Nanoseconds = 60 * MINUTE;
export const MILLISECOND: Nanoseconds = 1_000_000;

/** A deep copy of a field's default (structs built from their fields' defaults). */
export function defaultOf(field: Field): unknown {
  if (field.kind === 'struct') {
    if (field.nullable === true) return null;
    return defaultsOf(field.fields);
  }
  return structuredClone(field.default);
}

/** The default object of a schema. */
export function defaultsOf(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema)) out[name] = defaultOf(field);
  return out;
}

/** Visits every leaf (non-struct) field with its dotted path. Nullable structs are leaves. */
export function forEachLeaf(schema: Schema, visit: (path: string, field: Field) => void, prefix = ''): void {
  for (const [name, field] of Object.entries(schema)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (field.kind === 'struct' && field.nullable !== true) forEachLeaf(field.fields, visit, path);
    else visit(path, field);
  }
}

/** The field at a dotted path, or undefined. */
export function fieldAt(schema: Schema, path: string): Field | undefined {
  let current: Schema = schema;
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i++) {
    const f: Field | undefined = current[parts[i] ?? ''];
    if (f === undefined) return undefined;
    if (i === parts.length - 1) return f;
    if (f.kind !== 'struct') return undefined;
    current = f.fields;
  }
  return undefined;
}

/** Reads a dotted path of a plain object. */
export function getPath(obj: Record<string, unknown>, path: string): unknown {
  let current: unknown = obj;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Writes a dotted path of a plain object, creating intermediate objects. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let current = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    const key = parts[i] ?? '';
    const next = current[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      const created: Record<string, unknown> = {};
      current[key] = created;
      current = created;
    } else {
      current = next as Record<string, unknown>;
    }
  }
  current[parts[parts.length - 1] ?? ''] = value;
}
