/**
 * The generic registry of one resource view over the Store: create, get, update (optimistic
 * concurrency on resourceVersion), patch, server-side apply, delete (with finalizers and
 * preconditions) and deletecollection. Every write keeps metadata.managedFields through the
 * view's FieldManager. Lists live in list.ts and watches in ../watch. Objects enter and leave in
 * the view's wire form; the store holds the stored form (ViewConversion).
 *
 * Every method may throw StatusError (400, 404, 409, 422, ...) and store errors mapped by
 * category. None of them is idempotent except get.
 */
import { formatTime } from '../../api/time.js';
import { isOrchError } from '../../api/errors.js';
import { StoreErrorCode, type Store, type StoredObject } from '../storage/index.js';
import { FieldManager } from '../fieldmanager/index.js';
import { applyPatch, PatchApplyError, PatchFormatError, cloneJson, type PatchType } from '../patch/index.js';
import { alreadyExists, badRequest, conflict, FieldErrors, invalid, notFound, StatusError, type GroupResource } from '../status/index.js';
import { decodeObject, type FieldValidation } from './decode.js';
import { carryOverMeta, finalizersOf, metaOf, nameOf, prepareCreateMeta, resourceVersionOf, str, validateMeta } from './meta.js';
import { apiVersionOf, type ResourceDefinition, type StrategyContext, type WireObject } from './resource.js';

/** Checks run before a write (e.g. the namespace exists and is not terminating). */
export type Admission = (operation: 'create' | 'update' | 'delete', def: ResourceDefinition, namespace: string, name: string) => Promise<void>;

/** Reads and deletes tried before a delete that keeps meeting concurrent writes answers 409. */
const DELETE_ATTEMPTS = 5;

/** The object changed between a delete's read and its write (internal to delete). */
class ConcurrentWrite extends Error {
  constructor(override readonly cause: unknown) {
    super('the object changed since it was read');
  }
}

export interface RegistryOptions {
  readonly def: ResourceDefinition;
  readonly store: Store;
  readonly admission?: Admission;
}

export interface WriteOptions {
  readonly dryRun: boolean;
  /** `status` or a subresource of the definition that has a merge rule. */
  readonly subresource?: string;
  readonly fieldValidation?: FieldValidation;
  /** The manager the write is recorded under in managedFields (upstream: `unknown` when none). */
  readonly fieldManager?: string;
}

export interface ApplyOptions {
  readonly dryRun: boolean;
  readonly subresource?: string;
  /** The applying manager (required). */
  readonly fieldManager: string;
  /** Take the fields other managers own instead of answering 409. */
  readonly force: boolean;
  /** The configuration as the client sent it (kubectl's last-applied annotation records it). */
  readonly raw: WireObject;
}

/** What a write does to managedFields once the object to store is known (`old`: the live object). */
type Track = (old: WireObject, object: WireObject) => void;

export interface DeleteRequest {
  readonly dryRun: boolean;
  readonly uid?: string;
  readonly resourceVersion?: string;
  /** DeleteOptions.gracePeriodSeconds (resources with graceful deletion). */
  readonly gracePeriodSeconds?: number;
}

const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

export class ResourceRegistry {
  readonly def: ResourceDefinition;
  readonly resource: GroupResource;
  readonly store: Store;
  /** Keeps managedFields and merges applies for this view. */
  readonly fields: FieldManager;
  private readonly admission: Admission;

  constructor(options: RegistryOptions) {
    const def = options.def;
    this.def = def;
    this.store = options.store;
    this.resource = { group: def.group, resource: def.plural };
    this.admission = options.admission ?? (() => Promise.resolve());
    const subresourceFields = new Map<string, readonly (readonly string[])[]>();
    for (const sub of def.subresources ?? []) if (sub.fields !== undefined) subresourceFields.set(sub.name, sub.fields);
    this.fields = new FieldManager({ schema: def.schema, apiVersion: apiVersionOf(def), kind: def.kind, statusSubresource: def.statusSubresource, subresourceFields });
  }

  private tracker(ctx: StrategyContext, options: WriteOptions): Track {
    return (old, object) => { this.fields.update(old, object, options.fieldManager ?? '', options.subresource ?? '', ctx.now); };
  }

  key(namespace: string, name: string): string {
    return this.def.namespaced ? `/${this.def.storage}/${namespace}/${name}` : `/${this.def.storage}/${name}`;
  }

  prefix(namespace: string): string {
    return this.def.namespaced && namespace !== '' ? `/${this.def.storage}/${namespace}/` : `/${this.def.storage}/`;
  }

  /** The wire form of a stored object, `kind` and `apiVersion` first. */
  present(stored: StoredObject): WireObject {
    const wire = this.def.conversion === undefined ? stored : this.def.conversion.fromStorage(stored);
    // One copy, not two (rest, then spread): the spread keeps kind and apiVersion in the first
    // places even when it overwrites them, and the assignments restore the view's values.
    const apiVersion = apiVersionOf(this.def);
    const object: WireObject = { kind: this.def.kind, apiVersion, ...wire };
    object.kind = this.def.kind;
    object.apiVersion = apiVersion;
    return object;
  }

  private toStorage(wire: WireObject): StoredObject {
    return this.def.conversion === undefined ? wire : this.def.conversion.toStorage(wire);
  }

  /** Creates from a copy of `body` (left as it is). */
  async create(ctx: StrategyContext, namespace: string, body: WireObject, options: WriteOptions): Promise<WireObject> {
    return this.createFrom(ctx, namespace, cloneJson(body), options);
  }

  /**
   * Like create, for an object the caller hands over (a body decoded for this request): it is
   * completed in place and must not be used afterwards. Saves the deep copy that create makes,
   * a good part of the cost of a small create.
   */
  async createFrom(ctx: StrategyContext, namespace: string, object: WireObject, options: WriteOptions): Promise<WireObject> {
    return this.createObject(ctx, namespace, object, options, true);
  }

  /** Creates `object` (handed over); `track`: record the creator in managedFields (an apply already did). */
  private async createObject(ctx: StrategyContext, namespace: string, object: WireObject, options: WriteOptions, track: boolean): Promise<WireObject> {
    if (this.def.review !== undefined) return this.answerReview(this.def.review, object, namespace, ctx);
    prepareCreateMeta(object, this.def, namespace, ctx.now);
    await this.admission('create', this.def, namespace, nameOf(object));
    await this.def.strategy.admit?.(object, ctx, namespace);
    this.def.strategy.prepareForCreate?.(object, ctx);
    if (track) this.fields.update(undefined, object, options.fieldManager ?? '', '', ctx.now);
    const errors = new FieldErrors();
    validateMeta(object, this.def, errors);
    this.def.strategy.validateCreate(object, errors, ctx);
    errors.throwIfAny(this.def.kind, this.def.group, nameOf(object));
    if (options.dryRun) return this.present(this.toStorage(object));
    const ttl = this.def.ttlSeconds?.();
    try {
      const stored = await this.store.create(this.key(namespace, nameOf(object)), this.toStorage(object), ttl === undefined ? {} : { ttlSeconds: ttl });
      return this.present(stored);
    } catch (err) {
      throw this.translate(err, nameOf(object));
    }
  }

  /** Reviews: validated and answered, never stored. */
  private async answerReview(review: NonNullable<ResourceDefinition['review']>, object: WireObject, namespace: string, ctx: StrategyContext): Promise<WireObject> {
    if (this.def.namespaced) {
      const given = str(metaOf(object).namespace);
      if (given !== '' && given !== namespace) throw badRequest(`the namespace of the provided object (${given}) does not match the namespace sent on the request (${namespace})`);
      metaOf(object).namespace = namespace;
    }
    this.def.strategy.prepareForCreate?.(object, ctx);
    const errors = new FieldErrors();
    this.def.strategy.validateCreate(object, errors, ctx);
    errors.throwIfAny(this.def.kind, this.def.group, nameOf(object));
    return this.present(await review(object, ctx));
  }

  /** GET: `resourceVersion` "0" or "N" may be answered from the watch cache (absent: the current object). */
  async get(namespace: string, name: string, options: { resourceVersion?: string } = {}): Promise<WireObject> {
    return this.present(await this.getStored(namespace, name, options.resourceVersion));
  }

  private async getStored(namespace: string, name: string, resourceVersion?: string): Promise<StoredObject> {
    try {
      return await this.store.get(this.key(namespace, name), resourceVersion === undefined || resourceVersion === '' ? undefined : { resourceVersion });
    } catch (err) {
      throw this.translate(err, name);
    }
  }

  /** PUT: replaces the object (or creates it where allowed). `created` tells 201 from 200. */
  async update(ctx: StrategyContext, namespace: string, name: string, body: WireObject, options: WriteOptions): Promise<{ object: WireObject; created: boolean }> {
    const bodyName = nameOf(body);
    if (bodyName !== '' && bodyName !== name) throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
    const bodyNs = str(metaOf(body).namespace);
    if (this.def.namespaced && bodyNs !== '' && bodyNs !== namespace) {
      throw badRequest(`the namespace of the object (${bodyNs}) does not match the namespace on the URL (${namespace})`);
    }
    const incoming = cloneJson(body);
    metaOf(incoming).name = name;
    const expected = resourceVersionOf(incoming);
    await this.admission('update', this.def, namespace, name);
    return this.write(namespace, name, expected, options, () => cloneJson(incoming), async () => {
      if (!this.def.allowCreateOnUpdate || options.subresource !== undefined) throw notFound(this.resource, name);
      delete metaOf(incoming).resourceVersion;
      // `incoming` is this request's own copy and is not used after this.
      return { object: await this.createFrom(ctx, namespace, incoming, options), created: true };
    }, ctx, this.tracker(ctx, options));
  }

  /**
   * PATCH in one of the three formats; retried on write races unless the patch sets
   * resourceVersion. Answers the object and the warnings of fieldValidation Warn.
   */
  async patch(ctx: StrategyContext, namespace: string, name: string, type: PatchType, patch: unknown, options: WriteOptions): Promise<{ object: WireObject; warnings: readonly string[] }> {
    const fieldValidation = options.fieldValidation ?? 'Strict';
    let warnings: readonly string[] = [];
    const result = await this.write(namespace, name, '', options, (old) => {
      let patched: WireObject;
      try {
        patched = applyPatch(type, old, patch, this.def.schema);
      } catch (err) {
        if (err instanceof PatchFormatError) throw badRequest(`the patch is invalid: ${err.message}`);
        if (err instanceof PatchApplyError) {
          throw invalid(this.def.kind, this.def.group, name, [{ type: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${err.message}` }]);
        }
        throw err;
      }
      const decodedPatch = decodeObject(this.def, patched, fieldValidation);
      warnings = decodedPatch.warnings;
      const decoded = decodedPatch.object;
      const rv = resourceVersionOf(decoded);
      if (rv !== '' && rv !== resourceVersionOf(old)) throw conflict(this.resource, name, MODIFIED);
      if (nameOf(decoded) !== name) throw badRequest(`the name of the patched object (${nameOf(decoded)}) does not match the name on the URL (${name})`);
      return decoded;
    }, () => Promise.reject(notFound(this.resource, name)), ctx, this.tracker(ctx, options));
    return { object: result.object, warnings };
  }

  /**
   * Server-side apply of `config` (a decoded apply patch, see decodeApplied): merged into the
   * object, which is created when absent (`created`); retried on write races unless the
   * configuration sets resourceVersion. Throws 409 Conflict listing other managers' fields.
   */
  async apply(ctx: StrategyContext, namespace: string, name: string, config: WireObject, options: ApplyOptions): Promise<{ object: WireObject; created: boolean }> {
    const subresource = options.subresource ?? '';
    const request = { manager: options.fieldManager, force: options.force, subresource, now: ctx.now, raw: options.raw };
    const writeOptions: WriteOptions = { dryRun: options.dryRun, fieldManager: options.fieldManager, ...(subresource === '' ? {} : { subresource }) };
    let applied: unknown;
    const track: Track = (_old, object) => {
      if (applied === undefined) delete metaOf(object).managedFields;
      else metaOf(object).managedFields = applied;
    };
    const attempt = (): Promise<{ object: WireObject; created: boolean }> => this.write(namespace, name, '', writeOptions, (old) => {
      const rv = resourceVersionOf(config);
      if (rv !== '' && rv !== resourceVersionOf(old)) throw conflict(this.resource, name, MODIFIED);
      const merged = this.fields.apply(old, config, request);
      applied = metaOf(merged).managedFields;
      return merged;
    }, async () => {
      if (subresource !== '') throw notFound(this.resource, name);
      const merged = this.fields.apply(undefined, config, request);
      return { object: await this.createObject(ctx, namespace, merged, writeOptions, false), created: true };
    }, ctx, track);
    try {
      return await attempt();
    } catch (err) {
      // Created by someone else between the read and the create: apply to that object.
      if (err instanceof StatusError && err.reason === 'AlreadyExists') return attempt();
      throw err;
    }
  }

  /**
   * The common write path of update and patch: `next(old)` gives the new wire object from the
   * current one, then metadata is carried over, the strategy runs and the store is compared-and-
   * swapped. An update that clears the last finalizer of a deleting object removes it.
   */
  private async write(
    namespace: string, name: string, expected: string, options: WriteOptions,
    next: (old: WireObject) => WireObject, missing: () => Promise<{ object: WireObject; created: boolean }>, ctx: StrategyContext, track: Track,
  ): Promise<{ object: WireObject; created: boolean }> {
    const key = this.key(namespace, name);
    const mutate = (current: StoredObject): StoredObject => this.toStorage(this.nextState(this.present(current), next, options, ctx, name, track));
    if (options.dryRun) {
      let current: StoredObject;
      try {
        current = await this.store.get(key);
      } catch (err) {
        if (isOrchError(err) && err.code === StoreErrorCode.notFound) return missing();
        throw this.translate(err, name);
      }
      if (expected !== '' && expected !== resourceVersionOf(current)) throw conflict(this.resource, name, MODIFIED);
      return { object: this.present(mutate(cloneJson(current))), created: false };
    }
    const ttl = this.def.ttlSeconds?.();
    let stored: StoredObject;
    try {
      stored = await this.store.update(key, { ...(expected === '' ? {} : { expectedResourceVersion: expected }), ...(ttl === undefined ? {} : { ttlSeconds: ttl }) }, mutate);
    } catch (err) {
      if (isOrchError(err) && err.code === StoreErrorCode.notFound) return missing();
      throw this.translate(err, name);
    }
    const object = this.present(stored);
    // A deleting object whose grace period is over (0) goes once its last finalizer is removed.
    const graceLeft = metaOf(object).deletionGracePeriodSeconds;
    if (str(metaOf(object).deletionTimestamp) !== '' && this.pending(object).length === 0 && (typeof graceLeft !== 'number' || graceLeft === 0)) {
      await this.store.delete(key, { expectedResourceVersion: resourceVersionOf(object) }).catch((err: unknown) => {
        if (!(isOrchError(err) && (err.code === StoreErrorCode.notFound || err.code === StoreErrorCode.conflict))) throw this.translate(err, name);
      });
    }
    return { object, created: false };
  }

  private nextState(old: WireObject, next: (old: WireObject) => WireObject, options: WriteOptions, ctx: StrategyContext, name: string, track: Track): WireObject {
    let object = next(old);
    const sub = options.subresource;
    if (sub === 'status') {
      object = { ...cloneJson(old), status: cloneJson(object.status) };
      if (object.status === undefined) delete object.status;
    } else if (sub !== undefined) {
      const merge = this.def.subresources?.find((s) => s.name === sub)?.merge;
      if (merge === undefined) throw notFound(this.resource, name);
      object = merge(object, cloneJson(old));
    } else if (this.def.statusSubresource) {
      object = { ...object, status: cloneJson(old.status) };
      if (old.status === undefined) delete object.status;
    }
    const uid = str(metaOf(object).uid);
    const oldUid = str(metaOf(old).uid);
    if (uid !== '' && uid !== oldUid) throw conflict(this.resource, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${oldUid}`);
    carryOverMeta(object, old);
    const subCtx: StrategyContext = sub === undefined ? ctx : { ...ctx, subresource: sub };
    this.def.strategy.prepareForUpdate?.(object, old, subCtx);
    track(old, object);
    const errors = new FieldErrors();
    validateMeta(object, this.def, errors);
    this.def.strategy.validateUpdate(object, old, errors, subCtx);
    errors.throwIfAny(this.def.kind, this.def.group, name);
    delete metaOf(object).resourceVersion;
    return object;
  }

  pending(object: WireObject): readonly string[] {
    return this.def.pendingFinalizers?.(object) ?? finalizersOf(object);
  }

  /**
   * DELETE: removes the object, or keeps it marked with deletionTimestamp while a grace period
   * runs (strategy.gracePeriod) or finalizers remain. `deleted` is false when it is kept.
   */
  async delete(ctx: StrategyContext, namespace: string, name: string, request: DeleteRequest): Promise<{ object: WireObject; deleted: boolean }> {
    // A write between the read and the delete (a node's status update of a pod) is not the
    // client's conflict: read again and retry, as upstream's GuaranteedUpdate and conditional
    // delete do. The client's own preconditions (uid, resourceVersion) still answer 409.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deleteOnce(ctx, namespace, name, request);
      } catch (err) {
        if (!(err instanceof ConcurrentWrite)) throw err;
        if (attempt >= DELETE_ATTEMPTS) throw this.translate(err.cause, name);
      }
    }
  }

  private async deleteOnce(ctx: StrategyContext, namespace: string, name: string, request: DeleteRequest): Promise<{ object: WireObject; deleted: boolean }> {
    const key = this.key(namespace, name);
    const current = this.present(await this.getStored(namespace, name));
    await this.admission('delete', this.def, namespace, name);
    const uid = str(metaOf(current).uid);
    if (request.uid !== undefined && request.uid !== uid) {
      throw conflict(this.resource, name, `Precondition failed: UID in precondition: ${request.uid}, UID in object meta: ${uid}`);
    }
    const rv = resourceVersionOf(current);
    if (request.resourceVersion !== undefined && request.resourceVersion !== rv) {
      throw conflict(this.resource, name, `Precondition failed: ResourceVersion in precondition: ${request.resourceVersion}, ResourceVersion in object meta: ${rv}`);
    }
    const meta = metaOf(current);
    const deleting = str(meta.deletionTimestamp) !== '';
    const currentGrace = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : undefined;
    const grace = Math.max(0, this.def.strategy.gracePeriod?.(current, request.gracePeriodSeconds) ?? 0);
    if (grace > 0 || this.pending(current).length > 0) {
      // A running grace period may be shortened, never extended; finalizers alone mark once.
      if (deleting && currentGrace !== undefined && currentGrace <= grace) return { object: current, deleted: false };
      const mark = (object: WireObject): WireObject => {
        metaOf(object).deletionTimestamp = formatTime(ctx.now.getTime() + grace * 1000);
        metaOf(object).deletionGracePeriodSeconds = grace;
        this.def.strategy.prepareForDelete?.(object, ctx);
        return object;
      };
      return this.keepMarked(key, name, rv, current, mark, request.dryRun);
    }
    if (request.dryRun) return { object: current, deleted: true };
    try {
      const gone = await this.store.delete(key, { expectedResourceVersion: rv, ...(uid === '' ? {} : { expectedUid: uid }) });
      return { object: this.present(gone), deleted: true };
    } catch (err) {
      throw this.translateForDelete(err, name);
    }
  }

  private async keepMarked(key: string, name: string, rv: string, current: WireObject, mark: (o: WireObject) => WireObject, dryRun: boolean): Promise<{ object: WireObject; deleted: boolean }> {
    if (dryRun) return { object: mark(cloneJson(current)), deleted: false };
    try {
      const stored = await this.store.update(key, { expectedResourceVersion: rv }, (s) => this.toStorage(mark(this.present(s))));
      return { object: this.present(stored), deleted: false };
    } catch (err) {
      throw this.translateForDelete(err, name);
    }
  }

  /** As translate, but a store conflict (the object changed since it was read) becomes ConcurrentWrite: delete reads again. */
  private translateForDelete(err: unknown, name: string): unknown {
    if (isOrchError(err) && err.code === StoreErrorCode.conflict) return new ConcurrentWrite(err);
    return this.translate(err, name);
  }

  /** Store errors named after this resource: 404, 409 AlreadyExists, 409 Conflict. */
  translate(err: unknown, name: string): unknown {
    if (err instanceof StatusError || !isOrchError(err)) return err;
    switch (err.code) {
      case StoreErrorCode.notFound:
        return notFound(this.resource, name);
      case StoreErrorCode.alreadyExists:
        return alreadyExists(this.resource, name);
      case StoreErrorCode.conflict:
        return conflict(this.resource, name, MODIFIED);
      case StoreErrorCode.preconditionFailed:
        return conflict(this.resource, name, `Precondition failed: ${err.message}`);
      case StoreErrorCode.invalidKey:
        return notFound(this.resource, name);
      default:
        return err;
    }
  }
}
