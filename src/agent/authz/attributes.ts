/**
 * The authorization attributes of a request to the agent, mapped as upstream maps them:
 * every path is a request on the node object (`nodes`, name = the node, API version v1), the
 * verb comes from the HTTP method, and the subresource from the path: /stats -> stats,
 * /metrics -> metrics, /logs -> log, /spec -> spec, /checkpoint -> checkpoint, anything
 * else -> proxy.
 */
import type { UserInfo } from '../authn/index.js';

export interface NodeRequestAttributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly namespace: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly resourceRequest: true;
  readonly path: string;
}

/**
 * Upstream maps POST create, GET get, PUT update, PATCH patch, DELETE delete and leaves the
 * verb empty for other methods; HEAD is a read here (get), where upstream leaves it empty.
 */
export function verbOf(method: string): string {
  switch (method.toUpperCase()) {
    case 'POST': return 'create';
    case 'GET':
    case 'HEAD': return 'get';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return 'delete';
    default: return '';
  }
}

/** True when `path` is `prefix` (trailing slash ignored) or below it. */
export function isSubpath(path: string, prefix: string): boolean {
  const p = prefix.replace(/\/$/, '');
  return path === p || (path.startsWith(p) && path[p.length] === '/');
}

const SUBRESOURCES: readonly (readonly [string, string])[] = [
  ['/stats/', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs/', 'log'],
  ['/spec/', 'spec'],
  ['/checkpoint/', 'checkpoint'],
];

export function subresourceOf(path: string): string {
  for (const [prefix, sub] of SUBRESOURCES) if (isSubpath(path, prefix)) return sub;
  return 'proxy';
}

export function nodeRequestAttributes(user: UserInfo, method: string, path: string, nodeName: string): NodeRequestAttributes {
  return {
    user,
    verb: verbOf(method),
    namespace: '',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'nodes',
    subresource: subresourceOf(path),
    name: nodeName,
    resourceRequest: true,
    path,
  };
}

/** The 403 body, as upstream words it. */
export function forbiddenMessage(a: NodeRequestAttributes): string {
  return `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
}

/** The 500 body when the authorizer could not decide. */
export function authorizationErrorMessage(a: NodeRequestAttributes): string {
  return `Authorization error (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
}
