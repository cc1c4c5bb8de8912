/**
 * A set of field paths as structured-merge-diff keeps it: a trie whose nodes hold members (paths
 * that end here) and children (paths that go on). A path can be both a member and a parent: a
 * map list item is owned as a whole (member) and by its fields (children). Sets are immutable
 * once built; the operations answer new sets and share untouched subtrees.
 */
import { compareElements, type Path, type PathElement } from './path.js';

interface Child {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

export class FieldSet {
  /** Members by element id. */
  readonly members = new Map<string, PathElement>();
  /** Subsets by element id; never empty. */
  readonly children = new Map<string, Child>();

  static of(...paths: Path[]): FieldSet {
    const set = new FieldSet();
    for (const p of paths) set.insert(p);
    return set;
  }

  /** Adds `path` (not its parents). Only for sets being built. */
  insert(path: Path): void {
    insertAt(this, path);
  }

  /** The subset under `pe`, created when missing. Only for sets being built. */
  childFor(pe: PathElement): FieldSet {
    let child = this.children.get(pe.id);
    if (child === undefined) {
      child = { pe, set: new FieldSet() };
      this.children.set(pe.id, child);
    }
    return child.set;
  }

  /** Attaches `set` under `pe` (merged with what is there). Only for sets being built. */
  attach(pe: PathElement, set: FieldSet): void {
    if (set.empty()) return;
    const existing = this.children.get(pe.id);
    this.children.set(pe.id, { pe, set: existing === undefined ? set : existing.set.union(set) });
  }

  empty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  /** The number of member paths. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  has(path: Path): boolean {
    const node = nodeAt(this, path, path.length - 1);
    const last = path[path.length - 1];
    return node !== undefined && last !== undefined && node.members.has(last.id);
  }

  /** The paths under `pe`, without it. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe.id)?.set ?? EMPTY;
  }

  union(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    if (this.empty()) return other;
    const out = new FieldSet();
    for (const [id, pe] of this.members) out.members.set(id, pe);
    for (const [id, pe] of other.members) out.members.set(id, pe);
    for (const [id, c] of this.children) out.children.set(id, c);
    for (const [id, c] of other.children) {
      const mine = out.children.get(id);
      out.children.set(id, mine === undefined ? c : { pe: c.pe, set: mine.set.union(c.set) });
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (other.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const theirs = other.children.get(id);
      if (theirs === undefined) continue;
      const both = c.set.intersection(theirs.set);
      if (!both.empty()) out.children.set(id, { pe: c.pe, set: both });
    }
    return out;
  }

  /**
   * The members of this set not in `other`. Children are compared with children only, as
   * upstream: a member of `other` does not remove the paths under it.
   */
  difference(other: FieldSet): FieldSet {
    if (other.empty() || this.empty()) return this;
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!other.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const theirs = other.children.get(id);
      if (theirs === undefined) {
        out.children.set(id, c);
        continue;
      }
      const rest = c.set.difference(theirs.set);
      if (!rest.empty()) out.children.set(id, { pe: c.pe, set: rest });
    }
    return out;
  }

  /** Like difference, but a member of `other` also removes every path under it. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (other.empty() || this.empty()) return this;
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!other.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      if (other.members.has(id)) continue;
      const theirs = other.children.get(id);
      if (theirs === undefined) {
        out.children.set(id, c);
        continue;
      }
      const rest = c.set.recursiveDifference(theirs.set);
      if (!rest.empty()) out.children.set(id, { pe: c.pe, set: rest });
    }
    return out;
  }

  /** Only the paths under one of `prefixes` (each a path whose members and children are kept). */
  restrictTo(prefixes: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (prefixes.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      if (prefixes.members.has(id)) {
        out.children.set(id, c);
        continue;
      }
      const deeper = prefixes.children.get(id);
      if (deeper === undefined) continue;
      const kept = c.set.restrictTo(deeper.set);
      if (!kept.empty()) out.children.set(id, { pe: c.pe, set: kept });
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    if (this.members.size !== other.members.size || this.children.size !== other.children.size) return false;
    for (const id of this.members.keys()) if (!other.members.has(id)) return false;
    for (const [id, c] of this.children) {
      const theirs = other.children.get(id);
      if (theirs === undefined || !c.set.equals(theirs.set)) return false;
    }
    return true;
  }

  /** Members in upstream's order (preorder: this node's members, then each child's). */
  paths(): Path[] {
    const out: Path[] = [];
    const walk = (set: FieldSet, prefix: Path): void => {
      for (const pe of [...set.members.values()].sort(compareElements)) out.push([...prefix, pe]);
      for (const c of [...set.children.values()].sort((a, b) => compareElements(a.pe, b.pe))) walk(c.set, [...prefix, c.pe]);
    };
    walk(this, []);
    return out;
  }
}

/** Adds `path` to `set` (walking down by index: no copies of the path on the way). */
function insertAt(set: FieldSet, path: Path): void {
  const last = path[path.length - 1];
  if (last === undefined) return;
  let node = set;
  for (let i = 0; i < path.length - 1; i++) node = node.childFor(path[i] as PathElement);
  node.members.set(last.id, last);
}

/** The subset under the first `depth` elements of `path`, if there is one. */
function nodeAt(set: FieldSet, path: Path, depth: number): FieldSet | undefined {
  let node: FieldSet | undefined = set;
  for (let i = 0; i < depth && node !== undefined; i++) node = node.children.get((path[i] as PathElement).id)?.set;
  return node;
}

const EMPTY = new FieldSet();

/** The shared empty set (never to be built on). */
export function emptySet(): FieldSet {
  return EMPTY;
}
