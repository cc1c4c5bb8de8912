/**
 * What a resource declares to be served by the generic registry: its names and scope for
 * routing and discovery, its schema, where it is stored, its strategy (defaults and validation)
 * and its table columns. Adding a resource is writing one such definition (see
 * resources/events/ for an example with two views of one stored kind).
 */
import type { StoredObject } from '../storage/index.js';
import type { ObjectSchema } from '../schema/index.js';
import type { FieldErrors } from '../status/index.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** A JSON object as it travels on the wire (one view of a stored object). */
export type WireObject = Record<string, unknown>;

/** Who is asking, for strategies that record it. */
export interface RequestUser {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

export interface StrategyContext {
  readonly user: RequestUser;
  readonly now: Date;
  /** The subresource being written (`status`, `approval`...); absent for the object itself. */
  readonly subresource?: string;
}

/**
 * Defaults and validation of one view, on its wire form. The registry has already set and
 * validated the metadata (name, namespace, uid, timestamps, labels, annotations) before these run.
 */
export interface ResourceStrategy {
  /**
   * Mutating admission of a new object that needs to read other objects (ServiceAccount): runs
   * after the metadata is set and the namespace admitted, before prepareForCreate. Throws
   * StatusError to refuse.
   */
  admit?(object: WireObject, ctx: StrategyContext, namespace: string): Promise<void>;
  /** Defaults of a new object (mutate in place). */
  prepareForCreate?(object: WireObject, ctx: StrategyContext): void;
  validateCreate(object: WireObject, errors: FieldErrors, ctx: StrategyContext): void;
  /** Carries over what an update must not change (mutate `object` in place). */
  prepareForUpdate?(object: WireObject, old: WireObject, ctx: StrategyContext): void;
  validateUpdate(object: WireObject, old: WireObject, errors: FieldErrors, ctx: StrategyContext): void;
  /** Called when deletion is requested and finalizers keep the object (e.g. phase Terminating). */
  prepareForDelete?(object: WireObject, ctx: StrategyContext): void;
  /**
   * Graceful deletion: the seconds the object is kept after a DELETE that asked for `requested`
   * seconds (undefined: the request gave none). 0 deletes at once (finalizers permitting); more
   * sets deletionTimestamp (now + the period) and deletionGracePeriodSeconds and keeps the object
   * until a later DELETE with 0. Absent: 0.
   */
  gracePeriod?(object: WireObject, requested: number | undefined): number;
}

/**
 * A subresource besides `status`. With `merge` it is written through the registry (get, update,
 * patch: `merge` gives the object to store from the written one and the stored one, as the status
 * subresource keeps everything but `.status`); without, it is served by a connector of the router
 * (pods/log, pods/exec...) and only described here for discovery.
 */
export interface SubresourceDefinition {
  readonly name: string;
  /** The kind discovery shows (PodExecOptions, or the resource's own kind). */
  readonly kind: string;
  /** The group and version of that kind when they are not the resource's (pods/eviction: policy/v1). */
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
  readonly merge?: (written: WireObject, stored: WireObject) => WireObject;
  /**
   * The fields the subresource writes (paths such as ['spec', 'ephemeralContainers']): an apply
   * through it owns only those. Absent: any field its merge keeps.
   */
  readonly fields?: readonly (readonly string[])[];
}

export interface TableColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date' | 'boolean';
  readonly format?: 'name' | '';
  readonly description: string;
  /** 0: shown by default; 1: with `-o wide`. */
  readonly priority: 0 | 1;
  cell(object: WireObject, now: Date): string | number | boolean;
}

/** Converts between the stored form and this view's wire form. */
export interface ViewConversion {
  toStorage(object: WireObject): StoredObject;
  fromStorage(object: StoredObject): WireObject;
}

export interface ResourceDefinition {
  /** API group ('' for core v1) and version. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  /** Lowercase plural (the URL segment), singular, short names (`ev`), categories (`all`). */
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly namespaced: boolean;
  readonly verbs: readonly Verb[];
  /** Key segment in the store: objects live at `/<storage>/<namespace>/<name>` (or `/<storage>/<name>`). */
  readonly storage: string;
  /** The wire schema of the kind (strict decoding, strategic merge, OpenAPI). */
  readonly schema: ObjectSchema;
  /** Serves `/status`: updates of the main resource keep `.status`, updates of /status change only it. */
  readonly statusSubresource: boolean;
  /** Field labels for fieldSelector besides metadata.name and metadata.namespace. */
  readonly fieldLabels: readonly string[];
  /** The values of every field label of an object (wire form). */
  fields(object: WireObject): Record<string, string>;
  /** Columns after NAME (NAME is added first unless `nameColumn` is false). */
  readonly columns: readonly TableColumn[];
  readonly nameColumn: boolean;
  /** Absent: the wire form is the stored form. */
  readonly conversion?: ViewConversion;
  readonly strategy: ResourceStrategy;
  /** Names must be DNS-1123 subdomains (default) or labels. */
  readonly nameRule: 'subdomain' | 'label';
  /** Seconds to live for every write (events: --event-ttl); absent means forever. */
  ttlSeconds?(): number | undefined;
  /** PUT of a missing object creates it. */
  readonly allowCreateOnUpdate: boolean;
  /** DELETE answers the deleted object instead of a Status. */
  readonly returnDeletedObject: boolean;
  /** Finalizers that keep a deleted object (default metadata.finalizers). */
  pendingFinalizers?(object: WireObject): readonly string[];
  /** Subresources besides status. */
  readonly subresources?: readonly SubresourceDefinition[];
  /**
   * Create-only resources answered without being stored (TokenReview, SubjectAccessReview): the
   * validated object comes in, the answered one (with its status) goes out with 201. Metadata is
   * neither generated nor validated.
   */
  readonly review?: (object: WireObject, ctx: StrategyContext) => Promise<WireObject>;
  /** Served, but listed neither in discovery nor in OpenAPI (compatibility views). */
  readonly hidden?: boolean;
}

/** `apiVersion` of a definition: `v1` or `events.orch.io/v1`. */
export function apiVersionOf(def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}
