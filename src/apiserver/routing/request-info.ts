/**
 * What a request is about, from its method, path and query, with the rules of upstream's
 * RequestInfoFactory:
 * - `/api/v1/...` (core) and `/apis/<group>/<version>/...`;
 * - `namespaces/<ns>/<resource>[/<name>[/<subresource>]]`, and `namespaces/<name>[/status|/finalize]`
 *   for the namespace itself; `<resource>[/<name>[/<subresource>]]` otherwise; a `proxy`
 *   subresource takes the rest of the path with it (`nodes/<name>/proxy/<path>`);
 * - a legacy `watch/` segment before the resource, or `?watch=true`, makes GET a watch;
 * - verbs: GET get/list/watch, POST create, PUT update, PATCH patch, DELETE delete or
 *   deletecollection (without a name).
 * Anything else (the discovery and health paths) is a non-resource request.
 */
import { badRequest, methodNotAllowed, pathNotFound } from '../status/index.js';

export interface ResourceInfo {
  readonly kind: 'resource';
  readonly path: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly name: string;
  readonly subresource: string;
  /** For proxy subresources: the rest of the path after `proxy` ('' or `/metrics/resource`). */
  readonly subpath: string;
}

export interface NonResourceInfo {
  readonly kind: 'nonResource';
  readonly path: string;
  /** The lowercase method (head reads as get). */
  readonly verb: string;
}

export type RequestInfo = ResourceInfo | NonResourceInfo;

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function segments(path: string): string[] {
  try {
    // Only a segment with an escape can decode to something else (or throw).
    return path.split('/').filter((s) => s !== '').map((s) => (s.includes('%') ? decodeURIComponent(s) : s));
  } catch (err) {
    throw badRequest(`the request path is not valid: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function resourceVerb(method: string, name: string, watch: boolean, path: string): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return name === '' ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return name === '' ? 'deletecollection' : 'delete';
    default:
      throw methodNotAllowed(method, path);
  }
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = segments(path);
  const nonResource: NonResourceInfo = { kind: 'nonResource', path, verb: method === 'HEAD' ? 'get' : method.toLowerCase() };
  let rest: string[];
  let apiGroup = '';
  let apiVersion: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    apiVersion = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = parts[1] ?? '';
    apiVersion = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  let watch = ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(query.get('watch') ?? '');
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1] ?? '';
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? '')) rest = rest.slice(2);
  }
  // A proxy subresource takes the rest of the path (`nodes/n1/proxy/metrics/resource`).
  const proxied = rest.length > 3 && rest[2] === 'proxy';
  if (rest.length === 0 || (rest.length > 3 && !proxied)) throw pathNotFound(path);
  const [resource = '', name = '', subresource = ''] = rest;
  const subpath = proxied ? `/${rest.slice(3).join('/')}` : '';
  return { kind: 'resource', path, verb: resourceVerb(method, name, watch, path), apiGroup, apiVersion, namespace, resource, name, subresource, subpath };
}
