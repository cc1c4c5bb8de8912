/**
 * http: the request and response plumbing shared by the router, the resource handlers and
 * watches: bodies (size limit, JSON/YAML decoding), content negotiation, JSON/YAML/Status
 * responses, query parameters, duplicate fields of bodies, Warning headers. Must not: authenticate, route or know
 * resources.
 */
export { decodeBody, decodeBodyFields, mediaType, OBJECT_MEDIA_TYPES, parseYaml, parseYamlFields, readBody, type ParsedBody } from './body.js';
export { jsonDuplicates, jsonDuplicateMessage, type JsonDuplicate } from './duplicates.js';
export { errorOutput, negotiate, send, sendError, serialize, type Output, type OutputKind } from './respond.js';
export { Query } from './query.js';
export { warningHeaders } from './warning.js';
