/**
 * The /logs/ routes: the node's log directory, and the node log query on /logs/?query=...
 * when enabled (enableSystemLogQuery and the NodeLogQuery gate); without it, query
 * parameters are ignored and the directory is served, as upstream's plain file server does.
 */
import type { Route } from '../router.js';
import { serveLogPath } from './files.js';
import { parseNodeLogQuery, serveNodeLogQuery } from './query.js';

export interface SystemLogOptions {
  /** Default /var/log. */
  readonly logDir?: string;
  readonly query: boolean;
}

export function systemLogRoutes(o: SystemLogOptions): Route[] {
  const logDir = o.logDir ?? '/var/log';
  return [
    {
      pattern: '/logs', methods: ['GET'], bucket: 'logs',
      handle: ({ res }) => { res.writeHead(301, { location: '/logs/' }).end(); },
    },
    {
      pattern: '/logs/*path', methods: ['GET'], bucket: 'logs', longRunning: true,
      async handle({ req, res, url, params }) {
        const rel = params.path ?? '';
        const method = req.method ?? 'GET';
        const nlq = o.query ? parseNodeLogQuery(url.searchParams) : undefined;
        if (nlq !== undefined) await serveNodeLogQuery(res, logDir, rel, nlq, method);
        else await serveLogPath(res, logDir, rel, method);
      },
    },
  ];
}
