/**
 * registry: the generic REST storage of orch-apiserver. A resource is a declarative
 * ResourceDefinition (names, scope, schema, storage segment, strategy, field labels, table
 * columns, optional conversion between its wire view and the stored form); ResourceRegistry
 * serves create, get, list (selectors, limit/continue), update, patch, server-side apply,
 * delete and deletecollection for it over the Store, keeping managedFields on every write
 * (through ../fieldmanager), and the handlers map HTTP requests onto those; listObjects and
 * watchObjects are the in-process reads of the server's own control loops.
 *
 * Owns: object metadata rules (uid, generateName, timestamps, resourceVersion preconditions,
 * finalizers), strict body decoding (unknown and duplicate fields under fieldValidation), the
 * checks of applied configurations, Table printing. Must not: authenticate or authorize, route
 * URLs, or know any particular resource (resources/ holds those).
 */
export * from './resource.js';
export { ResourceRegistry, type Admission, type ApplyOptions, type DeleteRequest, type RegistryOptions, type WriteOptions } from './registry.js';
export { decodeApplied } from './apply.js';
export { decodeObject, type Decoded, type FieldValidation } from './decode.js';
export { watchObjects, type ObjectEvent, type ObjectWatchOptions } from './watch-objects.js';
export { fieldsOf, listObjects, matcher, type ListPage, type ListRequest } from './list.js';
export { finalizersOf, labelsOf, metaOf, nameOf, namespaceOf, resourceVersionOf, str } from './meta.js';
export { AGE_COLUMN, age, humanDuration, toTable, type IncludeObject } from './table.js';
export { listRequest, sendObject, serveResource, type ResourceRequest } from './handlers.js';
