/**
 * nodes/proxy: `/api/v1/nodes/{node}/proxy/{path}` is relayed to the node agent's secure port
 * (`https://<address>:<port>/{path}` with the query) with the server's client certificate, as
 * upstream's API server does for the kubelet: /stats/summary, /metrics, /metrics/resource,
 * /metrics/cadvisor, /pods, /configz, /logs/... The method, the body and the content headers go
 * to the agent; its status, content headers and body come back as they are, streamed. The
 * request was authorized as `nodes/proxy` with the verb of its method; the agent authorizes the
 * server's certificate itself.
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Connector } from '../routing/index.js';
import { badRequest } from '../status/index.js';
import type { NodeProxyOptions } from './index.js';
import { agentRequestOptions, nodeTarget, pipeResponse, unreachable } from './target.js';

/** The request headers the agent gets (no credentials of the client: the server's certificate speaks). */
const FORWARDED_REQUEST = ['accept', 'content-type', 'content-length', 'content-encoding', 'accept-encoding', 'range', 'if-none-match', 'if-modified-since'];
/** The response headers the client gets. */
const FORWARDED_RESPONSE = ['content-type', 'content-length', 'content-encoding', 'content-range', 'etag', 'last-modified', 'cache-control', 'location'];

function pick(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

export function nodeProxyConnector(options: NodeProxyOptions): Connector {
  return {
    group: '',
    resource: 'nodes',
    subresource: 'proxy',
    async serve(r) {
      if (r.upgrade !== undefined) throw badRequest('nodes/proxy does not accept a protocol upgrade');
      const target = nodeTarget(await r.registry.get('', r.name));
      const url = new URL(r.req.url ?? '/', 'https://orch-apiserver.invalid');
      const path = `${r.subpath === '' ? '/' : r.subpath}${url.search}`;
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const out = httpsRequest({ ...agentRequestOptions(options.tls, target), path, method: r.req.method ?? 'GET', headers: pick(r.req.headers, FORWARDED_REQUEST) }, resolve);
        out.on('error', (err) => {
          reject(unreachable(target, path, err));
        });
        r.res.on('close', () => out.destroy());
        r.req.pipe(out);
      });
      r.res.writeHead(res.statusCode ?? 502, pick(res.headers, FORWARDED_RESPONSE));
      await pipeResponse(res, r.res);
    },
  };
}
