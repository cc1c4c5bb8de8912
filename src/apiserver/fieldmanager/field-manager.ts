/**
 * The field manager of one resource view: keeps metadata.managedFields on every write and
 * merges applied configurations, as upstream's fieldmanager stack does (in its order: version
 * check, last-applied update and upgrade, skipping objects never tracked, capping update
 * managers, manager identities, times, stripping of metadata that nobody owns).
 *
 * - update: a create, update or patch by a manager. It owns what it added or changed (the
 *   others lose it); its entry's time is set when it changed anything. The managedFields of the
 *   written object are taken when given (clients may rewrite them; `[]` or `[{}]` clear them),
 *   else the live object's. An object stored without managedFields is not tracked until its
 *   first apply.
 * - apply: merges a configuration, with conflicts (409) unless forced; see updater.ts.
 *
 * The subtrees a write may not change are never owned by it: status for the object itself when
 * the resource has a status subresource, everything but status for /status, and for other
 * subresources everything but the fields they write.
 */
import { formatTime } from '../../api/time.js';
import type { ObjectSchema } from '../schema/index.js';
import { badRequest, internal, type StatusError } from '../status/index.js';
import { conflictError } from './conflicts.js';
import { KUBECTL_APPLY_MANAGER, fieldsFromLastApplied, lastAppliedOf, recordLastApplied } from './last-applied.js';
import { decodeManaged, emptyManaged, encodeManaged, ManagedFieldsError, managerKey, versioned, type Managed } from './managed.js';
import { MergeError } from './merge.js';
import { fieldElement, type Path } from './path.js';
import { FieldSet } from './set.js';
import { isMap, type JsonMap } from './typed.js';
import { ALL_FIELDS, Conflicts, excluding, onlyUnder, Updater, type FieldFilter, type ManagerSets } from './updater.js';

/** Upstream's DefaultMaxUpdateManagers: older Update entries are merged beyond this many. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';
const BEFORE_FIRST_APPLY = 'before-first-apply';
const CURRENT_OPERATION = 'current-operation';

const p = (...names: string[]): Path => names.map(fieldElement);

/** Fields that are never owned (upstream's stripMetaManager). */
const STRIPPED = FieldSet.of(
  p('apiVersion'), p('kind'), p('metadata'),
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => p('metadata', f)),
);

export interface FieldManagerOptions {
  readonly schema: ObjectSchema;
  /** `v1`, `coordination.orch.io/v1`: the apiVersion entries record. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly statusSubresource: boolean;
  /** The field paths each subresource other than status writes (absent: any field). */
  readonly subresourceFields?: ReadonlyMap<string, readonly (readonly string[])[]>;
}

export interface ApplyRequest {
  readonly manager: string;
  readonly force: boolean;
  /** '' for the object itself. */
  readonly subresource: string;
  readonly now: Date;
  /** The configuration as the client sent it (recorded in the last-applied annotation). */
  readonly raw: JsonMap;
}

const metaOf = (o: JsonMap): JsonMap => (isMap(o.metadata) ? o.metadata : {});

/** `o` without metadata.managedFields (a shallow copy when it has them). */
function withoutManaged(o: JsonMap): JsonMap {
  const meta = metaOf(o);
  if (!('managedFields' in meta)) return o;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...o, metadata: rest };
}

function isEmptyEntry(entry: unknown): boolean {
  return isMap(entry) && Object.values(entry).every((v) => v === undefined || v === '' || v === null);
}

/** `[]` or `[{}]`: the client asks for managedFields to be cleared. */
function isReset(entries: unknown): boolean {
  return Array.isArray(entries) && (entries.length === 0 || (entries.length === 1 && isEmptyEntry(entries[0])));
}

function decodeOrEmpty(entries: unknown, schema: ObjectSchema): Managed {
  if (!Array.isArray(entries) || entries.length === 0) return emptyManaged();
  try {
    return decodeManaged(entries, schema);
  } catch (err) {
    if (err instanceof ManagedFieldsError) return emptyManaged();
    throw err;
  }
}

export class FieldManager {
  private readonly schema: ObjectSchema;
  private readonly apiVersion: string;
  private readonly kind: string;
  private readonly updater: Updater;
  private readonly filters = new Map<string, FieldFilter>();

  constructor(options: FieldManagerOptions) {
    this.schema = options.schema;
    this.apiVersion = options.apiVersion;
    this.kind = options.kind;
    this.updater = new Updater({ schema: options.schema, apiVersion: options.apiVersion });
    this.filters.set('', options.statusSubresource ? excluding([p('status')]) : ALL_FIELDS);
    if (options.statusSubresource) this.filters.set('status', onlyUnder([p('status')]));
    for (const [name, fields] of options.subresourceFields ?? []) this.filters.set(name, onlyUnder(fields.map((f) => p(...f))));
  }

  private filterFor(subresource: string): FieldFilter {
    return this.filters.get(subresource) ?? ALL_FIELDS;
  }

  /** What a new object is compared with: upstream's zero object (metadata, and spec and status structs). */
  zeroObject(): JsonMap {
    return this.withZeroStructs({ metadata: {} });
  }

  /**
   * `o` (a shallow copy when it changes) with the spec and status structs it lacks as `{}`:
   * upstream's Go types always hold them, so a status written to an object that had none
   * is not a struct the writer added.
   */
  private withZeroStructs(o: JsonMap): JsonMap {
    let out = o;
    for (const field of ['spec', 'status']) {
      if (o[field] !== undefined || this.schema.properties[field]?.type !== 'object') continue;
      if (out === o) out = { ...o };
      out[field] = {};
    }
    return out;
  }

  /**
   * Sets next.metadata.managedFields for a write of `next` over `live` (undefined for a create)
   * by `manager`. Never throws for the write's sake: unreadable managedFields are replaced by
   * the live ones, or by none.
   */
  update(live: JsonMap | undefined, next: JsonMap, manager: string, subresource: string, now: Date): void {
    const liveMeta = live === undefined ? {} : metaOf(live);
    const nextMeta = metaOf(next);
    next.metadata = nextMeta;
    const given = nextMeta.managedFields;
    delete nextMeta.managedFields;
    const filter = this.filterFor(subresource);
    const c = this.updater.compare(this.withZeroStructs(withoutManaged(live ?? this.zeroObject())), this.withZeroStructs(next), filter);
    // Subresources never rewrite managedFields; a write that sends none keeps the live ones.
    let managed = emptyManaged();
    let fromLive = true;
    if (subresource === '' && isReset(given)) {
      fromLive = false;
    } else if (subresource === '' && Array.isArray(given)) {
      managed = decodeOrEmpty(given, this.schema);
      fromLive = managed.fields.size === 0;
    }
    if (fromLive) managed = decodeOrEmpty(liveMeta.managedFields, this.schema);
    // Objects stored without managedFields are tracked from their first apply on (creates always).
    const exists = live !== undefined && typeof liveMeta.uid === 'string' && liveMeta.uid !== '';
    if (managed.fields.size === 0 && exists) return;
    const nothingChanged = c.added.empty() && c.modified.empty() && c.removed.empty();
    if (nothingChanged && fromLive) {
      if (liveMeta.managedFields !== undefined) nextMeta.managedFields = liveMeta.managedFields;
      return;
    }
    const managers = new Map(managed.fields);
    this.recordUpdate(c, managers, managed.times, manager, subresource, now, filter);
    this.capUpdateManagers({ fields: managers, times: managed.times });
    const encoded = encodeManaged({ fields: managers, times: managed.times });
    if (encoded !== undefined) nextMeta.managedFields = encoded;
  }

  /** An Update by `manager` (upstream's managedFieldsUpdater around the structured update). */
  private recordUpdate(c: ReturnType<Updater['compare']>, managers: ManagerSets, times: Map<string, string>, manager: string, subresource: string, now: Date, filter: FieldFilter): void {
    const key = managerKey({ manager: manager === '' ? 'unknown' : manager, operation: 'Update', apiVersion: this.apiVersion, subresource });
    this.updater.update(c, managers, CURRENT_OPERATION, filter);
    const current = managers.get(CURRENT_OPERATION);
    if (current === undefined) return;
    managers.delete(CURRENT_OPERATION);
    const taken = current.set.difference(STRIPPED);
    if (taken.empty()) return;
    const previous = managers.get(key);
    // A manager that changes the fields it owns already (a heartbeat) keeps its set as it was read.
    if (previous === undefined || previous.apiVersion !== this.apiVersion) managers.set(key, versioned(taken, this.apiVersion, false));
    else if (!taken.difference(previous.set).empty()) managers.set(key, versioned(taken.union(previous.set), this.apiVersion, false));
    times.set(key, formatTime(now.getTime()));
  }

  /** Merges the oldest Update entries into `ancient-changes` (one per API version) beyond the cap. */
  private capUpdateManagers(managed: Managed): void {
    const updaters = [...managed.fields].filter(([, vs]) => !vs.applied).map(([key]) => key);
    if (updaters.length <= MAX_UPDATE_MANAGERS) return;
    const seconds = (key: string): number => {
      const t = managed.times.get(key);
      return t === undefined ? 0 : Math.floor(Date.parse(t) / 1000) || 0;
    };
    updaters.sort((a, b) => seconds(a) - seconds(b) || (a < b ? -1 : a > b ? 1 : 0));
    const firstOfVersion = new Map<string, string>();
    let length = updaters.length;
    for (const key of updaters) {
      if (length <= MAX_UPDATE_MANAGERS) break;
      const vs = managed.fields.get(key);
      if (vs === undefined) continue;
      const bucket = managerKey({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: vs.apiVersion, subresource: '' });
      const first = firstOfVersion.get(vs.apiVersion);
      if (first === undefined) {
        firstOfVersion.set(vs.apiVersion, key);
        continue;
      }
      if (!managed.fields.has(bucket)) {
        const firstSet = managed.fields.get(first);
        managed.fields.delete(first);
        if (firstSet !== undefined) managed.fields.set(bucket, firstSet);
      }
      const into = managed.fields.get(bucket);
      managed.fields.set(bucket, versioned(into === undefined ? vs.set : vs.set.union(into.set), vs.apiVersion, false));
      managed.fields.delete(key);
      length--;
      const time = managed.times.get(key);
      if (time !== undefined) managed.times.set(bucket, time);
    }
  }

  /**
   * The object an apply of `config` by `request.manager` makes of `live` (undefined: the object
   * does not exist), its managedFields set. Throws StatusError: 409 Conflict listing the fields
   * of other managers (without force), 400 for a configuration that cannot be merged.
   */
  apply(live: JsonMap | undefined, config: JsonMap, request: ApplyRequest): JsonMap {
    if (metaOf(config).managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
    let managed: Managed;
    try {
      managed = live === undefined ? emptyManaged() : decodeManaged(Array.isArray(metaOf(live).managedFields) ? metaOf(live).managedFields as unknown[] : [], this.schema);
    } catch (err) {
      if (err instanceof ManagedFieldsError) throw internal(`failed to decode managed fields: ${err.message}`);
      throw err;
    }
    const liveView = withoutManaged(live ?? this.zeroObject());
    const filter = this.filterFor(request.subresource);
    const managers: ManagerSets = new Map(managed.fields);
    const times = new Map(managed.times);
    if (managers.size === 0 && live !== undefined) {
      // Before the first apply, whatever the object holds is owned by `before-first-apply`.
      const c = this.updater.compare(this.zeroObject(), liveView, filter);
      this.recordUpdate(c, managers, times, BEFORE_FIRST_APPLY, request.subresource, request.now, filter);
    }
    const key = managerKey({ manager: request.manager, operation: 'Apply', apiVersion: '', subresource: request.subresource });
    let attempt = this.tryApply(liveView, config, managers, key, request.force, filter);
    if (attempt instanceof Conflicts && request.manager === KUBECTL_APPLY_MANAGER && live !== undefined) {
      attempt = this.upgradeClientSideApply(attempt, live, liveView, config, managers, key, filter);
    }
    if (attempt instanceof Conflicts) throw conflictError(attempt);
    const { next, sets } = attempt;
    let object: JsonMap;
    if (next === undefined) {
      object = structuredClone(liveView);
    } else {
      object = structuredClone(next);
      times.set(key, formatTime(request.now.getTime()));
    }
    if (live === undefined) this.dropZeroLeftovers(object, config);
    if (request.manager === KUBECTL_APPLY_MANAGER && lastAppliedOf(object) !== undefined) recordLastApplied(object, request.raw);
    for (const k of times.keys()) if (!sets.has(k)) times.delete(k);
    const encoded = encodeManaged({ fields: sets, times });
    const meta = metaOf(object);
    object.metadata = meta;
    if (encoded === undefined) delete meta.managedFields;
    else meta.managedFields = encoded;
    return object;
  }

  /** One apply attempt on a copy of the sets: the new object (undefined: unchanged) and sets, or the conflicts. */
  private tryApply(liveView: JsonMap, config: JsonMap, managers: ManagerSets, key: string, force: boolean, filter: FieldFilter): { next: JsonMap | undefined; sets: ManagerSets } | Conflicts {
    const sets: ManagerSets = new Map(managers);
    let next: unknown;
    try {
      next = this.updater.apply(liveView, config, sets, key, force, filter);
    } catch (err) {
      if (err instanceof Conflicts) return err;
      if (err instanceof MergeError) throw badRequest(`failed to merge the applied configuration of ${this.kind}: ${err.message}`);
      throw err;
    }
    const mine = sets.get(key);
    if (mine !== undefined) {
      const kept = mine.set.difference(STRIPPED);
      if (kept.empty()) sets.delete(key);
      else if (kept !== mine.set) sets.set(key, versioned(kept, mine.apiVersion, true));
    }
    return { next: isMap(next) ? next : undefined, sets };
  }

  /**
   * kubectl's first server-side apply after client-side ones: conflicts on fields that the
   * last-applied annotation set to their present values are taken without force.
   */
  private upgradeClientSideApply(conflicts: Conflicts, live: JsonMap, liveView: JsonMap, config: JsonMap, managers: ManagerSets, key: string, filter: FieldFilter): ReturnType<FieldManager['tryApply']> {
    const allowed = fieldsFromLastApplied(this.schema, this.apiVersion, live);
    if (allowed === undefined) return conflicts;
    const remaining = new Map<string, FieldSet>();
    for (const [manager, set] of conflicts.byManager) {
      const rest = new FieldSet();
      for (const path of set.paths()) if (!allowed.has(path)) rest.insert(path);
      if (!rest.empty()) remaining.set(manager, rest);
    }
    if (remaining.size > 0) return new Conflicts(remaining);
    return this.tryApply(liveView, config, managers, key, true, filter);
  }

  /** A created object keeps no empty spec or status of the zero object that the configuration did not have. */
  private dropZeroLeftovers(object: JsonMap, config: JsonMap): void {
    for (const field of ['spec', 'status']) {
      const v = object[field];
      if (!(field in config) && isMap(v) && Object.keys(v).length === 0) Reflect.deleteProperty(object, field);
    }
  }
}

export type { StatusError };
