/**
 * Building the configuration object from decoded patches, with upstream's semantics:
 * - a configuration file gets the file defaults for every field it leaves out, and for the
 *   non-pointer fields it sets to their zero value (`port: 0` still means 10250);
 * - a drop-in is laid over the result as Go's JSON decoder lays a document over an existing
 *   struct: nested structs field by field, maps key by key, lists and scalars replaced.
 */
import { defaultOf, type Field, type Schema } from './schema.js';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isZero(field: Field, v: unknown): boolean {
  switch (field.kind) {
    case 'int':
    case 'float':
    case 'duration':
    case 'time-or-duration':
      return v === 0;
    case 'string':
      return v === '';
    default:
      return false;
  }
}

/** A complete object of `schema`: the patch's values where present, the defaults elsewhere. */
export function withDefaults(schema: Schema, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema)) {
    const has = Object.prototype.hasOwnProperty.call(patch, name);
    const value = patch[name];
    if (field.kind === 'struct') {
      if (field.nullable === true) {
        out[name] = has && isPlainObject(value) ? withDefaults(field.fields, value) : null;
      } else {
        out[name] = withDefaults(field.fields, isPlainObject(value) ? value : {});
      }
      continue;
    }
    if (!has || (value === null && field.default !== null) || ('zeroIsUnset' in field && field.zeroIsUnset && isZero(field, value))) {
      out[name] = defaultOf(field);
    } else {
      out[name] = structuredClone(value);
    }
  }
  return out;
}

/** Lays `patch` over `target` (mutated) as a drop-in: structs and maps merge, the rest replaces. */
export function mergeOver(schema: Schema, target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(patch)) {
    const field = schema[name];
    if (field === undefined) continue;
    const current = target[name];
    if (field.kind === 'struct') {
      if (value === null) {
        target[name] = null;
      } else if (isPlainObject(value)) {
        if (isPlainObject(current)) mergeOver(field.fields, current, value);
        else target[name] = withDefaults(field.fields, value);
      }
      continue;
    }
    if (value === null) {
      // Go's decoder sets a nil map, list or pointer; nil means the field's default here.
      target[name] = defaultOf(field);
      continue;
    }
    if ((field.kind === 'map-string' || field.kind === 'map-bool' || field.kind === 'map-strings') && isPlainObject(value)) {
      target[name] = { ...(isPlainObject(current) ? current : {}), ...structuredClone(value) };
      continue;
    }
    target[name] = structuredClone(value);
  }
}
