/**
 * The HTTP side of the console: `/console` redirects to `/console/`, `/console/` is the page and
 * `/console/<file>` its assets; GET and HEAD only, answered before authentication (the assets
 * are public and hold no data). Everything else is handed to `next` untouched.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleAssets } from './assets.js';

export const CONSOLE_PATH = '/console/';

/**
 * Scripts, styles, images and API reads from this origin only; no inline script or style (the
 * page sets styles through the CSSOM only), no plugins, no <base>, no form posts, no framing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ConsoleHandlerOptions {
  readonly assets: ConsoleAssets;
  /** Every request outside /console. */
  readonly next: Handler;
}

function plain(res: ServerResponse, code: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(code, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

/** Whether the request's Accept-Encoding allows gzip (q above 0). */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The request handler with the console in front of `next`. Never throws. */
export function withConsole(options: ConsoleHandlerOptions): Handler {
  return (req, res) => {
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const path = query < 0 ? target : target.slice(0, query);
    if (path !== '/console' && !path.startsWith(CONSOLE_PATH)) {
      options.next(req, res);
      return;
    }
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      plain(res, 405, `${method} is not allowed on ${path}: the console is read-only (GET, HEAD)\n`, { Allow: 'GET, HEAD' });
      return;
    }
    if (path === '/console') {
      res.writeHead(301, { ...SECURITY_HEADERS, Location: CONSOLE_PATH, 'Content-Length': 0 });
      res.end();
      return;
    }
    const name = path === CONSOLE_PATH ? 'index.html' : path.slice(CONSOLE_PATH.length);
    const asset = options.assets.get(name);
    if (asset === undefined) {
      plain(res, 404, `${path} is not part of the console\n`);
      return;
    }
    const headers: Record<string, string | number> = {
      ...SECURITY_HEADERS, 'Content-Type': asset.contentType, 'Cache-Control': 'no-cache', ETag: asset.etag, Vary: 'Accept-Encoding',
    };
    const tags = req.headers['if-none-match'];
    if (tags !== undefined && tags.split(',').some((t) => t.trim() === asset.etag || t.trim() === '*')) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gzip = asset.gzip !== undefined && acceptsGzip(req.headers['accept-encoding']) ? asset.gzip : undefined;
    const body = gzip ?? asset.body;
    res.writeHead(200, { ...headers, 'Content-Length': body.length, ...(gzip === undefined ? {} : { 'Content-Encoding': 'gzip' }) });
    res.end(method === 'HEAD' ? undefined : body);
  };
}
