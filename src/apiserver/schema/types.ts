/**
 * The schema language of the server's kinds: enough of OpenAPI to decode bodies strictly (unknown
 * fields, wrong types), canonicalize timestamps, drive strategic merge (merge keys) and
 * server-side apply (list and map types, see merge-rules.ts) and publish `/openapi/v3`. Builders
 * keep kind definitions short and declarative.
 */

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

interface Described {
  readonly description?: string;
}

/** How server-side apply treats a list (x-kubernetes-list-type). */
export type ListType = 'atomic' | 'set' | 'map';

export type Schema =
  | StringSchema
  | (Described & { readonly type: 'integer'; readonly format: 'int32' | 'int64' })
  | (Described & { readonly type: 'number' })
  | (Described & { readonly type: 'boolean' })
  | ObjectSchema
  | MapSchema
  | ArraySchema
  /** Anything JSON (kept as given, never reported as unknown). */
  | (Described & { readonly type: 'any' })
  | (Described & { readonly type: 'int-or-string' });

export interface StringSchema extends Described {
  readonly type: 'string';
  readonly format?: 'date-time' | 'micro-time' | 'byte';
  readonly enum?: readonly string[];
  /** The value upstream's API defaults an absent field to (used for list map keys: ports' protocol). */
  readonly default?: string;
}

export interface MapSchema extends Described {
  readonly type: 'map';
  readonly values: Schema;
  /** `atomic`: server-side apply owns and replaces the map as one value (x-kubernetes-map-type). */
  readonly mapType?: 'atomic';
}

export interface ObjectSchema extends Described {
  readonly type: 'object';
  /** `atomic`: server-side apply owns and replaces the struct as one value (upstream +structType=atomic). */
  readonly mapType?: 'atomic';
  /** The OpenAPI definition name (e.g. `io.orch.api.events.v1.Event`); named objects become $refs. */
  readonly name?: string;
  readonly properties: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  /** The kinds this object is the top-level type of (x-kubernetes-group-version-kind). */
  readonly gvk?: readonly GroupVersionKind[];
}

export interface ArraySchema extends Described {
  readonly type: 'array';
  readonly items: Schema;
  /** Strategic merge: elements are objects merged by this field (x-kubernetes-patch-merge-key). */
  readonly mergeKey?: string;
  /** Strategic merge: `merge` for keyed object lists and set-like primitive lists; default replace. */
  readonly patchStrategy?: 'merge';
  /**
   * Server-side apply (x-kubernetes-list-type), where it differs from what the strategic merge
   * metadata implies (see listRule in merge-rules.ts): `atomic` (replaced whole), `set` (scalars
   * merged as a set) or `map` (objects merged by `listMapKeys`).
   */
  readonly listType?: ListType;
  /** For listType `map`: the key fields (x-kubernetes-list-map-keys), when not just the mergeKey. */
  readonly listMapKeys?: readonly string[];
}

type WithoutType<T> = Omit<T, 'type'>;

export const str = (description?: string, extra: { format?: 'date-time' | 'micro-time' | 'byte'; enum?: readonly string[]; default?: string } = {}): Schema =>
  ({ type: 'string', ...(description === undefined ? {} : { description }), ...extra });
export const time = (description?: string): Schema => str(description, { format: 'date-time' });
export const microTime = (description?: string): Schema => str(description, { format: 'micro-time' });
export const int32 = (description?: string): Schema =>
  ({ type: 'integer', format: 'int32', ...(description === undefined ? {} : { description }) });
export const int64 = (description?: string): Schema =>
  ({ type: 'integer', format: 'int64', ...(description === undefined ? {} : { description }) });
export const bool = (description?: string): Schema => ({ type: 'boolean', ...(description === undefined ? {} : { description }) });
export const any = (description?: string): Schema => ({ type: 'any', ...(description === undefined ? {} : { description }) });
export const stringMap = (description?: string, extra: { mapType?: 'atomic' } = {}): Schema =>
  ({ type: 'map', values: { type: 'string' }, ...(description === undefined ? {} : { description }), ...extra });
export const object = (properties: Record<string, Schema>, extra: WithoutType<Omit<ObjectSchema, 'properties'>> = {}): ObjectSchema =>
  ({ type: 'object', properties, ...extra });
export const array = (items: Schema, extra: WithoutType<Omit<ArraySchema, 'items'>> = {}): ArraySchema =>
  ({ type: 'array', items, ...extra });
