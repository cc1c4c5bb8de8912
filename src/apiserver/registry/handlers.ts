/**
 * The HTTP side of the registry: one handler per verb that reads the query parameters and the
 * body, calls the registry and writes the result (object, list, Table or Status). Watches are
 * served by ../watch (the router calls it for verb watch).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeBody, decodeBodyFields, jsonDuplicates, parseYamlFields, readBody, send, warningHeaders, type Output, type Query } from '../http/index.js';
import { resolveManager } from '../fieldmanager/index.js';
import { PATCH_CONTENT_TYPES } from '../patch/index.js';
import { decodeStrict, deleteOptions } from '../schema/index.js';
import { parseFieldSelector, parseLabelSelector } from '../selectors/index.js';
import { badRequest, invalid, StatusError, success, unsupportedMediaType } from '../status/index.js';
import { decodeApplied } from './apply.js';
import type { FieldValidation } from './decode.js';
import { decodeObject } from './decode.js';
import { listObjects, type ListPage, type ListRequest } from './list.js';
import { metaOf, str } from './meta.js';
import type { ResourceRegistry } from './registry.js';
import { apiVersionOf, type RequestUser, type Verb, type WireObject } from './resource.js';
import { toPartialList, toTable, partialObject, type IncludeObject } from './table.js';
import { quoteValue } from '../../api/quote.js';

export interface ResourceRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly registry: ResourceRegistry;
  readonly verb: Verb;
  /** '' for cluster-scoped resources and for lists across namespaces. */
  readonly namespace: string;
  readonly name: string;
  /** '' for the object itself, else `status` or a subresource with a merge rule. */
  readonly subresource: string;
  readonly query: Query;
  readonly user: RequestUser;
  readonly output: Output;
  readonly maxRequestBytes: number;
  readonly now: () => Date;
}

function fieldValidation(query: Query): FieldValidation {
  return query.oneOf('fieldValidation', ['Strict', 'Warn', 'Ignore'], 'Strict');
}

function includeObject(query: Query): IncludeObject {
  return query.oneOf('includeObject', ['None', 'Metadata', 'Object'], 'Metadata');
}

/** Writes one object as JSON/YAML, a one-row Table or a PartialObjectMetadata. */
export function sendObject(r: ResourceRequest, code: number, object: WireObject, headers: Record<string, string> = {}): void {
  const { output } = r;
  if (output.kind === 'table') {
    send(r.res, code, toTable(r.registry.def, [object], { resourceVersion: str(metaOf(object).resourceVersion) }, { version: output.version, include: includeObject(r.query), now: r.now(), headers: !r.query.bool('noHeaders') }), output, headers);
  } else if (output.kind === 'partial') {
    send(r.res, code, partialObject(object, output.version), output, headers);
  } else {
    send(r.res, code, object, output, headers);
  }
}

/** The list parameters shared by list, watch and deletecollection. */
export function listRequest(r: ResourceRequest): ListRequest {
  const def = r.registry.def;
  const limit = r.query.int('limit');
  const cont = r.query.string('continue');
  const rv = r.query.string('resourceVersion');
  const match = r.query.string('resourceVersionMatch');
  if (match !== undefined && match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    throw badRequest(`invalid value for query parameter resourceVersionMatch: ${quoteValue(match)}: supported values: NotOlderThan, Exact`);
  }
  // A watch with sendInitialEvents may ask NotOlderThan of "any" revision.
  if (match !== undefined && match !== '' && (rv === undefined || rv === '') && r.verb !== 'watch') {
    throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
  }
  if (cont !== undefined && cont !== '' && rv !== undefined && rv !== '' && rv !== '0') {
    throw badRequest('specifying resourceVersion is not allowed when using continue');
  }
  return {
    namespace: r.namespace,
    labelSelector: parseLabelSelector(r.query.string('labelSelector') ?? ''),
    fieldSelector: parseFieldSelector(r.query.string('fieldSelector') ?? '', def.fieldLabels, `${def.plural}.${def.group === '' ? 'core' : def.group}`),
    ...(limit === undefined ? {} : { limit }),
    ...(cont === undefined ? {} : { continue: cont }),
    ...(rv === undefined ? {} : { resourceVersion: rv }),
    ...(match === undefined || match === '' ? {} : { resourceVersionMatch: match }),
  };
}

function listMeta(page: ListPage): Record<string, unknown> {
  return {
    resourceVersion: page.resourceVersion,
    ...(page.continue === undefined ? {} : { continue: page.continue }),
    ...(page.remainingItemCount === undefined ? {} : { remainingItemCount: page.remainingItemCount }),
  };
}

async function handleList(r: ResourceRequest): Promise<void> {
  const page = await listObjects(r.registry, listRequest(r));
  const def = r.registry.def;
  const { output } = r;
  if (output.kind === 'table') {
    send(r.res, 200, toTable(def, page.items, listMeta(page), { version: output.version, include: includeObject(r.query), now: r.now(), headers: !r.query.bool('noHeaders') }), output);
  } else if (output.kind === 'partial') {
    send(r.res, 200, toPartialList(page.items, listMeta(page), output.version), output);
  } else {
    send(r.res, 200, { kind: def.listKind, apiVersion: apiVersionOf(def), metadata: listMeta(page), items: page.items }, output);
  }
}

function ctx(r: ResourceRequest): { user: RequestUser; now: Date } {
  return { user: r.user, now: r.now() };
}

/** The manager of a write: `fieldManager`, else the User-Agent's first segment (422 when invalid). */
function manager(r: ResourceRequest, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', apply = false): string {
  return resolveManager(r.query.string('fieldManager'), r.req.headers['user-agent'], { apply, kind });
}

async function handleCreate(r: ResourceRequest): Promise<void> {
  const fieldManager = manager(r, 'CreateOptions');
  const parsed = decodeBodyFields(await readBody(r.req, r.maxRequestBytes), r.req.headers['content-type']);
  const decoded = decodeObject(r.registry.def, parsed.value, fieldValidation(r.query), parsed.duplicates);
  // The decoded object shares nothing with anything else: the registry may complete it in place.
  const created = await r.registry.createFrom(ctx(r), r.namespace, decoded.object, { dryRun: r.query.dryRun(), fieldManager });
  sendObject(r, 201, created, warningHeaders(decoded.warnings));
}

async function handleUpdate(r: ResourceRequest): Promise<void> {
  const fieldManager = manager(r, 'UpdateOptions');
  const parsed = decodeBodyFields(await readBody(r.req, r.maxRequestBytes), r.req.headers['content-type']);
  const decoded = decodeObject(r.registry.def, parsed.value, fieldValidation(r.query), parsed.duplicates);
  const options = { dryRun: r.query.dryRun(), fieldManager, ...(r.subresource === '' ? {} : { subresource: r.subresource }) };
  const result = await r.registry.update(ctx(r), r.namespace, r.name, decoded.object, options);
  sendObject(r, result.created ? 201 : 200, result.object, warningHeaders(decoded.warnings));
}

const APPLY_YAML = 'application/apply-patch+yaml';
const APPLY_CBOR = 'application/apply-patch+cbor';
const PATCH_TYPES = [...Object.keys(PATCH_CONTENT_TYPES), APPLY_YAML];

/** The JSON patch's own problems under fieldValidation: fields of an operation other than op, path, from and value, or repeated. */
function jsonPatchProblems(text: string, patch: unknown): string[] {
  const problems: string[] = [];
  if (Array.isArray(patch)) {
    for (const op of patch as unknown[]) {
      if (typeof op !== 'object' || op === null) continue;
      for (const key of Object.keys(op)) if (!['op', 'path', 'from', 'value'].includes(key)) problems.push(`json patch unknown field ${JSON.stringify(key)}`);
    }
  }
  for (const d of jsonDuplicates(text, patch)) if (d.depth === 2) problems.push(`json patch duplicate field ${JSON.stringify(d.key)}`);
  return problems;
}

async function handlePatch(r: ResourceRequest): Promise<void> {
  const contentType = (r.req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType === APPLY_YAML) return handleApply(r);
  if (contentType === APPLY_CBOR) {
    throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format (${APPLY_CBOR}): this server does not read CBOR; send the apply patch as ${APPLY_YAML} (JSON is YAML); accepted media types include: ${PATCH_TYPES.join(', ')}`);
  }
  const type = PATCH_CONTENT_TYPES[contentType];
  if (type === undefined) throw unsupportedMediaType(contentType, PATCH_TYPES);
  if (r.query.has('force')) {
    r.query.bool('force');
    throw invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' }]);
  }
  const fieldManager = manager(r, 'PatchOptions');
  const validation = fieldValidation(r.query);
  const raw = await readBody(r.req, r.maxRequestBytes);
  const parsed = decodeBodyFields(raw, contentType, [contentType]);
  const problems = type === 'json' ? jsonPatchProblems(raw.toString('utf8'), parsed.value) : [...parsed.duplicates];
  if (problems.length > 0 && validation === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  const options = { dryRun: r.query.dryRun(), fieldValidation: validation, fieldManager, ...(r.subresource === '' ? {} : { subresource: r.subresource }) };
  const result = await r.registry.patch(ctx(r), r.namespace, r.name, type, parsed.value, options);
  sendObject(r, 200, result.object, warningHeaders(validation === 'Warn' ? [...problems, ...result.warnings] : []));
}

/**
 * Server-side apply: the body is YAML (JSON is YAML) holding the object's configuration;
 * `fieldManager` is required, `force` takes fields from other managers. Duplicate fields follow
 * fieldValidation (upstream's wording: `line N: key "x" already set in map`); unknown fields
 * are always refused, as upstream's typed apply does.
 */
async function handleApply(r: ResourceRequest): Promise<void> {
  const force = r.query.bool('force');
  const fieldManager = manager(r, 'PatchOptions', true);
  const validation = fieldValidation(r.query);
  const text = (await readBody(r.req, r.maxRequestBytes)).toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty: an apply patch is the configuration of the object');
  const parsed = parseYamlFields(text);
  if (parsed.duplicates.length > 0 && validation === 'Strict') {
    throw badRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${parsed.duplicates.join('\n  ')}`);
  }
  const config = decodeApplied(r.registry.def, parsed.value, r.namespace, r.name);
  const options = {
    dryRun: r.query.dryRun(), fieldManager, force, raw: parsed.value as Record<string, unknown>,
    ...(r.subresource === '' ? {} : { subresource: r.subresource }),
  };
  const result = await r.registry.apply(ctx(r), r.namespace, r.name, config, options);
  sendObject(r, result.created ? 201 : 200, result.object, warningHeaders(validation === 'Warn' ? parsed.duplicates : []));
}

interface DeleteBody {
  readonly dryRun: boolean;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly orphanDependents?: boolean;
  readonly gracePeriodSeconds?: number;
}

/** DeleteOptions from the body (optional) and the query. */
async function deleteBody(r: ResourceRequest): Promise<DeleteBody> {
  const raw = await readBody(r.req, r.maxRequestBytes);
  let options: Record<string, unknown> = {};
  if (raw.length > 0 && raw.toString('utf8').trim() !== '') {
    const parsed = decodeBody(raw, r.req.headers['content-type']);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('the DeleteOptions body must be a JSON object');
    const decoded = decodeStrict(deleteOptions, parsed as Record<string, unknown>);
    const problems = [...decoded.typeErrors, ...decoded.unknown.map((u) => `unknown field "${u}"`)];
    if (problems.length > 0) throw badRequest(`invalid DeleteOptions: ${problems.join('; ')}`);
    options = decoded.value;
    const kind = options.kind;
    if (kind !== undefined && kind !== 'DeleteOptions') throw badRequest(`the body of a DELETE must be DeleteOptions, not ${quoteValue(kind)}`);
  }
  const dryRunBody = Array.isArray(options.dryRun) ? (options.dryRun as string[]) : [];
  for (const v of dryRunBody) if (v !== 'All') throw badRequest(`invalid dryRun value ${quoteValue(v)}: the only supported value is "All"`);
  // As upstream: the body's options when there is a body, else the query's.
  const graceQuery = r.query.int('gracePeriodSeconds');
  const grace = typeof options.gracePeriodSeconds === 'number' ? options.gracePeriodSeconds : graceQuery;
  const policies = ['Orphan', 'Background', 'Foreground'];
  r.query.oneOf('propagationPolicy', policies, 'Background');
  const bodyPolicy = options.propagationPolicy;
  if (bodyPolicy !== undefined && !(typeof bodyPolicy === 'string' && policies.includes(bodyPolicy))) {
    throw invalid('DeleteOptions', 'meta.k8s.io', '', [{ type: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: ${quoteValue(bodyPolicy)}: supported values: "Orphan", "Background", "Foreground"` }]);
  }
  const orphanQuery = r.query.has('orphanDependents') ? r.query.bool('orphanDependents') : undefined;
  const orphan = typeof options.orphanDependents === 'boolean' ? options.orphanDependents : orphanQuery;
  if (orphan !== undefined && (bodyPolicy !== undefined || r.query.has('propagationPolicy'))) {
    throw invalid('DeleteOptions', 'meta.k8s.io', '', [{ type: 'FieldValueInvalid', field: 'propagationPolicy', message: 'Invalid value: orphanDependents and propagationPolicy cannot both be set' }]);
  }
  const pre = (options.preconditions ?? {}) as { uid?: string; resourceVersion?: string };
  return {
    dryRun: r.query.dryRun() || dryRunBody.length > 0,
    ...(pre.uid === undefined ? {} : { uid: pre.uid }),
    ...(pre.resourceVersion === undefined ? {} : { resourceVersion: pre.resourceVersion }),
    ...(orphan === undefined ? {} : { orphanDependents: orphan }),
    ...(grace === undefined ? {} : { gracePeriodSeconds: grace }),
  };
}

async function handleDelete(r: ResourceRequest): Promise<void> {
  const options = await deleteBody(r);
  const { object, deleted } = await r.registry.delete(ctx(r), r.namespace, r.name, options);
  const code = !deleted && options.orphanDependents === false ? 202 : 200;
  if (!deleted || r.registry.def.returnDeletedObject) {
    sendObject(r, code, object);
    return;
  }
  const def = r.registry.def;
  send(r.res, code, success({ name: r.name, group: def.group, kind: def.plural, uid: str(metaOf(object).uid) }), r.output);
}

async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const options = await deleteBody(r);
  const request = listRequest(r);
  let cont: string | undefined = request.continue;
  do {
    const page = await listObjects(r.registry, { ...request, limit: request.limit ?? 500, ...(cont === undefined ? {} : { continue: cont }) });
    for (const item of page.items) {
      const meta = metaOf(item);
      try {
        await r.registry.delete(ctx(r), str(meta.namespace), str(meta.name), {
          dryRun: options.dryRun, ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
        });
      } catch (err) {
        // Deleted concurrently by someone else: nothing left to do for this one.
        if (!(err instanceof StatusError && err.httpCode === 404)) throw err;
      }
    }
    cont = page.continue;
    // An explicit limit deletes one page only (as upstream's paged deletecollection).
  } while (cont !== undefined && request.limit === undefined);
  const def = r.registry.def;
  send(r.res, 200, success({ group: def.group, kind: def.plural }), r.output);
}

/** GetOptions: resourceVersion "0" (any state) or "N" (not older than N) may be read from the watch cache. */
function getOptions(r: ResourceRequest): { resourceVersion?: string } {
  const rv = r.query.string('resourceVersion');
  return rv === undefined || rv === '' ? {} : { resourceVersion: rv };
}

/** Serves every verb but watch. */
export async function serveResource(r: ResourceRequest): Promise<void> {
  switch (r.verb) {
    case 'get':
      sendObject(r, 200, await r.registry.get(r.namespace, r.name, getOptions(r)));
      return;
    case 'list':
      return handleList(r);
    case 'create':
      return handleCreate(r);
    case 'update':
      return handleUpdate(r);
    case 'patch':
      return handlePatch(r);
    case 'delete':
      return handleDelete(r);
    case 'deletecollection':
      return handleDeleteCollection(r);
    case 'watch':
      throw badRequest('watch is served by the watch handler');
  }
}
