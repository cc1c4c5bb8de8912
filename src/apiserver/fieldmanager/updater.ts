/**
 * Ownership of fields across writes, as structured-merge-diff's Updater keeps it. An update
 * gives its manager every field it added or changed and takes those fields from the others; a
 * removed field leaves every owner. An apply merges the configuration into the live object, gives
 * its manager exactly the fields of the configuration, removes the fields it owned last time and
 * no longer applies (unless another manager owns them), and refuses (Conflicts) to change a field
 * another manager owns, unless forced, in which case that manager loses it.
 */
import { jsonEqual } from '../../api/json-equal.js';
import type { Schema } from '../schema/index.js';
import { compare, type Comparison } from './compare.js';
import { merge, removeItems } from './merge.js';
import type { Path } from './path.js';
import { FieldSet } from './set.js';
import { ensureNamedFieldsAreMembers, toFieldSet } from './typed.js';
import { versioned, type ManagedSet } from './managed.js';

/** The sets of every manager by identity (modified in place by the updater). */
export type ManagerSets = Map<string, ManagedSet>;

/** Which fields a write may own: everything, everything but some subtrees, or only some subtrees. */
export interface FieldFilter {
  filter(set: FieldSet): FieldSet;
  /**
   * The part of an object the filter can keep anything of (the rest need not be compared):
   * shallow copies along the kept paths, never modified.
   */
  project(object: unknown): unknown;
}

export const ALL_FIELDS: FieldFilter = { filter: (set) => set, project: (o) => o };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Leaves out the subtrees of `paths` (upstream's reset fields of a strategy, e.g. status). */
export function excluding(paths: readonly Path[]): FieldFilter {
  const set = FieldSet.of(...paths);
  const topLevel = paths.filter((p) => p.length === 1 && p[0]?.kind === 'field').map((p) => (p[0] as { name: string }).name);
  return {
    filter: (s) => s.recursiveDifference(set),
    project: (o) => {
      if (!isObject(o) || !topLevel.some((k) => k in o)) return o;
      const out = { ...o };
      for (const k of topLevel) Reflect.deleteProperty(out, k);
      return out;
    },
  };
}

/** Keeps only the subtrees of `paths` (what a subresource writes). */
export function onlyUnder(paths: readonly Path[]): FieldFilter {
  const set = FieldSet.of(...paths);
  const names = paths.map((p) => p.map((pe) => (pe.kind === 'field' ? pe.name : undefined)));
  return {
    filter: (s) => s.restrictTo(set),
    project: (o) => {
      if (names.some((n) => n.includes(undefined))) return o;
      const out: Record<string, unknown> = {};
      for (const path of names as string[][]) {
        let from: unknown = o;
        let into = out;
        path.forEach((name, i) => {
          if (!isObject(from) || !(name in from)) return;
          const v = from[name];
          if (i === path.length - 1) {
            into[name] = v;
          } else {
            const existing = into[name];
            const next = isObject(existing) ? existing : {};
            into[name] = next;
            into = next;
            from = v;
          }
        });
      }
      return out;
    },
  };
}

/** The fields an apply would take from other managers: one entry per manager and field. */
export class Conflicts extends Error {
  override readonly name = 'Conflicts';
  constructor(readonly byManager: ReadonlyMap<string, FieldSet>) {
    super(`${byManager.size} manager(s) own the fields being applied`);
  }

  /** Every (manager, path), managers sorted, paths in set order. */
  list(): { manager: string; path: Path }[] {
    const out: { manager: string; path: Path }[] = [];
    for (const manager of [...this.byManager.keys()].sort()) {
      for (const path of this.byManager.get(manager)?.paths() ?? []) out.push({ manager, path });
    }
    return out;
  }
}

function filtered(c: Comparison, f: FieldFilter): Comparison {
  return f === ALL_FIELDS ? c : { added: f.filter(c.added), modified: f.filter(c.modified), removed: f.filter(c.removed) };
}

function replaceSet(managers: ManagerSets, key: string, next: FieldSet): void {
  const vs = managers.get(key);
  if (vs === undefined || next === vs.set) return;
  if (next.empty()) managers.delete(key);
  else managers.set(key, versioned(next, vs.apiVersion, vs.applied));
}

export interface UpdaterOptions {
  readonly schema: Schema;
  readonly apiVersion: string;
}

export class Updater {
  private readonly schema: Schema;
  private readonly apiVersion: string;

  constructor(options: UpdaterOptions) {
    this.schema = options.schema;
    this.apiVersion = options.apiVersion;
  }

  /** What a write of `next` over `live` changes, limited to what the write may own. */
  compare(live: unknown, next: unknown, filter: FieldFilter = ALL_FIELDS): Comparison {
    return filtered(compare(this.schema, filter.project(live), filter.project(next)), filter);
  }

  /**
   * Takes the changed fields (comparison `c`) from every manager but `workflow`; with `force`
   * false throws Conflicts instead when any of them owns a modified or added field.
   */
  private settle(c: Comparison, managers: ManagerSets, workflow: string, force: boolean): void {
    if (c.added.empty() && c.modified.empty() && c.removed.empty()) return;
    const changed = c.modified.union(c.added);
    const conflicts = new Map<string, FieldSet>();
    for (const [key, vs] of managers) {
      if (key === workflow) continue;
      const taken = vs.set.intersection(changed);
      if (!taken.empty()) conflicts.set(key, taken);
    }
    if (!force && conflicts.size > 0) throw new Conflicts(conflicts);
    for (const [key, taken] of conflicts) replaceSet(managers, key, (managers.get(key) as ManagedSet).set.difference(taken));
    if (!c.removed.empty()) {
      for (const [key, vs] of managers) if (key !== workflow) replaceSet(managers, key, vs.set.difference(c.removed));
    }
  }

  /**
   * The ownership after a write (create, update, patch) by `manager` that changed `c` (from
   * compare()): the others lose what changed, `manager` gains it.
   */
  update(c: Comparison, managers: ManagerSets, manager: string, filter: FieldFilter = ALL_FIELDS): void {
    this.settle(c, managers, manager, true);
    const previous = managers.get(manager)?.set ?? new FieldSet();
    const set = filter.filter(previous.difference(c.removed).union(c.modified).union(c.added));
    if (set.empty()) managers.delete(manager);
    else if (set !== previous) managers.set(manager, versioned(set, this.apiVersion, false));
  }

  /**
   * Merges `config` into `live` for `manager` and answers the new object, or undefined when the
   * apply changes nothing; `managers` then holds the sets after it. Throws Conflicts (unless
   * `force`) and MergeError, leaving `managers` untouched.
   */
  apply(live: unknown, config: unknown, managers: ManagerSets, manager: string, force: boolean, filter: FieldFilter = ALL_FIELDS): unknown {
    let next = merge(this.schema, live, config);
    // Worked on a copy: a refused apply leaves `managers` as it was.
    const sets: ManagerSets = new Map(managers);
    const last = sets.get(manager);
    sets.set(manager, versioned(filter.filter(toFieldSet(this.schema, config)), this.apiVersion, true));
    if (last !== undefined && !last.set.empty()) next = this.prune(next, sets, last.set);
    this.settle(this.compare(live, next, filter), sets, manager, force);
    managers.clear();
    for (const [key, vs] of sets) managers.set(key, vs);
    return jsonEqual(live, next) ? undefined : next;
  }

  /**
   * Removes from `merged` what `manager` applied last time (`last`) and no longer applies, unless
   * another manager (or the new configuration) owns it.
   */
  private prune(merged: unknown, managers: ManagerSets, last: FieldSet): unknown {
    const named = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(this.schema, s);
    let pruned = removeItems(this.schema, merged, named(last));
    let owned = new FieldSet();
    for (const vs of managers.values()) owned = owned.union(vs.set);
    const mergedSet = named(toFieldSet(this.schema, merged));
    pruned = removeItems(this.schema, merged, mergedSet.difference(named(toFieldSet(this.schema, pruned)).union(named(owned))));
    // Only what this manager owned is removed: fields of updaters and unowned fields stay.
    const prunedSet = named(toFieldSet(this.schema, pruned));
    return removeItems(this.schema, merged, mergedSet.difference(prunedSet).intersection(named(last)));
  }
}
