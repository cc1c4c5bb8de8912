/**
 * How server-side apply merges and owns each list, map and struct, derived from the one schema
 * that also drives strategic merge patch. Upstream's OpenAPI says it with
 * `x-kubernetes-list-type` (`atomic`, `set`, `map` with `x-kubernetes-list-map-keys`) and
 * `x-kubernetes-map-type`; where a list has no list type, upstream's schema conversion takes the
 * strategic merge metadata: `patchStrategy: merge` with a merge key makes a map keyed by it,
 * without a key a set, and any other list is atomic. A schema therefore states a list type only
 * where the two disagree (ports: merged by containerPort, applied by containerPort and protocol,
 * which `listMapKeys` alone says; pod hostIPs: merged by ip, applied whole).
 */
import type { ArraySchema, Schema } from './types.js';

export type ListRule =
  | { readonly kind: 'atomic' }
  | { readonly kind: 'set' }
  | { readonly kind: 'map'; readonly keys: readonly string[] };

const ATOMIC: ListRule = { kind: 'atomic' };
const SET: ListRule = { kind: 'set' };
const rules = new WeakMap<ArraySchema, ListRule>();

function derive(schema: ArraySchema): ListRule {
  switch (schema.listType) {
    case 'atomic':
      return ATOMIC;
    case 'set':
      return SET;
    case 'map': {
      const keys = schema.listMapKeys ?? (schema.mergeKey === undefined ? [] : [schema.mergeKey]);
      // A map list without keys cannot name its items: upstream then keeps the list whole.
      return keys.length === 0 ? ATOMIC : { kind: 'map', keys };
    }
  }
  if (schema.listMapKeys !== undefined && schema.listMapKeys.length > 0) return { kind: 'map', keys: schema.listMapKeys };
  if (schema.patchStrategy !== 'merge') return ATOMIC;
  return schema.mergeKey === undefined ? SET : { kind: 'map', keys: [schema.mergeKey] };
}

/** The server-side apply rule of a list schema (computed once per schema object). */
export function listRule(schema: ArraySchema): ListRule {
  let rule = rules.get(schema);
  if (rule === undefined) {
    rule = derive(schema);
    rules.set(schema, rule);
  }
  return rule;
}

/** True for maps and structs that server-side apply replaces whole (`x-kubernetes-map-type: atomic`). */
export function isAtomicMap(schema: Schema): boolean {
  return (schema.type === 'map' || schema.type === 'object') && schema.mapType === 'atomic';
}
