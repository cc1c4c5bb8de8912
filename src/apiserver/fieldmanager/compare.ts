/**
 * The comparison of two versions of an object (structured-merge-diff's Compare): the fields the
 * right side added, modified and removed. Leaves (scalars, atomic lists, maps and structs) are
 * compared by value; a struct, map, list item or map entry that appears or disappears is added
 * or removed itself besides its fields, which is why the fields of an Update hold "." nodes.
 */
import { jsonEqual } from '../../api/json-equal.js';
import type { Schema } from '../schema/index.js';
import { fieldElement, type PathElement } from './path.js';
import { FieldSet } from './set.js';
import { atomOf, childSchema, isMap, tryItemElement, type Atom } from './typed.js';

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

function isLeafAtom(atom: Atom): boolean {
  return atom.kind === 'scalar' || (atom.kind === 'list' && atom.rule.kind === 'atomic') || ((atom.kind === 'struct' || atom.kind === 'map') && atom.atomic);
}

class Comparer {
  readonly added = new FieldSet();
  readonly modified = new FieldSet();
  readonly removed = new FieldSet();
  private readonly path: PathElement[] = [];

  /** Compares `lhs` and `rhs` (at least one defined) at the current path. */
  compare(schema: Schema, lhs: unknown, rhs: unknown): void {
    const left = lhs === undefined ? undefined : atomOf(schema, lhs);
    const right = rhs === undefined ? undefined : atomOf(schema, rhs);
    let leaf: boolean;
    if (left !== undefined && right !== undefined && left.kind !== right.kind) {
      // A value that changed shape (possible only where the schema is deduced): the node is
      // modified, what the old one held is removed and what the new one holds is added.
      this.modified.insert(this.path);
      if (!isLeafAtom(left)) this.handle(left, lhs, undefined);
      if (!isLeafAtom(right)) this.handle(right, undefined, rhs);
      leaf = true;
    } else {
      leaf = this.handle((right ?? left) as Atom, lhs, rhs);
    }
    if (!leaf) {
      if (lhs === undefined) this.added.insert(this.path);
      else if (rhs === undefined) this.removed.insert(this.path);
    }
  }

  /** Compares under `atom`; true when the node was compared as a leaf. */
  private handle(atom: Atom, lhs: unknown, rhs: unknown): boolean {
    switch (atom.kind) {
      case 'scalar':
        this.leaf(lhs, rhs);
        return true;
      case 'list': {
        const l = Array.isArray(lhs) ? lhs : undefined;
        const r = Array.isArray(rhs) ? rhs : undefined;
        if (atom.rule.kind === 'atomic' || ((l === undefined || l.length === 0) && (r === undefined || r.length === 0))) {
          this.leaf(lhs, rhs);
          return true;
        }
        this.items(atom, l ?? [], r ?? []);
        return false;
      }
      case 'struct':
      case 'map': {
        const l = isMap(lhs) ? lhs : undefined;
        const r = isMap(rhs) ? rhs : undefined;
        const emptyL = l === undefined || Object.keys(l).length === 0;
        const emptyR = r === undefined || Object.keys(r).length === 0;
        if (atom.atomic || (emptyL && emptyR)) {
          this.leaf(lhs, rhs);
          return true;
        }
        const left = l ?? {};
        const right = r ?? {};
        for (const key in left) {
          if (!Object.hasOwn(left, key) || left[key] === undefined) continue;
          this.child(fieldElement(key), childSchema(atom, key), left[key], right[key]);
        }
        for (const key in right) {
          if (!Object.hasOwn(right, key) || right[key] === undefined || (Object.hasOwn(left, key) && left[key] !== undefined)) continue;
          this.child(fieldElement(key), childSchema(atom, key), undefined, right[key]);
        }
        return false;
      }
    }
  }

  private child(pe: PathElement, schema: Schema, lhs: unknown, rhs: unknown): void {
    this.path.push(pe);
    this.compare(schema, lhs, rhs);
    this.path.pop();
  }

  private leaf(lhs: unknown, rhs: unknown): void {
    if (lhs === undefined) this.added.insert(this.path);
    else if (rhs === undefined) this.removed.insert(this.path);
    else if (!jsonEqual(lhs, rhs)) this.modified.insert(this.path);
  }

  /** Items of an associative list, matched by element; duplicates compared as a whole. */
  private items(atom: Extract<Atom, { kind: 'list' }>, lhs: readonly unknown[], rhs: readonly unknown[]): void {
    const order: PathElement[] = [];
    const left = new Map<string, unknown[]>();
    const right = new Map<string, unknown[]>();
    const index = (list: readonly unknown[], into: Map<string, unknown[]>): void => {
      for (const item of list) {
        const pe = tryItemElement(atom.rule, atom.items, item);
        if (pe === undefined) continue;
        const seen = into.get(pe.id);
        if (seen !== undefined) {
          seen.push(item);
          continue;
        }
        into.set(pe.id, [item]);
        if (!left.has(pe.id) || into === left) order.push(pe);
      }
    };
    index(lhs, left);
    index(rhs, right);
    for (const pe of order) {
      const l = left.get(pe.id) ?? [];
      const r = right.get(pe.id) ?? [];
      if (l.length <= 1 && r.length <= 1) {
        this.child(pe, atom.items, l[0], r[0]);
      } else if (l.length >= 2 && r.length >= 2) {
        if (!jsonEqual(l, r)) this.modified.insert([...this.path, pe]);
      } else if (l.length >= 2) {
        if (r.length !== 0) this.child(pe, atom.items, undefined, r[0]);
        this.removed.insert([...this.path, pe]);
      } else {
        if (l.length !== 0) this.child(pe, atom.items, l[0], undefined);
        this.added.insert([...this.path, pe]);
      }
    }
  }
}

/** What changed from `lhs` to `rhs` (both whole objects of `schema`). */
export function compare(schema: Schema, lhs: unknown, rhs: unknown): Comparison {
  const c = new Comparer();
  if (lhs !== undefined || rhs !== undefined) c.compare(schema, lhs, rhs);
  return { added: c.added, modified: c.modified, removed: c.removed };
}
