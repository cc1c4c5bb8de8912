/** JSON helpers and the two error classes of patching. */
export { jsonEqual } from '../../api/json-equal.js';

/** The patch document itself is malformed (answered 400 BadRequest). */
export class PatchFormatError extends Error {
  override readonly name = 'PatchFormatError';
}

/** The patch is well formed but cannot be applied to the object (answered 422). */
export class PatchApplyError extends Error {
  override readonly name = 'PatchApplyError';
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A deep copy of a JSON value: plain objects and arrays copied member by member, primitives as
 * they are; anything else (a Date, a Map) through structuredClone. For the API's objects this is
 * about 6× cheaper than structuredClone alone (a ~3 KiB pod: 2.7 against 16.9 µs of CPU), and
 * the API server copies an object on every update.
 */
export function cloneJson<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i]);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    // JSON.parse makes "__proto__" an own member; an assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy(member), enumerable: true, writable: true, configurable: true });
    else out[key] = copy(member);
  }
  return out;
}

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const out: Record<string, unknown> = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) Reflect.deleteProperty(out, key);
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}
