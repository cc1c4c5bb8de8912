/**
 * HTTP GET for probes and lifecycle hooks (upstream: probe/http and NewRequestForHTTPGetAction):
 * scheme HTTP or HTTPS (certificates are not verified), host defaulting to the pod IP, port by
 * number or by the container port's name, path (with its query), headers; a `Host` header sets
 * the request's host; `User-Agent` defaults to `orch-probe/<version>` (hooks:
 * `orch-lifecycle/<version>`) and `Accept` to `*`/`*` (an empty Accept removes it). No
 * keep-alive: every request has its own connection (http-client.ts). Redirects to the same host are followed
 * (at most 10); one to another host ends the probe with a warning, as upstream.
 *
 *   | response                 | result  | output                                          |
 *   |--------------------------|---------|-------------------------------------------------|
 *   | 200-299                  | success | the body (at most 10 KiB)                       |
 *   | 300-399 not followed     | warning | Probe terminated redirects, Response body: ...  |
 *   | 400 and above            | failure | HTTP probe failed with statuscode: <code>       |
 *   | no response in time      | failure | Get "<url>": <error>                            |
 */
import type { Container, HTTPGetAction } from 'kubernetes-types/core/v1.js';
import { HttpTimeoutError, rawGet } from './http-client.js';
import type { ProbeOutcome } from './types.js';
import { quoteValue } from '../../api/quote.js';

export const MAX_RESPONSE_BODY_BYTES = 10 * 1024;
const MAX_REDIRECTS = 10;
/** The version part of the User-Agent (upstream: the agent's major.minor). */
export const PROBE_AGENT_VERSION = '1.28';

/** The port of a probe or hook: a number, or the name of one of the container's ports. Throws on neither. */
export function resolveContainerPort(port: number | string | undefined, container: Container): number {
  if (typeof port === 'number') {
    if (!Number.isInteger(port) || port <= 0 || port >= 65536) throw new Error(`invalid port number: ${port}`);
    return port;
  }
  if (typeof port === 'string' && /^\d+$/.test(port)) return resolveContainerPort(Number(port), container);
  const named = (container.ports ?? []).find((p) => p.name === port);
  if (named === undefined) throw new Error(`couldn't find port: ${String(port)} in ${quoteValue(container.ports ?? [])}`);
  return named.containerPort;
}

export interface HttpTarget {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The URL and headers of an HTTPGetAction (upstream: NewRequestForHTTPGetAction). Throws when the port cannot be resolved. */
export function httpTarget(action: HTTPGetAction, container: Container, podIP: string, userAgent: string): HttpTarget {
  const scheme = (action.scheme ?? 'HTTP').toLowerCase() === 'https' ? 'https' : 'http';
  const host = action.host !== undefined && action.host !== '' ? action.host : podIP;
  const port = resolveContainerPort(action.port, container);
  const path = action.path ?? '';
  const url = new URL(`${scheme}://${hostPort(host, port)}${path.startsWith('/') || path === '' ? path : `/${path}`}`);
  const headers: Record<string, string> = {};
  for (const h of action.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value;
  headers['user-agent'] ??= userAgent;
  if (headers.accept === undefined) headers.accept = '*/*';
  else if (headers.accept === '') delete headers.accept;
  return { url, headers };
}

/** The final response of a GET within `timeoutMs` (and `signal`), after same-host redirects. Rejects with `Get "<url>": <reason>`. */
export async function httpRequest(target: HttpTarget, timeoutMs: number, signal?: AbortSignal): Promise<{ readonly status: number; readonly body: string }> {
  const deadline = Date.now() + timeoutMs;
  let url = target.url;
  try {
    for (let redirects = 0; ; redirects++) {
      const res = await rawGet(url, target.headers, MAX_RESPONSE_BODY_BYTES, deadline - Date.now(), signal);
      if (res.status >= 300 && res.status < 400 && res.location !== undefined && redirects < MAX_REDIRECTS) {
        const next = new URL(res.location, url);
        if (next.host === url.host && (next.protocol === 'http:' || next.protocol === 'https:')) {
          url = next;
          continue;
        }
      }
      return res;
    }
  } catch (err) {
    const reason = err instanceof HttpTimeoutError ? `context deadline exceeded (Client.Timeout exceeded after ${timeoutMs}ms)` : err instanceof Error ? err.message : String(err);
    throw new Error(`Get ${quoteValue(url.toString())}: ${reason}`, { cause: err });
  }
}

/** The HTTP probe: a GET within `timeoutMs`, judged by its status code; never rejects. */
export async function httpGet(target: HttpTarget, timeoutMs: number): Promise<ProbeOutcome> {
  let res;
  try {
    res = await httpRequest(target, timeoutMs);
  } catch (err) {
    return { result: 'failure', output: err instanceof Error ? err.message : String(err) };
  }
  if (res.status >= 200 && res.status < 300) return { result: 'success', output: res.body };
  if (res.status >= 300 && res.status < 400) return { result: 'warning', output: `Probe terminated redirects, Response body: ${res.body}` };
  return { result: 'failure', output: `HTTP probe failed with statuscode: ${res.status}` };
}
