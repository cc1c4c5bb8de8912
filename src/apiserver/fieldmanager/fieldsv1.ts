/**
 * The FieldsV1 form of a field set, upstream's format for metadata.managedFields: a JSON object
 * whose keys are path elements (`f:`, `k:`, `v:`, `i:`), each mapping to the object of its
 * children, `{}` for a member without children, and `".": {}` among the children of a node that
 * is also a member. Keys are written in structured-merge-diff's order, so that the same set is
 * always the same text.
 */
import { compareElements, parseElement, type PathElement } from './path.js';
import { FieldSet } from './set.js';

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

/** The set a FieldsV1 object describes. Throws FieldsError when it is not one. */
export function fieldsToSet(fields: unknown): FieldSet {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new FieldsError('fieldsV1 must be a JSON object');
  const set = new FieldSet();
  read(fields as FieldsV1, set);
  return set;
}

/** Reads the entries of `node` into `into`; answers whether `node` marks its own path as a member. */
function read(node: FieldsV1, into: FieldSet): boolean {
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
    const child = new FieldSet();
    const childIsMember = read(value as FieldsV1, child);
    if (childIsMember) into.members.set(pe.id, pe);
    into.attach(pe, child);
  }
  return isMember || !hasChildren;
}
