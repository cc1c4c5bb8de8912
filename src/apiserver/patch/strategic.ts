/**
 * Strategic merge patch, driven by the kind's schema. The subset implemented:
 * - objects merge recursively; `null` deletes a field; a map with `$patch: replace` replaces the
 *   whole object, `$patch: delete` removes it; `$retainKeys: [...]` drops the other fields;
 * - lists whose schema has `patchStrategy: merge` and a `mergeKey` (e.g. `name` for containers,
 *   `uid` for ownerReferences) merge element by element on that key; an element with
 *   `$patch: delete` removes the element with that key; `{"$patch": "replace"}` as an element
 *   replaces the whole list; new elements are appended;
 * - lists of primitives with `patchStrategy: merge` (e.g. finalizers) are unions; the directive
 *   `$deleteFromPrimitiveList/<field>: [...]` removes values from them;
 * - `$setElementOrder/<field>: [...]` reorders a merged list (elements not named keep their
 *   relative order, after the named ones);
 * - every other list is replaced, and fields without schema (type any) merge like JSON merge patch.
 */
import type { Schema } from '../schema/index.js';
import { PatchFormatError, cloneJson, isJsonObject, jsonEqual } from './common.js';
import { quoteValue } from '../../api/quote.js';

const PATCH = '$patch';
const RETAIN = '$retainKeys';
const ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

function fieldSchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (schema === undefined) return undefined;
  if (schema.type === 'object') return Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
  if (schema.type === 'map') return schema.values;
  return undefined;
}

function mergeValue(original: unknown, patch: unknown, schema: Schema | undefined): unknown {
  if (isJsonObject(patch)) {
    if (patch[PATCH] === 'replace') return stripDirectives(patch);
    return mergeObject(isJsonObject(original) ? original : {}, patch, schema);
  }
  if (Array.isArray(patch)) {
    if (schema?.type === 'array' && schema.patchStrategy === 'merge') return mergeList(Array.isArray(original) ? original : [], patch, schema.items, schema.mergeKey);
    return (patch as unknown[]).map((item) => (isJsonObject(item) ? stripDirectives(item) : cloneJson(item)));
  }
  return cloneJson(patch);
}

function stripDirectives(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    out[k] = isJsonObject(v) ? stripDirectives(v) : cloneJson(v);
  }
  return out;
}

function mergeObject(original: Record<string, unknown>, patch: Record<string, unknown>, schema: Schema | undefined): Record<string, unknown> | undefined {
  const directive = patch[PATCH];
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'merge') throw new PatchFormatError(`unknown $patch directive ${quoteValue(directive)}`);
  const out: Record<string, unknown> = { ...original };
  const orders: [string, unknown][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === PATCH || key === RETAIN) continue;
    if (key.startsWith(ORDER)) {
      orders.push([key.slice(ORDER.length), value]);
      continue;
    }
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length);
      if (!Array.isArray(value)) throw new PatchFormatError(`${key} must be a list`);
      const current = out[field];
      if (Array.isArray(current)) out[field] = current.filter((v) => !value.some((d) => jsonEqual(d, v)));
      continue;
    }
    if (key.startsWith('$')) throw new PatchFormatError(`unknown directive ${quoteValue(key)}`);
    if (value === null) {
      Reflect.deleteProperty(out, key);
      continue;
    }
    const merged = mergeValue(out[key], value, fieldSchema(schema, key));
    if (merged === undefined) Reflect.deleteProperty(out, key);
    else out[key] = merged;
  }
  for (const [field, order] of orders) {
    const sub = fieldSchema(schema, field);
    const list = out[field];
    if (Array.isArray(order) && Array.isArray(list)) out[field] = reorder(list, order, sub?.type === 'array' ? sub.mergeKey : undefined);
  }
  const retain = patch[RETAIN];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new PatchFormatError(`${RETAIN} must be a list of field names`);
    for (const key of Object.keys(out)) if (!retain.includes(key)) Reflect.deleteProperty(out, key);
  }
  return out;
}

function keyOf(item: unknown, mergeKey: string): unknown {
  return isJsonObject(item) ? item[mergeKey] : undefined;
}

function mergeList(original: unknown[], patch: unknown[], items: Schema, mergeKey: string | undefined): unknown[] {
  if (patch.some((p) => isJsonObject(p) && p[PATCH] === 'replace')) {
    return patch.filter((p) => !(isJsonObject(p) && p[PATCH] === 'replace')).map((p) => (isJsonObject(p) ? stripDirectives(p) : cloneJson(p)));
  }
  if (mergeKey === undefined) {
    // A set of primitives: union in order.
    const out = [...original];
    for (const p of patch) if (!out.some((o) => jsonEqual(o, p))) out.push(cloneJson(p));
    return out;
  }
  let out = [...original];
  for (const p of patch) {
    if (!isJsonObject(p)) throw new PatchFormatError(`the elements of a list merged on ${quoteValue(mergeKey)} must be objects`);
    const key = p[mergeKey];
    if (key === undefined) throw new PatchFormatError(`an element of a list merged on ${quoteValue(mergeKey)} has no ${mergeKey}`);
    const at = out.findIndex((o) => jsonEqual(keyOf(o, mergeKey), key));
    if (p[PATCH] === 'delete') {
      out = out.filter((o) => !jsonEqual(keyOf(o, mergeKey), key));
      continue;
    }
    const merged = mergeObject(at >= 0 && isJsonObject(out[at]) ? (out[at]) : {}, p, items);
    if (merged === undefined) continue;
    if (at >= 0) out[at] = merged;
    else out.push(merged);
  }
  return out;
}

function reorder(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const identity = (item: unknown): unknown => (mergeKey === undefined ? item : keyOf(item, mergeKey));
  const wanted = order.map((o) => (mergeKey !== undefined && isJsonObject(o) ? o[mergeKey] : o));
  const position = (item: unknown): number => {
    const i = wanted.findIndex((w) => jsonEqual(w, identity(item)));
    return i < 0 ? wanted.length : i;
  };
  return list.map((item, i) => ({ item, i, p: position(item) })).sort((a, b) => a.p - b.p || a.i - b.i).map((x) => x.item);
}

/** Applies a strategic merge patch (a JSON object) to `original` using `schema`. */
export function applyStrategicMergePatch(original: Record<string, unknown>, patch: unknown, schema: Schema): Record<string, unknown> {
  if (!isJsonObject(patch)) throw new PatchFormatError('a strategic merge patch must be a JSON object');
  if (patch[PATCH] === 'delete') throw new PatchFormatError('a strategic merge patch cannot delete the whole object');
  const merged = mergeValue(original, patch, schema);
  return isJsonObject(merged) ? merged : {};
}
