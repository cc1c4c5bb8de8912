/**
 * The request pipeline: authenticate -> parse the request info -> authorize -> dispatch to the
 * health, version, discovery and OpenAPI documents, to a resource's handlers, or to the
 * connector of a connect subresource (pods/log, pods/exec...). Upgrade requests take the same
 * path on a response bound to their socket. Every failure is answered with a Status; nothing a
 * client sends can throw out of here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { messageOf } from '../../api/errors.js';
import { quoteValue, truncateText } from '../../api/quote.js';
import { parseRequestTarget } from '../../api/request-target.js';
import { ANONYMOUS, type Authenticator, type UserInfo } from '../authn/index.js';
import { describeDenial, type Attributes, type Authorizer } from '../authz/index.js';
import { errorOutput, negotiate, send, sendError, Query, type Output, type OutputKind } from '../http/index.js';
import { canEncode } from '../protobuf/index.js';
import { apiVersionOf, serveResource, type ResourceDefinition, type ResourceRegistry, type Verb } from '../registry/index.js';
import { badRequest, forbidden, forbiddenPath, methodNotAllowed, pathNotFound, StatusError, tooManyRequests, unauthorized, unavailable } from '../status/index.js';
import { serveWatch, type WatchBudget } from '../watch/index.js';
import type { Cancellation, RequestGate } from '../flowcontrol/index.js';
import type { ApiServerMetrics } from '../metrics/index.js';
import { upgradeResponse, type Connector, type UpgradeContext } from './connect.js';
import { instrumentation } from './instrument.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions } from './discovery.js';
import { openApiDocuments, openApiRoot, openApiV2 } from './openapi.js';
import { parseRequestInfo, type RequestInfo, type ResourceInfo } from './request-info.js';

export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
  readonly gitVersion: string;
  readonly gitCommit: string;
  readonly gitTreeState: string;
  readonly buildDate: string;
  readonly goVersion: string;
  readonly compiler: string;
  readonly platform: string;
}

export interface RouterOptions {
  readonly registries: readonly ResourceRegistry[];
  readonly authenticator: Authenticator;
  readonly authorizer: Authorizer;
  readonly maxRequestBytes: number;
  readonly version: VersionInfo;
  /** Resolves when the storage answers; rejects otherwise (readyz). */
  readonly ready: () => Promise<void>;
  readonly log: (message: string) => void;
  readonly now?: () => Date;
  /** The address advertised in `/api` (host:port). */
  readonly serverAddress: string;
  /** Handlers of connect subresources (pods/log, pods/exec, ...). */
  readonly connectors?: readonly Connector[];
  /** The request metrics, and /metrics. */
  readonly metrics?: ApiServerMetrics;
  /** What the server's watches may buffer. */
  readonly watchBudget: WatchBudget;
  /** API Priority and Fairness or the max-in-flight limits; none: every request is served at once. */
  readonly gate?: RequestGate;
}

export interface Router {
  /** The HTTPS server's request listener. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** The HTTPS server's `upgrade` listener (WebSocket and SPDY requests). */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/** The outputs a resource is written in: protobuf where its kind has a message type. */
function outputsOf(def: ResourceDefinition): OutputKind[] {
  return canEncode(apiVersionOf(def), def.kind) ? ['yaml', 'protobuf', 'table', 'partial'] : ['yaml', 'table', 'partial'];
}

/** Paths anonymous requests may read (everything else needs credentials). */
const ANONYMOUS_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

/**
 * The response's 'close' (its client went away) as what a request waiting in a priority level's
 * queue listens to. Not an AbortController per request: node 20 builds each signal as an
 * EventTarget, 0.4 % of the server's busy time in the etcd cluster bench's profile, and most
 * requests never wait. As before, a response that closes while its request waits takes it out of the queue.
 */
function clientGone(res: ServerResponse): Cancellation {
  return {
    aborted: false,
    addEventListener: (_type, listener) => {
      res.once('close', listener);
    },
    removeEventListener: (_type, listener) => {
      res.removeListener('close', listener);
    },
  };
}

export function createRouter(options: RouterOptions): Router {
  // Hidden definitions (compatibility views) are served but not advertised.
  const defs = options.registries.map((r) => r.def).filter((d) => d.hidden !== true);
  const connectors = options.connectors ?? [];
  const openapi = openApiDocuments(defs, 'Orch', options.version.gitVersion);
  const now = options.now ?? (() => new Date());

  async function health(path: string, query: Query, res: ServerResponse): Promise<void> {
    const checks: [string, () => Promise<void>][] = [['ping', () => Promise.resolve()]];
    if (path !== '/livez') checks.push(['storage', options.ready]);
    const lines: string[] = [];
    let ok = true;
    for (const [name, check] of checks) {
      try {
        await check();
        lines.push(`[+]${name} ok`);
      } catch (err) {
        ok = false;
        lines.push(`[-]${name} failed: ${messageOf(err)}`);
      }
    }
    const verbose = query.has('verbose');
    const name = path.slice(1);
    const text = ok ? (verbose ? `${lines.join('\n')}\n${name} check passed\n` : 'ok') : `${lines.join('\n')}\n${name} check failed\n`;
    res.writeHead(ok ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache, private' });
    res.end(text);
  }

  /** The discovery, version or OpenAPI document at `path`, or undefined. */
  function documentAt(path: string): unknown {
    const parts = path.split('/').filter((s) => s !== '');
    if (path === '/version' || path === '/version/') return options.version;
    if (parts[0] === 'api' && parts.length === 2) return apiResourceList(defs, '', parts[1] ?? '');
    if (parts[0] === 'apis' && parts.length === 2) return apiGroup(defs, parts[1] ?? '');
    if (parts[0] === 'apis' && parts.length === 3) return apiResourceList(defs, parts[1] ?? '', parts[2] ?? '');
    if (path === '/openapi/v3' || path === '/openapi/v3/') return openApiRoot(openapi);
    return undefined;
  }

  async function nonResource(req: IncomingMessage, res: ServerResponse, path: string, query: Query, pretty: boolean): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method, path);
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      await health(path, query, res);
      return;
    }
    if (path === '/api' || path === '/apis') {
      const output = negotiate(req.headers.accept, ['discovery-v2'], pretty);
      const body = output.kind === 'discovery-v2' ? aggregatedDiscovery(defs, path === '/api') : path === '/api' ? apiVersions(options.serverAddress) : apiGroupList(defs);
      send(res, 200, body, output, { Vary: 'Accept' });
      return;
    }
    if (path === '/metrics' && options.metrics !== undefined) {
      const text = await options.metrics.registry.metrics();
      res.writeHead(200, { 'Content-Type': options.metrics.registry.contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
      res.end(text);
      return;
    }
    if (path === '/openapi/v2') {
      const v2 = openApiV2(req.headers.accept, 'Orch', options.version.gitVersion);
      res.writeHead(200, { 'Content-Type': v2.contentType, 'Content-Length': v2.body.length, 'Cache-Control': 'no-cache, private' });
      res.end(v2.body);
      return;
    }
    const doc = path.startsWith('/openapi/v3/') ? openapi.get(path.slice('/openapi/v3/'.length)) : undefined;
    if (doc !== undefined) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(doc.text), 'Cache-Control': 'public, immutable', Etag: `"${doc.hash}"` });
      res.end(doc.text);
      return;
    }
    const body = documentAt(path);
    if (body === undefined) throw pathNotFound(path);
    send(res, 200, body, negotiate(req.headers.accept, [], pretty));
  }

  function authorize(user: UserInfo, attrs: Omit<Attributes, 'user'>): void {
    const full: Attributes = { ...attrs, user };
    const decision = options.authorizer.authorize(full);
    if (decision.allowed) return;
    const why = describeDenial(full) + (decision.reason === '' ? '' : `: ${decision.reason}`);
    if (!attrs.resourceRequest) throw forbiddenPath(user.name, attrs.verb, attrs.path);
    throw forbidden({ group: attrs.apiGroup, resource: attrs.subresource === '' ? attrs.resource : `${attrs.resource}/${attrs.subresource}` }, attrs.name, why);
  }

  async function resource(req: IncomingMessage, res: ServerResponse, info: ResourceInfo, query: Query, user: UserInfo, pretty: boolean, upgrade: UpgradeContext | undefined): Promise<void> {
    const registry = options.registries.find((r) => r.def.group === info.apiGroup && r.def.version === info.apiVersion && r.def.plural === info.resource);
    if (registry === undefined) throw pathNotFound(info.path);
    const def = registry.def;
    const subresource = info.subresource;
    const connector = subresource === '' ? undefined : connectors.find((c) => c.group === def.group && c.resource === def.plural && c.subresource === subresource);
    const described = def.subresources?.find((s) => s.name === subresource);
    if (connector !== undefined && described !== undefined && info.name !== '') {
      if (!described.verbs.includes(info.verb)) throw methodNotAllowed(req.method ?? '', info.path);
      const namespace = def.namespaced ? info.namespace : '';
      return connector.serve({ req, res, upgrade, registry, verb: info.verb, namespace, name: info.name, subpath: info.subpath, query, user });
    }
    if (upgrade !== undefined) throw badRequest(`${info.path} does not accept a protocol upgrade`);
    const verb = info.verb as Verb;
    const updatable = subresource === '' || (subresource === 'status' && def.statusSubresource) || described?.merge !== undefined;
    if (!updatable) throw pathNotFound(info.path);
    if (subresource !== '' && !['get', 'update', 'patch'].includes(verb)) throw methodNotAllowed(req.method ?? '', info.path);
    if (!def.verbs.includes(verb)) throw methodNotAllowed(req.method ?? '', info.path);
    // Collections take POST, GET and DELETE; objects GET, PUT, PATCH and DELETE.
    const objectVerb = verb === 'update' || verb === 'patch';
    if ((objectVerb && info.name === '') || (verb === 'create' && info.name !== '')) throw methodNotAllowed(req.method ?? '', info.path);
    const isNamespaceItself = def.storage === 'namespaces';
    if (!def.namespaced && info.namespace !== '' && !isNamespaceItself) throw pathNotFound(info.path);
    const namespace = def.namespaced ? info.namespace : '';
    if (def.namespaced && namespace === '' && !['list', 'watch'].includes(verb)) throw methodNotAllowed(req.method ?? '', info.path);
    const output: Output = negotiate(req.headers.accept, outputsOf(def), pretty);
    const request = {
      req, res, registry, verb, namespace, name: info.name, subresource,
      query, user, output, maxRequestBytes: options.maxRequestBytes, now,
    };
    if (verb === 'watch') {
      const metrics = options.metrics;
      const onEvent = metrics === undefined ? {} : { onEvent: () => { metrics.watchEvent(def.group, def.version, def.kind); } };
      return serveWatch(request, { log: options.log, budget: options.watchBudget, ...onEvent });
    }
    return serveResource(request);
  }

  /** Records the request in the request metrics once it ends (for upgrades: when the connection closes). */
  function observe(req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, upgrade: UpgradeContext | undefined): void {
    if (options.metrics === undefined) return;
    const dryRun = url.searchParams.getAll('dryRun').includes('All');
    const what = instrumentation(info, req.method ?? 'GET', dryRun);
    const done = options.metrics.requestStarted(what.labels, what.longRunning, what.mutating);
    if (upgrade !== undefined) {
      upgrade.socket.once('close', () => {
        done(res.headersSent ? res.statusCode : 101);
      });
      return;
    }
    res.once('close', () => {
      done(res.statusCode);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, upgrade?: UpgradeContext): Promise<void> {
    // "//x" is a path here, not a URL of host x (request-target.ts); only a target that is not
    // in origin form has no URL, and that is a 400 once the request is authenticated.
    const url = parseRequestTarget(req.url ?? '/');
    const query = new Query(url?.searchParams ?? new URLSearchParams());
    let pretty = false;
    let release = (): void => undefined;
    try {
      pretty = query.bool('pretty');
      const auth = await options.authenticator.authenticate(req);
      if (auth.kind === 'invalid') throw unauthorized();
      const path = url?.pathname ?? '';
      if (auth.kind === 'anonymous' && !ANONYMOUS_PATHS.has(path)) throw unauthorized();
      if (url === undefined) throw badRequest(`invalid request target ${quoteValue(req.url ?? '')}`);
      const info = parseRequestInfo(req.method ?? 'GET', path, url.searchParams);
      observe(req, res, url, info, upgrade);
      release = await admit(req, res, url, info, auth.kind === 'user' ? auth.user : ANONYMOUS, upgrade);
      if (auth.kind === 'user') {
        if (info.kind === 'resource') {
          authorize(auth.user, { verb: info.verb, resourceRequest: true, path, apiGroup: info.apiGroup, resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name });
        } else {
          authorize(auth.user, { verb: info.verb, resourceRequest: false, path, apiGroup: '', resource: '', subresource: '', namespace: '', name: '' });
        }
      }
      if (info.kind === 'nonResource') {
        if (upgrade !== undefined) throw badRequest(`${path} does not accept a protocol upgrade`);
        await nonResource(req, res, path, query, pretty);
      } else {
        await resource(req, res, info, query, auth.user, pretty, upgrade);
      }
    } catch (err) {
      const status = sendError(res, err, errorOutput(req.headers.accept, pretty));
      if (status.httpCode >= 500) options.log(`${req.method ?? ''} ${truncateText(req.url ?? '')}: ${status.httpCode} ${truncateText(messageOf(err))}`);
    } finally {
      release();
    }
  }

  /** Waits for the request's turn (API Priority and Fairness); a request turned away is a 429 with Retry-After. */
  async function admit(req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, user: UserInfo, upgrade: UpgradeContext | undefined): Promise<() => void> {
    const gate = options.gate;
    if (gate === undefined) return () => undefined;
    const what = instrumentation(info, req.method ?? 'GET', url.searchParams.getAll('dryRun').includes('All'));
    const resourceInfo = info.kind === 'resource' ? info : undefined;
    const result = await gate.admit({
      user: user.name, groups: user.groups, verb: info.verb, resourceRequest: resourceInfo !== undefined,
      apiGroup: resourceInfo?.apiGroup ?? '', resource: resourceInfo?.resource ?? '', subresource: resourceInfo?.subresource ?? '',
      namespace: resourceInfo?.namespace ?? '', path: info.path, mutating: what.mutating, longRunning: what.longRunning || upgrade !== undefined,
    }, clientGone(res));
    for (const [name, value] of Object.entries(result.headers)) if (!res.headersSent) res.setHeader(name, value);
    if (!result.admitted) throw tooManyRequests(result.message, 1);
    return result.release;
  }

  const serve = (req: IncomingMessage, res: ServerResponse, upgrade?: UpgradeContext): void => {
    handle(req, res, upgrade).catch((err: unknown) => {
      // handle() answers every error itself; this is the last guard against a bug in it.
      options.log(`unexpected failure serving ${req.method ?? ''} ${req.url ?? ''}: ${messageOf(err)}`);
      if (!res.headersSent) sendError(res, err instanceof StatusError ? err : unavailable(messageOf(err)), { kind: 'json', pretty: false });
      else res.destroy();
    });
  };
  return {
    handle: (req, res) => {
      serve(req, res);
    },
    upgrade: (req, socket, head) => {
      let bound: ReturnType<typeof upgradeResponse>;
      try {
        bound = upgradeResponse(req, socket, head);
      } catch (err) {
        options.log(`cannot serve the upgrade request ${req.method ?? ''} ${req.url ?? ''}: ${messageOf(err)}`);
        socket.destroy();
        return;
      }
      serve(req, bound.res, bound.upgrade);
    },
  };
}
