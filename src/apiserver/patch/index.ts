/**
 * patch: the three patch formats of PATCH requests, applied to plain JSON objects:
 * `application/merge-patch+json` (RFC 7386), `application/json-patch+json` (RFC 6902) and
 * `application/strategic-merge-patch+json` (schema-driven, see strategic.ts for the subset).
 *
 * Must not: read or write storage, validate the result (the registry does both) or know HTTP
 * beyond the content type names. Errors: PatchFormatError (400), PatchApplyError (422).
 */
import type { Schema } from '../schema/index.js';
import { PatchApplyError, PatchFormatError, applyMergePatch, isJsonObject } from './common.js';
import { applyJsonPatch } from './json-patch.js';
import { applyStrategicMergePatch } from './strategic.js';

export { PatchApplyError, PatchFormatError, applyMergePatch, cloneJson, isJsonObject, jsonEqual } from './common.js';
export { applyJsonPatch } from './json-patch.js';
export { applyStrategicMergePatch } from './strategic.js';

export type PatchType = 'merge' | 'json' | 'strategic';

export const PATCH_CONTENT_TYPES: Readonly<Record<string, PatchType>> = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
};

/**
 * The patched object (a new object; `original` is not modified). Throws PatchFormatError for a
 * malformed patch and PatchApplyError when it cannot apply or the result is not an object.
 */
export function applyPatch(type: PatchType, original: Record<string, unknown>, patch: unknown, schema: Schema): Record<string, unknown> {
  let result: unknown;
  switch (type) {
    case 'merge':
      if (!isJsonObject(patch)) throw new PatchFormatError('a merge patch must be a JSON object');
      result = applyMergePatch(original, patch);
      break;
    case 'json':
      result = applyJsonPatch(original, patch);
      break;
    case 'strategic':
      result = applyStrategicMergePatch(original, patch, schema);
      break;
  }
  if (!isJsonObject(result)) throw new PatchApplyError('the patched document is not a JSON object');
  return result;
}
