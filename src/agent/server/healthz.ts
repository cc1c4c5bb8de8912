/**
 * The health checks of the agent, answered as upstream's healthz does on every server:
 * `/healthz` runs every check ("ok", or 500 listing each check with [+]/[-]; `?verbose` lists
 * them on success too), `/healthz/<name>` runs one. (The health listener itself is
 * startHealthListener in servers.ts.)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRequestTarget } from '../../api/request-target.js';
import type { HealthCheck } from '../health/index.js';

export type { HealthCheck } from '../health/index.js';

/** Handles /healthz and /healthz/<check>; returns false for other paths. */
export function serveHealthz(checks: readonly HealthCheck[], req: IncomingMessage, res: ServerResponse): boolean {
  const url = parseRequestTarget(req.url ?? '/');
  if (url === undefined) return false;
  if (url.pathname !== '/healthz' && !url.pathname.startsWith('/healthz/')) return false;
  const name = url.pathname === '/healthz' ? undefined : url.pathname.slice('/healthz/'.length);
  const selected = name === undefined ? checks : checks.filter((c) => c.name === name);
  if (selected.length === 0) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
    return true;
  }
  const results = selected.map((c) => ({ name: c.name, failure: c.check() }));
  const failed = results.some((r) => r.failure !== undefined);
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.setHeader('x-content-type-options', 'nosniff');
  if (!failed && !url.searchParams.has('verbose')) {
    res.writeHead(200).end('ok');
    return true;
  }
  const lines = results.map((r) => (r.failure === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.failure}`));
  res.writeHead(failed ? 500 : 200).end(`${lines.join('\n')}\n${failed ? 'healthz check failed' : 'healthz check passed'}\n`);
  return true;
}
