/**
 * OpenAPI v3, as kubectl 1.27+ reads it: `/openapi/v3` lists one document per group version
 * (`api/v1`, `apis/<group>/<version>`) and each document holds the paths of its resources (with
 * `x-kubernetes-action` and `x-kubernetes-group-version-kind`, and the `fieldValidation`
 * parameter on PATCH, which tells kubectl that the server validates fields itself) and the
 * schemas of its kinds. `/openapi/v2` is a document without paths or definitions, in JSON or
 * (as kubectl asks) protobuf: kubectl 1.27 and 1.28 fail `create -f` and `apply` when it is
 * missing, and then take what they need from v3.
 */
import { createHash } from 'node:crypto';
import { encodeMessage } from '../protobuf/index.js';
import type { ResourceDefinition } from '../registry/index.js';
import { listMeta, toOpenApi, type JsonObject } from '../schema/index.js';
import { groupsOf } from './discovery.js';
import { compareKeys } from '../../api/order.js';

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const param = (name: string, where: 'path' | 'query', type: 'string' | 'integer' | 'boolean', description: string): JsonObject => ({
  name, in: where, description, ...(where === 'path' ? { required: true } : {}), schema: { type, uniqueItems: true },
});

const COMMON = {
  pretty: param('pretty', 'query', 'string', "If 'true', the output is indented."),
  dryRun: param('dryRun', 'query', 'string', 'When present ("All"), the request is validated but not persisted.'),
  fieldValidation: param('fieldValidation', 'query', 'string', 'Strict (default here), Warn or Ignore: what unknown or duplicate fields in the body do.'),
  fieldManager: param('fieldManager', 'query', 'string', 'The name the write is recorded under in metadata.managedFields (default: the User-Agent up to its first "/"); required for apply patches.'),
  force: param('force', 'query', 'boolean', 'Apply patches only: take the fields other managers own instead of failing with a conflict.'),
  list: ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'].map((n) => param(n, 'query', 'string', `List option ${n}.`))
    .concat(['limit', 'timeoutSeconds'].map((n) => param(n, 'query', 'integer', `List option ${n}.`)))
    .concat(['watch', 'allowWatchBookmarks', 'sendInitialEvents'].map((n) => param(n, 'query', 'boolean', `List option ${n}.`))),
};

function operation(def: ResourceDefinition, action: string, body: boolean, response: JsonObject, parameters: JsonObject[]): JsonObject {
  const ref = (name: string): JsonObject => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });
  return {
    description: `${action} ${def.kind}`,
    operationId: `${action}${def.group === '' ? 'Core' : ''}${def.kind}`,
    parameters: [COMMON.pretty, ...parameters],
    ...(body ? { requestBody: { required: true, ...ref(def.schema.name ?? def.kind) } } : {}),
    responses: { '200': { description: 'OK', ...response }, '401': { description: 'Unauthorized' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: def.group, version: def.version, kind: def.kind },
  };
}

function pathsOf(def: ResourceDefinition, listSchema: string): JsonObject {
  const base = `/${gvPath(def.group, def.version)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.plural}`;
  const ns = def.namespaced ? [param('namespace', 'path', 'string', 'object name and auth scope, such as for teams and projects')] : [];
  const name = param('name', 'path', 'string', `name of the ${def.kind}`);
  const one = { content: { 'application/json': { schema: { $ref: `#/components/schemas/${def.schema.name ?? def.kind}` } } } };
  const many = { content: { 'application/json': { schema: { $ref: `#/components/schemas/${listSchema}` } } } };
  const status = { content: { 'application/json': { schema: { type: 'object' } } } };
  const verbs = new Set<string>(def.verbs);
  const collection: JsonObject = { parameters: ns };
  if (verbs.has('list')) collection.get = operation(def, 'list', false, many, COMMON.list);
  if (verbs.has('create')) collection.post = operation(def, 'post', true, one, [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation]);
  if (verbs.has('deletecollection')) collection.delete = operation(def, 'deletecollection', false, status, [COMMON.dryRun, ...COMMON.list]);
  const item: JsonObject = { parameters: [name, ...ns] };
  if (verbs.has('get')) item.get = operation(def, 'get', false, one, []);
  if (verbs.has('update')) item.put = operation(def, 'put', true, one, [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation]);
  if (verbs.has('patch')) item.patch = operation(def, 'patch', true, one, [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation, COMMON.force]);
  if (verbs.has('delete')) item.delete = operation(def, 'delete', false, status, [COMMON.dryRun]);
  const out: JsonObject = { [base]: collection, [`${base}/{name}`]: item };
  if (def.namespaced && verbs.has('list')) out[`/${gvPath(def.group, def.version)}/${def.plural}`] = { get: operation(def, 'list', false, many, COMMON.list) };
  return out;
}

/** The documents of every group version, by path (`api/v1`), with their hashes. */
export function openApiDocuments(defs: readonly ResourceDefinition[], title: string, version: string): Map<string, { text: string; hash: string }> {
  const docs = new Map<string, { text: string; hash: string }>();
  for (const g of groupsOf(defs)) {
    for (const v of g.versions) {
      const components = new Map<string, JsonObject>();
      const paths: JsonObject = {};
      for (const def of defs.filter((d) => d.group === g.group && d.version === v)) {
        toOpenApi(def.schema, components);
        const listName = `${def.schema.name ?? def.kind}List`;
        toOpenApi(listMeta, components);
        components.set(listName, {
          type: 'object',
          required: ['items'],
          properties: {
            kind: { type: 'string' }, apiVersion: { type: 'string' },
            metadata: { $ref: `#/components/schemas/${listMeta.name ?? ''}` },
            items: { type: 'array', items: { $ref: `#/components/schemas/${def.schema.name ?? def.kind}` } },
          },
          'x-kubernetes-group-version-kind': [{ group: def.group, version: def.version, kind: def.listKind }],
        });
        Object.assign(paths, pathsOf(def, listName));
      }
      const doc = { openapi: '3.0.0', info: { title, version }, paths, components: { schemas: Object.fromEntries([...components].sort(compareKeys)) } };
      const text = JSON.stringify(doc);
      docs.set(gvPath(g.group, v), { text, hash: createHash('sha512').update(text).digest('hex').slice(0, 128).toUpperCase() });
    }
  }
  return docs;
}

/** The `/openapi/v3` root document. */
export function openApiRoot(docs: ReadonlyMap<string, { hash: string }>): JsonObject {
  const paths: JsonObject = {};
  for (const [path, doc] of docs) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` };
  return { paths };
}

/** The media types kubectl asks /openapi/v2 for; the answer names the second (Go's mime parser refuses the `@`). */
const OPENAPI_V2_PROTOBUF = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];

/** The /openapi/v2 document in the form `accept` asks for: protobuf or JSON. */
export function openApiV2(accept: string | undefined, title: string, version: string): { contentType: string; body: Buffer } {
  const asked = (accept ?? '').split(',').map((p) => (p.split(';')[0] ?? '').trim().toLowerCase());
  if (OPENAPI_V2_PROTOBUF.some((t) => asked.includes(t))) {
    return { contentType: OPENAPI_V2_PROTOBUF[1] ?? '', body: encodeMessage('orch.openapi.v2.Document', { swagger: '2.0', info: { title, version }, paths: {} }) };
  }
  return { contentType: 'application/json', body: Buffer.from(`${JSON.stringify({ swagger: '2.0', info: { title, version }, paths: {}, definitions: {} })}\n`) };
}
