/**
 * Merging an applied configuration into the live object, and removing owned items from an
 * object, as structured-merge-diff does. Merge: the configuration wins on every leaf it sets;
 * structs and maps merge field by field; map lists and sets merge item by item, keeping the live
 * items the configuration does not name where they were and putting the named ones in the
 * configuration's order; atomic lists, maps and structs are replaced whole. Neither function
 * modifies its arguments; results share the untouched subtrees of the inputs.
 */
import type { Schema } from '../schema/index.js';
import { FieldSet } from './set.js';
import { atomOf, childSchema, isMap, itemElement, type Atom, type JsonMap } from './typed.js';
import { elementText, type PathElement } from './path.js';

/** Marks an item that appears more than once in the live list: merged as if it were absent. */
const DUPLICATE = Symbol('duplicate');

export class MergeError extends Error {
  override readonly name = 'MergeError';
}

type ListAtom = Extract<Atom, { kind: 'list' }>;

function indexItems(atom: ListAtom, list: readonly unknown[], allowDuplicates: boolean, where: string): { pes: PathElement[]; byId: Map<string, unknown> } {
  const pes: PathElement[] = [];
  const byId = new Map<string, unknown>();
  list.forEach((item, i) => {
    let pe: PathElement;
    try {
      pe = itemElement(atom.rule, atom.items, item);
    } catch (err) {
      throw new MergeError(`${where}: element ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (byId.has(pe.id)) {
      if (!allowDuplicates) throw new MergeError(`${where}: duplicate entries for key ${elementText(pe)}`);
      byId.set(pe.id, DUPLICATE);
    } else {
      byId.set(pe.id, item);
    }
    pes.push(pe);
  });
  return { pes, byId };
}

/** Merges `rhs` over `lhs` under `schema`; undefined when neither side holds anything. */
function mergeValue(schema: Schema, lhs: unknown, rhs: unknown, where: string): unknown {
  if (lhs === DUPLICATE) lhs = undefined;
  if (rhs === undefined) return lhs;
  const right = atomOf(schema, rhs);
  // A live value of another shape is replaced (possible only where the schema is deduced).
  if (lhs !== undefined && atomOf(schema, lhs).kind !== right.kind) lhs = undefined;
  switch (right.kind) {
    case 'scalar':
      return rhs;
    case 'list': {
      const l = Array.isArray(lhs) ? lhs : [];
      const r = rhs as unknown[];
      if (right.rule.kind === 'atomic' || (l.length === 0 && r.length === 0)) return rhs;
      return mergeItems(right, l, r, where);
    }
    case 'struct':
    case 'map': {
      if (right.atomic) return rhs;
      const l = isMap(lhs) ? lhs : undefined;
      const r = rhs as JsonMap;
      if ((l === undefined || Object.keys(l).length === 0) && Object.keys(r).length === 0) return rhs;
      if (l === undefined) return mergeFresh(right, r, where);
      const out: JsonMap = {};
      for (const key in l) if (Object.hasOwn(l, key) && l[key] !== undefined) out[key] = l[key];
      for (const key in r) {
        if (!Object.hasOwn(r, key) || r[key] === undefined) continue;
        const merged = mergeValue(childSchema(right, key), out[key], r[key], `${where}.${key}`);
        if (merged !== undefined) out[key] = merged;
      }
      return out;
    }
  }
}

/** A configuration value with nothing live under it (checked as a merge would check it). */
function mergeFresh(atom: Atom, value: JsonMap, where: string): JsonMap {
  for (const key in value) {
    if (Object.hasOwn(value, key) && value[key] !== undefined) mergeValue(childSchema(atom, key), undefined, value[key], `${where}.${key}`);
  }
  return value;
}

/**
 * The items of a merged associative list, in upstream's order: live items the configuration
 * does not name stay where they are, named ones follow the configuration's order, new ones are
 * inserted after the item that precedes them in the configuration.
 */
function mergeItems(atom: ListAtom, lhs: readonly unknown[], rhs: readonly unknown[], where: string): unknown[] {
  const right = indexItems(atom, rhs, false, where);
  const left = indexItems(atom, lhs, true, where);
  const shared = right.pes.filter((pe) => left.byId.has(pe.id));
  let sharedAt = 0;
  let nextShared = shared[sharedAt];
  const advance = (): void => {
    sharedAt++;
    nextShared = shared[sharedAt];
  };
  const mergedRight = new Set<string>();
  const out: unknown[] = [];
  const push = (v: unknown): void => {
    if (v !== undefined) out.push(v);
  };
  let lI = 0;
  let rI = 0;
  while (lI < left.pes.length || rI < right.pes.length) {
    if (lI < left.pes.length && rI < right.pes.length) {
      const pe = left.pes[lI] as PathElement;
      if (pe.id === (right.pes[rI] as PathElement).id) {
        mergedRight.add(pe.id);
        push(mergeValue(atom.items, left.byId.get(pe.id), right.byId.get(pe.id), where));
        lI++;
        rI++;
        advance();
        continue;
      }
      if (right.byId.has(pe.id) && nextShared !== undefined && nextShared.id !== pe.id) {
        // A shared item, but not the one the configuration puts next.
        lI++;
        continue;
      }
    }
    if (lI < left.pes.length) {
      const pe = left.pes[lI] as PathElement;
      if (!right.byId.has(pe.id)) {
        push(lhs[lI]);
        lI++;
        continue;
      } else if (mergedRight.has(pe.id)) {
        lI++;
      }
    }
    if (rI < right.pes.length) {
      const pe = right.pes[rI] as PathElement;
      mergedRight.add(pe.id);
      push(mergeValue(atom.items, left.byId.get(pe.id), right.byId.get(pe.id), where));
      rI++;
      if (nextShared !== undefined && nextShared.id === pe.id) advance();
    }
  }
  return out;
}

/** `live` with `config` merged over it. Throws MergeError for duplicate or unnamed items in `config`. */
export function merge(schema: Schema, live: unknown, config: unknown): unknown {
  return mergeValue(schema, live, config, '');
}

/**
 * `value` without the paths of `toRemove` (members are removed with everything under them).
 * Lists, maps and structs left empty by the removal go too.
 */
export function removeItems(schema: Schema, value: unknown, toRemove: FieldSet): unknown {
  if (toRemove.empty()) return value;
  const atom = atomOf(schema, value);
  switch (atom.kind) {
    case 'scalar':
      return value;
    case 'list': {
      if (!Array.isArray(value)) return value;
      if (value.length === 0 || atom.rule.kind === 'atomic') return undefined;
      const out: unknown[] = [];
      for (const item of value as unknown[]) {
        let pe: PathElement;
        try {
          pe = itemElement(atom.rule, atom.items, item);
        } catch {
          // Live items that cannot be named are kept as they are: nothing can own them.
          out.push(item);
          continue;
        }
        if (toRemove.members.has(pe.id)) continue;
        const under = toRemove.children.get(pe.id);
        const kept = under === undefined ? item : removeItems(atom.items, item, under.set);
        if (kept !== undefined) out.push(kept);
      }
      return out.length === 0 ? undefined : out;
    }
    case 'struct':
    case 'map': {
      if (!isMap(value)) return value;
      if (atom.atomic || Object.keys(value).length === 0) return undefined;
      const out: JsonMap = {};
      for (const key in value) {
        if (!Object.hasOwn(value, key) || value[key] === undefined) continue;
        const id = `f:${key}`;
        if (toRemove.members.has(id)) continue;
        const under = toRemove.children.get(id);
        const kept = under === undefined ? value[key] : removeItems(childSchema(atom, key), value[key], under.set);
        if (kept !== undefined) out[key] = kept;
      }
      return Object.keys(out).length === 0 ? undefined : out;
    }
  }
}
