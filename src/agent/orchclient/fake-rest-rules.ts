/**
 * What the FakeRestClient (fake-rest.ts) knows of the API server besides storage: the Status
 * answers of failures, paths (collection, resource, name), the per-resource rules the node
 * agent meets (field selectors, the delete answer, pods' graceful deletion and created status),
 * selectors, continue tokens and watch selection. Each rule is held to orch-apiserver by the
 * REST behaviour suite (behaviour.ts). Test code only.
 */
import type { ErrorCategory } from '../../api/errors.js';
import { parseFieldSelector, parseLabelSelector, type FieldSelector, type LabelSelector } from '../../apiserver/selectors/index.js';
import { OrchApiError } from './status.js';

export type Obj = Record<string, unknown>;

const HTTP_CODES: Readonly<Record<ErrorCategory, [number, string]>> = {
  invalid: [422, 'Invalid'], 'not-found': [404, 'NotFound'], 'already-exists': [409, 'AlreadyExists'], conflict: [409, 'Conflict'],
  gone: [410, 'Gone'], unavailable: [503, 'ServiceUnavailable'], timeout: [504, 'Timeout'], forbidden: [403, 'Forbidden'],
  unauthorized: [401, 'Unauthorized'], 'too-large': [413, 'RequestEntityTooLarge'], internal: [500, 'InternalError'],
};

/** Details of a Status naming its object: upstream's kind is the resource (plural). */
export interface StatusDetails {
  readonly name?: string;
  readonly kind?: string;
  readonly group?: string;
  readonly uid?: string;
}

/** The error the REST client throws for an answer of `httpCode` (or of an error category) with `reason`. */
export function apiError(code: number | ErrorCategory, reason?: string, message?: string, path = '', details?: StatusDetails): OrchApiError {
  const [httpCode, defaultReason] = typeof code === 'number' ? [code, undefined] : HTTP_CODES[code];
  const why = reason ?? defaultReason;
  const text = message ?? why ?? `HTTP ${httpCode}`;
  const status = { kind: 'Status', status: 'Failure', code: httpCode, ...(why === undefined ? {} : { reason: why }), message: text, ...(details === undefined ? {} : { details }) };
  return new OrchApiError(httpCode, status, `${path}: ${httpCode} ${text}`, path);
}

export const meta = (o: Obj): Obj => (o.metadata ??= {}) as Obj;
export const parentOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));
export const lastSegment = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
/** `/api/v1/namespaces/ns/pods` -> `/api/v1/pods`: the collection across namespaces. */
export const acrossNamespaces = (collection: string): string => collection.replace(/\/namespaces\/[^/]+(?=\/[^/]+$)/, '');
/** The namespace of a collection path (`/api/v1/namespaces/ns/pods` -> ns), if it has one. */
export const namespaceOfCollection = (collection: string): string | undefined => /\/namespaces\/([^/]+)\/[^/]+$/.exec(collection)?.[1];

/** The group of an object path (`/apis/<group>/...`; '' for core). */
function groupOf(key: string): string {
  return /^\/apis\/([^/]+)\//.exec(key)?.[1] ?? '';
}

/** The Status details of the object at `key` (`<collection>/<name>`). */
export function detailsOf(key: string): StatusDetails {
  return { name: lastSegment(key), kind: lastSegment(parentOf(key)), group: groupOf(key) };
}

/** A field's value as selectors and messages compare it. */
export function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

function valueAt(object: Obj, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((v, key) => (typeof v === 'object' && v !== null ? (v as Obj)[key] : undefined), object);
}

interface ResourceRules {
  /** Field selector labels besides metadata.name and metadata.namespace. */
  readonly fields: readonly string[];
  /** DELETE answers the object (upstream's ReturnDeletedObject), not a Status. */
  readonly returnsObject?: boolean;
}

const REFERENCE = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];
const RESOURCES: Readonly<Record<string, ResourceRules>> = {
  pods: {
    fields: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
    returnsObject: true,
  },
  namespaces: { fields: ['status.phase'], returnsObject: true },
  nodes: { fields: ['spec.unschedulable'] },
  secrets: { fields: ['type'] },
  certificatesigningrequests: { fields: ['spec.signerName'] },
  events: {
    fields: [...REFERENCE.map((f) => `regarding.${f}`), ...REFERENCE.map((f) => `involvedObject.${f}`), 'reason', 'type', 'action', 'source', 'reportingController', 'reportingComponent', 'reportingInstance'],
  },
};

/** Booleans read as upstream's field sets write them: absent is "false". */
const BOOLEAN_FIELDS = new Set(['spec.hostNetwork', 'spec.unschedulable']);

export function rulesOf(resource: string): ResourceRules {
  return RESOURCES[resource] ?? { fields: [] };
}

/** A list's or watch's selection of a collection; throws the 400 of a bad selector. */
export interface Selection {
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
}

export function selectionOf(collection: string, query: Readonly<Record<string, unknown>> | undefined): Selection {
  const resource = lastSegment(collection);
  try {
    return {
      labels: parseLabelSelector(text(query?.labelSelector)),
      fields: parseFieldSelector(text(query?.fieldSelector), rulesOf(resource).fields, resource),
    };
  } catch (err) {
    throw apiError(400, 'BadRequest', err instanceof Error ? err.message : String(err), collection);
  }
}

/** Whether the object at `key` is in `collection` (or the same collection across namespaces) and selected. */
export function selects(collection: string, selection: Selection, key: string, object: Obj): boolean {
  const parent = parentOf(key);
  if (parent !== collection && acrossNamespaces(parent) !== collection) return false;
  if (!selection.labels.matches((meta(object).labels ?? {}) as Record<string, string>)) return false;
  const fields: Record<string, string> = { 'metadata.name': text(meta(object).name), 'metadata.namespace': text(meta(object).namespace) };
  for (const r of selection.fields.requirements) {
    if (r.field in fields) continue;
    const value = valueAt(object, r.field);
    fields[r.field] = BOOLEAN_FIELDS.has(r.field) ? String(value === true) : text(value);
  }
  return selection.fields.matches(fields);
}

/** A continue token: the revision the list is read at and the last key handed out. */
export function encodeContinue(rv: number, after: string): string {
  return Buffer.from(JSON.stringify({ rv, after })).toString('base64url');
}

export function decodeContinue(token: string, path: string): { rv: number; after: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv?: unknown; after?: unknown };
    if (typeof parsed.rv === 'number' && typeof parsed.after === 'string') return { rv: parsed.rv, after: parsed.after };
  } catch {
    // Not a token of ours: the 400 below says so.
  }
  throw apiError(400, 'BadRequest', `invalid value for query parameter continue: ${JSON.stringify(token)} is not a continue token of this list`, path);
}
