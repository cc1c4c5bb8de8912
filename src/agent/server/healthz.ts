/**
 * The health checks of the agent and the health listener (healthzBindAddress:healthzPort),
 * answering as upstream's healthz does: `/healthz` runs every check ("ok", or 500 listing
 * each check with [+]/[-]; `?verbose` lists them on success too), `/healthz/<name>` runs one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';

export interface HealthCheck {
  readonly name: string;
  /** undefined when healthy, else the reason. Must be cheap and never throw. */
  check(): string | undefined;
}

/** Handles /healthz and /healthz/<check>; returns false for other paths. */
export function serveHealthz(checks: readonly HealthCheck[], req: IncomingMessage, res: ServerResponse): boolean {
  const url = new URL(req.url ?? '/', 'http://localhost');
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

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on address:port (port 0 picks a free one) serving only the health checks. */
export async function startHealthServer(options: { address: string; port: number; checks: readonly HealthCheck[] }): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    if (!serveHealthz(options.checks, req, res)) res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
  });
  server.listen(options.port, options.address);
  await once(server, 'listening');
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : options.port,
    close: () => new Promise((resolve) => { server.close(() => { resolve(); }); server.closeAllConnections(); }),
  };
}
