/**
 * The route table of the agent's servers. Patterns are paths with `:name` for one non-empty
 * segment and a final `*name` for the rest after a slash (possibly empty, slashes included); the first
 * route that matches the path and accepts the method wins. A path that matches only routes
 * of other methods is a 405 with Allow; no match at all is a 404. A GET route also answers
 * HEAD; a route without methods answers every method.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { UserInfo } from '../authn/index.js';

export interface RequestContext {
  readonly req: IncomingMessage;
  /** For upgrade requests, a response written straight to the socket (for error answers). */
  readonly res: ServerResponse;
  readonly url: URL;
  /** The decoded path. */
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  /** Present when the request asks for a protocol upgrade (WebSocket, SPDY). */
  readonly upgrade?: { readonly socket: Duplex; readonly head: Buffer };
  /** The authenticated user (secure server only). */
  readonly user?: UserInfo;
}

export type Handler = (ctx: RequestContext) => Promise<void> | void;

export interface Route {
  readonly pattern: string;
  readonly methods?: readonly string[];
  /** The path label of the request metrics (upstream's bucket names: pods, stats, exec, ...). */
  readonly bucket: string;
  /** Streams and long polls (not counted in the request duration histogram's normal buckets). */
  readonly longRunning?: boolean;
  readonly handle: Handler;
}

export type Match =
  | { readonly kind: 'route'; readonly route: Route; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: 'method'; readonly allowed: readonly string[] }
  | { readonly kind: 'none' };

interface Compiled {
  readonly route: Route;
  readonly segments: readonly string[];
  readonly rest: string | undefined;
}

function compile(route: Route): Compiled {
  const parts = route.pattern.split('/').slice(1);
  const last = parts[parts.length - 1];
  if (last?.startsWith('*') === true) return { route, segments: parts.slice(0, -1), rest: last.slice(1) };
  return { route, segments: parts, rest: undefined };
}

function matchPath(c: Compiled, parts: readonly string[]): Record<string, string> | undefined {
  if (c.rest === undefined ? parts.length !== c.segments.length : parts.length <= c.segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < c.segments.length; i++) {
    const want = c.segments[i] ?? '';
    const got = parts[i] ?? '';
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      params[want.slice(1)] = got;
    } else if (want !== got) {
      return undefined;
    }
  }
  if (c.rest !== undefined) params[c.rest] = parts.slice(c.segments.length).join('/');
  return params;
}

function accepts(route: Route, method: string): boolean {
  if (route.methods === undefined) return true;
  return route.methods.includes(method) || (method === 'HEAD' && route.methods.includes('GET'));
}

export interface RouteTable {
  match(method: string, path: string): Match;
}

export function createRouteTable(routes: readonly Route[]): RouteTable {
  const compiled = routes.map(compile);
  return {
    match(method, path) {
      const parts = path.split('/').slice(1);
      const allowed = new Set<string>();
      for (const c of compiled) {
        const params = matchPath(c, parts);
        if (params === undefined) continue;
        if (accepts(c.route, method)) return { kind: 'route', route: c.route, params };
        for (const m of c.route.methods ?? []) allowed.add(m);
      }
      return allowed.size > 0 ? { kind: 'method', allowed: [...allowed] } : { kind: 'none' };
    },
  };
}
