/**
 * schema: the declarative description of each kind's fields, used for strict decoding of bodies
 * (unknown fields, types, canonical timestamps), strategic merge patch metadata (merge keys),
 * the merge rules of server-side apply (list, map and struct types) and the published OpenAPI v3
 * documents.
 *
 * Must not: validate values beyond their JSON type (that is each resource's strategy), or know
 * HTTP.
 */
export * from './types.js';
export { isAtomicMap, listRule, type ListRule } from './merge-rules.js';
export { canonicalTime, decodeStrict, type DecodeResult } from './decode.js';
export { toOpenApi, type JsonObject } from './openapi.js';
export { deleteOptions, listMeta, objectMeta, objectReference, ownerReference } from './meta.js';
