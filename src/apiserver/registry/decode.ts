/**
 * From a parsed body to a wire object of one resource view: it must be a JSON object of the
 * view's kind and apiVersion (absent ones are filled in), and it is decoded strictly against the
 * view's schema. `fieldValidation` says what unknown fields do: Strict (default here) rejects
 * them with 400 BadRequest `strict decoding error: unknown field "x"`, Warn drops them with a
 * Warning header, Ignore drops them silently. Wrong JSON types are always 400.
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

export function decodeObject(def: Pick<ResourceDefinition, 'group' | 'version' | 'kind' | 'schema'>, body: unknown, fieldValidation: FieldValidation): Decoded {
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
  const unknown = result.unknown.map((path) => `unknown field "${path}"`);
  if (unknown.length > 0 && fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${unknown.join(', ')}`);
  const object = { ...result.value, kind: def.kind, apiVersion: expectedVersion };
  return { object, warnings: fieldValidation === 'Warn' ? unknown : [] };
}
