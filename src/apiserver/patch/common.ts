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

export function cloneJson<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
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
