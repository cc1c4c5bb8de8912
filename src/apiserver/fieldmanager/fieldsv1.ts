/**
 * The FieldsV1 form of a field set, upstream's format for metadata.managedFields: a JSON object
 * whose keys are path elements (`f:`, `k:`, `v:`, `i:`), each mapping to the object of its
 * children, `{}` for a member without children, and `".": {}` among the children of a node that
 * is also a member. Keys are written in structured-merge-diff's order, so that the same set is
 * always the same text.
 */
import type { Schema } from '../schema/index.js';
import { compareElements, parseElement, type PathElement } from './path.js';
import { FieldSet } from './set.js';
import { atomOf, childSchema, isAtomicAtom } from './typed.js';

export type FieldsV1 = Record<string, unknown>;

/** The FieldsV1 object of `set`. */
export function setToFields(set: FieldSet): FieldsV1 {
  const out: FieldsV1 = {};
  emit(set, out);
  return out;
}

function emit(set: FieldSet, out: FieldsV1): void {
  const ids = new Set<string>([...set.members.keys(), ...set.children.keys()]);
  const elements: PathElement[] = [];
  for (const id of ids) elements.push((set.members.get(id) ?? set.children.get(id)?.pe) as PathElement);
  elements.sort(compareElements);
  for (const pe of elements) {
    const child = set.children.get(pe.id);
    if (child === undefined) {
      out[pe.id] = {};
      continue;
    }
    const node: FieldsV1 = {};
    if (set.members.has(pe.id)) node['.'] = {};
    emit(child.set, node);
    out[pe.id] = node;
  }
}

export class FieldsError extends Error {
  override readonly name = 'FieldsError';
}

/**
 * The set a FieldsV1 object describes. Throws FieldsError when it is not one. With `schema`,
 * the set is fitted to the schema's present rules as it is read (upstream reconciles managed
 * fields with schema changes on every write): a list, map or struct owned by its parts that is
 * atomic now is owned whole. `reconciled` tells whether that changed anything.
 */
export function fieldsToSet(fields: unknown, schema?: Schema): FieldSet {
  return readFields(fields, schema).set;
}

export function readFields(fields: unknown, schema?: Schema): { set: FieldSet; reconciled: boolean } {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new FieldsError('fieldsV1 must be a JSON object');
  const set = new FieldSet();
  const state = { reconciled: false };
  read(fields as FieldsV1, set, schema, state);
  return { set, reconciled: state.reconciled };
}

/** The schema under `pe` of a node of `schema` (undefined: unknown, read as it is). */
function schemaUnder(schema: Schema | undefined, pe: PathElement): Schema | undefined {
  if (schema === undefined) return undefined;
  const atom = atomOf(schema, undefined);
  if (pe.kind === 'field') return atom.kind === 'struct' || atom.kind === 'map' ? childSchema(atom, pe.name) : undefined;
  return atom.kind === 'list' ? atom.items : undefined;
}

/** Reads the entries of `node` into `into`; answers whether `node` marks its own path as a member. */
function read(node: FieldsV1, into: FieldSet, schema: Schema | undefined, state: { reconciled: boolean }): boolean {
  let isMember = false;
  let hasChildren = false;
  for (const key in node) {
    if (!Object.hasOwn(node, key)) continue;
    if (key === '.') {
      isMember = true;
      continue;
    }
    let pe: PathElement | undefined;
    try {
      pe = parseElement(key);
    } catch (err) {
      throw new FieldsError(`parsing key as path element: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Unknown element kinds are dropped, as upstream drops what it does not understand.
    if (pe === undefined) continue;
    const value = node[key];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FieldsError(`the value of ${JSON.stringify(key)} must be a JSON object`);
    hasChildren = true;
    const sub = schemaUnder(schema, pe);
    if (sub !== undefined && isAtomicAtom(atomOf(sub, undefined)) && Object.keys(value).some((k) => k !== '.')) {
      // Owned by its parts when it was granular; owned whole now that it is atomic.
      into.members.set(pe.id, pe);
      state.reconciled = true;
      continue;
    }
    const child = new FieldSet();
    const childIsMember = read(value as FieldsV1, child, sub !== undefined && atomOf(sub, undefined).kind !== 'scalar' ? sub : undefined, state);
    if (childIsMember) into.members.set(pe.id, pe);
    into.attach(pe, child);
  }
  return isMember || !hasChildren;
}
