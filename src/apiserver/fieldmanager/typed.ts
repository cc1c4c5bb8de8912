/**
 * Objects seen through their schema, as structured-merge-diff's typed values: what each node is
 * (a scalar, a struct, a map or a list with its rule), how a list item is named (by its key
 * fields, its value or its index), the field set of an object, and the checks an applied
 * configuration must pass (no duplicate or unnamed items in map lists and sets). A field without
 * a detailed schema (`any`) is deduced from its value as upstream does for such fields: objects
 * are maps merged key by key, lists atomic, anything else a scalar.
 */
import { isAtomicMap, listRule, type ListRule, type ObjectSchema, type Schema } from '../schema/index.js';
import { elementText, fieldElement, indexElement, keyElement, pathText, valueElement, type Path, type PathElement } from './path.js';
import { FieldSet } from './set.js';

export const DEDUCED: Schema = { type: 'any' };
const ATOMIC_RULE: ListRule = { kind: 'atomic' };

export type Atom =
  | { readonly kind: 'scalar' }
  | { readonly kind: 'struct'; readonly schema: ObjectSchema; readonly atomic: boolean }
  | { readonly kind: 'map'; readonly values: Schema; readonly atomic: boolean }
  | { readonly kind: 'list'; readonly items: Schema; readonly rule: ListRule };

const SCALAR: Atom = { kind: 'scalar' };
const DEDUCED_MAP: Atom = { kind: 'map', values: DEDUCED, atomic: false };
const DEDUCED_LIST: Atom = { kind: 'list', items: DEDUCED, rule: ATOMIC_RULE };

export type JsonMap = Record<string, unknown>;

export function isMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What `schema` is for `value`: the schema's own kind, or for `any` the kind the value has. A
 * value whose shape does not fit a container schema is treated as a scalar (a leaf).
 */
export function atomOf(schema: Schema, value: unknown): Atom {
  switch (schema.type) {
    case 'object':
      if (value !== undefined && value !== null && !isMap(value)) return SCALAR;
      return { kind: 'struct', schema, atomic: isAtomicMap(schema) };
    case 'map':
      if (value !== undefined && value !== null && !isMap(value)) return SCALAR;
      return { kind: 'map', values: schema.values, atomic: isAtomicMap(schema) };
    case 'array':
      if (value !== undefined && value !== null && !Array.isArray(value)) return SCALAR;
      return { kind: 'list', items: schema.items, rule: listRule(schema) };
    case 'any':
      if (isMap(value)) return DEDUCED_MAP;
      if (Array.isArray(value)) return DEDUCED_LIST;
      return SCALAR;
    default:
      return SCALAR;
  }
}

/** The schema of `key` in a struct or map atom (unknown struct fields are deduced). */
export function childSchema(atom: Atom, key: string): Schema {
  if (atom.kind === 'struct') return Object.hasOwn(atom.schema.properties, key) ? atom.schema.properties[key] ?? DEDUCED : DEDUCED;
  if (atom.kind === 'map') return atom.values;
  return DEDUCED;
}

/** True when `key` is a declared field of a struct (not an entry of a map). */
export function isNamedField(atom: Atom, key: string): boolean {
  return atom.kind === 'struct' && Object.hasOwn(atom.schema.properties, key);
}

export class ItemError extends Error {
  override readonly name = 'ItemError';
}

function keyDefault(items: Schema, field: string): unknown {
  if (items.type !== 'object') return undefined;
  const f = items.properties[field];
  return f?.type === 'string' ? f.default : undefined;
}

/** The element naming item `item` of an associative list; throws ItemError when it cannot be named. */
export function itemElement(rule: ListRule, items: Schema, item: unknown): PathElement {
  if (rule.kind === 'map') {
    if (item === null) throw new ItemError('associative list with keys may not have a null element');
    if (!isMap(item)) throw new ItemError('associative list with keys may not have non-map elements');
    const fields: [string, unknown][] = [];
    for (const key of rule.keys) {
      const v = Object.hasOwn(item, key) ? item[key] : keyDefault(items, key);
      if (v !== undefined) fields.push([key, v]);
    }
    if (fields.length === 0) {
      throw new ItemError(`associative list with keys has an element that omits all key fields ${JSON.stringify(rule.keys)} (and doesn't have default values for any key fields)`);
    }
    return keyElement(fields);
  }
  if (isMap(item)) throw new ItemError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new ItemError('not supported: associative list with lists as elements');
  if (item === null) throw new ItemError("associative list without keys has an element that's an explicit null");
  return valueElement(item);
}

/** The element of `item`, or undefined when it cannot be named (live objects are not refused for it). */
export function tryItemElement(rule: ListRule, items: Schema, item: unknown): PathElement | undefined {
  try {
    return itemElement(rule, items, item);
  } catch (err) {
    if (err instanceof ItemError) return undefined;
    throw err;
  }
}

/**
 * The field set of `value`: every scalar, every atomic list, map and struct, every list item and
 * map entry, and every struct field holding null or an empty object. Duplicate items of an
 * associative list are owned as one member, not walked.
 */
export function toFieldSet(schema: Schema, value: unknown): FieldSet {
  const out = new FieldSet();
  fill(out, schema, value);
  return out;
}

/** Adds the contents of `value` (members and children relative to it) to `into`. */
function fill(into: FieldSet, schema: Schema, value: unknown): void {
  const atom = atomOf(schema, value);
  switch (atom.kind) {
    case 'scalar':
      return;
    case 'list': {
      if (atom.rule.kind === 'atomic' || !Array.isArray(value)) return;
      const seen = new Set<string>();
      const duplicates = new Set<string>();
      const elements = value.map((item) => tryItemElement(atom.rule, atom.items, item));
      for (const pe of elements) {
        if (pe === undefined) continue;
        if (seen.has(pe.id)) duplicates.add(pe.id);
        seen.add(pe.id);
      }
      elements.forEach((pe, i) => {
        if (pe === undefined) return;
        into.members.set(pe.id, pe);
        if (duplicates.has(pe.id)) return;
        descend(into, pe, atom.items, value[i]);
      });
      return;
    }
    case 'struct':
    case 'map': {
      if (atom.atomic || !isMap(value)) return;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const v = value[key];
        if (v === undefined) continue;
        const pe = fieldElement(key);
        const sub = childSchema(atom, key);
        if (v === null || (isMap(v) && Object.keys(v).length === 0) || !isNamedField(atom, key) || isLeaf(sub, v)) into.members.set(pe.id, pe);
        descend(into, pe, sub, v);
      }
      return;
    }
  }
}

/** True when `value` is a leaf under `schema`: a scalar, or an atomic list, map or struct. */
function isLeaf(schema: Schema, value: unknown): boolean {
  const atom = atomOf(schema, value);
  return atom.kind === 'scalar' || (atom.kind === 'list' && atom.rule.kind === 'atomic') || ((atom.kind === 'struct' || atom.kind === 'map') && atom.atomic);
}

function descend(into: FieldSet, pe: PathElement, schema: Schema, value: unknown): void {
  if (isLeaf(schema, value)) return;
  const child = new FieldSet();
  fill(child, schema, value);
  into.attach(pe, child);
}

/**
 * `set` with every struct field that has owned children also owned itself: "a.b.c" owns "a"
 * when a is a field of a struct, not "a.b" when a.b is a map entry (upstream's
 * EnsureNamedFieldsAreMembers, which pruning uses so that emptied structs go too).
 */
export function ensureNamedFieldsAreMembers(schema: Schema, set: FieldSet): FieldSet {
  if (set.children.size === 0) return set;
  const atom = atomOf(schema, undefined);
  const out = new FieldSet();
  for (const [id, pe] of set.members) out.members.set(id, pe);
  for (const [id, c] of set.children) {
    let sub: Schema = DEDUCED;
    if (c.pe.kind === 'field') {
      sub = childSchema(atom, c.pe.name);
      if (isNamedField(atom, c.pe.name)) out.members.set(id, c.pe);
    } else if (atom.kind === 'list') {
      sub = atom.items;
    }
    out.children.set(id, { pe: c.pe, set: ensureNamedFieldsAreMembers(sub, c.set) });
  }
  return out;
}

/**
 * The problems of an applied configuration as upstream's typed conversion reports them, each
 * `<path>: <problem>`: items of map lists and sets that cannot be named or are named twice.
 */
export function applyProblems(schema: Schema, value: unknown): string[] {
  const problems: string[] = [];
  const walk = (s: Schema, v: unknown, path: PathElement[]): void => {
    const atom = atomOf(s, v);
    if (atom.kind === 'list') {
      if (!Array.isArray(v)) return;
      const seen = new Set<string>();
      v.forEach((item, i) => {
        if (atom.rule.kind === 'atomic') {
          walk(atom.items, item, [...path, indexElement(i)]);
          return;
        }
        let pe: PathElement;
        try {
          pe = itemElement(atom.rule, atom.items, item);
        } catch (err) {
          if (!(err instanceof ItemError)) throw err;
          problems.push(`${pathText(path)}: element ${i}: ${err.message}`);
          return;
        }
        if (seen.has(pe.id)) problems.push(`${pathText(path)}: duplicate entries for key ${elementText(pe)}`);
        seen.add(pe.id);
        walk(atom.items, item, [...path, pe]);
      });
    } else if ((atom.kind === 'struct' || atom.kind === 'map') && isMap(v)) {
      for (const [key, sub] of Object.entries(v)) walk(childSchema(atom, key), sub, [...path, fieldElement(key)]);
    }
  };
  walk(schema, value, []);
  return problems;
}

export type { Path };

/** True for the atoms owned and replaced whole: atomic lists, maps and structs. */
export function isAtomicAtom(atom: Atom): boolean {
  return (atom.kind === 'list' && atom.rule.kind === 'atomic') || ((atom.kind === 'struct' || atom.kind === 'map') && atom.atomic);
}
