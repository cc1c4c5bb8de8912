/**
 * From a parsed body to a wire object of one resource view: it must be a JSON object of the
 * view's kind and apiVersion (absent ones are filled in), and it is decoded strictly against the
 * view's schema. `fieldValidation` says what unknown and duplicate fields do, as upstream:
 * Strict (default here) rejects them with 400 BadRequest `strict decoding error: duplicate
 * field "a", unknown field "x"`, Warn keeps the last of duplicates and drops unknown fields with
 * a Warning header each, Ignore does the same silently. Wrong JSON types are always 400.
 * `metadata.managedFields: []` is kept (it asks the field manager to clear them).
 */
import { decodeStrict } from '../schema/index.js';
import { badRequest } from '../status/index.js';
import { apiVersionOf, type ResourceDefinition, type WireObject } from './resource.js';
import { quoteValue } from '../../api/quote.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface Decoded {
  readonly object: WireObject;
  /** Warnings for the `Warning` response header (unknown fields under Warn). */
  readonly warnings: readonly string[];
}

export function decodeObject(
  def: Pick<ResourceDefinition, 'group' | 'version' | 'kind' | 'schema'>, body: unknown, fieldValidation: FieldValidation, duplicates: readonly string[] = [],
): Decoded {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest(`the request body must be a JSON object of kind ${def.kind}`);
  }
  const raw = body as Record<string, unknown>;
  const expectedVersion = apiVersionOf(def);
  const kind = raw.kind ?? def.kind;
  const apiVersion = raw.apiVersion ?? expectedVersion;
  if (kind !== def.kind) {
    throw badRequest(`the kind in the body (${quoteValue(kind)}) does not match the kind of the endpoint (${def.kind})`);
  }
  if (apiVersion !== expectedVersion) {
    throw badRequest(`the API version in the body (${quoteValue(apiVersion)}) does not match the expected API version (${expectedVersion})`);
  }
  const result = decodeStrict(def.schema, raw);
  if (result.typeErrors.length > 0) {
    throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${result.typeErrors.join('; ')}`);
  }
  const problems = [...duplicates, ...result.unknown.map((path) => `unknown field "${path}"`)];
  if (problems.length > 0 && fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  const object: WireObject = { ...result.value, kind: def.kind, apiVersion: expectedVersion };
  const rawMeta = raw.metadata;
  if (typeof rawMeta === 'object' && rawMeta !== null && Array.isArray((rawMeta as Record<string, unknown>).managedFields)
    && ((rawMeta as Record<string, unknown>).managedFields as unknown[]).length === 0) {
    const meta = object.metadata;
    if (typeof meta === 'object' && meta !== null) (meta as Record<string, unknown>).managedFields = [];
  }
  return { object, warnings: fieldValidation === 'Warn' ? problems : [] };
}
