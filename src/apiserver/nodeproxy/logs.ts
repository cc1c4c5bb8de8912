/**
 * pods/log: GET /api/v1/namespaces/{ns}/pods/{name}/log is proxied to the node agent's
 * /containerLogs/{ns}/{name}/{container} with upstream's PodLogOptions checked and passed on
 * (follow, previous, timestamps, sinceSeconds, sinceTime, tailLines, limitBytes); the agent's
 * answer is streamed to the client as it comes (follow) and the agent's request is dropped when
 * the client leaves. `insecureSkipTLSVerifyBackend=true` skips verifying the agent (logs only,
 * as upstream).
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Connector, ConnectRequest } from '../routing/index.js';
import { canonicalTime } from '../schema/index.js';
import { badRequest, invalid, type FieldError } from '../status/index.js';
import type { NodeProxyOptions } from './index.js';
import { agentRefused, agentRequestOptions, chooseContainer, locatePod, pipeResponse, unreachable } from './target.js';
import { quoteValue } from '../../api/quote.js';

/** The agent's query from the client's, after upstream's checks (422 PodLogOptions). */
function logQuery(r: ConnectRequest): URLSearchParams {
  const q = r.query;
  const out = new URLSearchParams();
  for (const flag of ['follow', 'previous', 'timestamps']) if (q.bool(flag)) out.set(flag, 'true');
  const errors: FieldError[] = [];
  const since = q.int('sinceSeconds');
  const sinceTime = q.string('sinceTime');
  const tail = q.int('tailLines');
  const limit = q.int('limitBytes');
  if (since !== undefined && since < 1) errors.push({ type: 'FieldValueInvalid', field: 'sinceSeconds', message: `Invalid value: ${since}: must be greater than 0` });
  if (limit !== undefined && limit < 1) errors.push({ type: 'FieldValueInvalid', field: 'limitBytes', message: `Invalid value: ${limit}: must be greater than 0` });
  if (since !== undefined && sinceTime !== undefined && sinceTime !== '') {
    errors.push({ type: 'FieldValueForbidden', field: '', message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified' });
  }
  if (errors.length > 0) throw invalid('PodLogOptions', '', '', errors);
  if (since !== undefined) out.set('sinceSeconds', String(since));
  if (sinceTime !== undefined && sinceTime !== '') {
    const canonical = canonicalTime(sinceTime, 0);
    if (canonical === undefined) throw badRequest(`invalid value for query parameter sinceTime: ${quoteValue(sinceTime)} is not an RFC 3339 time`);
    out.set('sinceTime', canonical);
  }
  if (tail !== undefined) out.set('tailLines', String(tail));
  if (limit !== undefined) out.set('limitBytes', String(limit));
  return out;
}

function readText(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (text.length < max) text += chunk;
    });
    res.on('end', () => {
      resolve(text);
    });
    res.on('error', () => {
      resolve(text);
    });
  });
}

export function logConnector(options: NodeProxyOptions): Connector {
  return {
    group: '',
    resource: 'pods',
    subresource: 'log',
    async serve(r) {
      if (r.upgrade !== undefined) throw badRequest('pods/log does not accept a protocol upgrade');
      const query = logQuery(r);
      const { pod, target } = await locatePod(r.registry, options.nodes(), r.namespace, r.name);
      const container = chooseContainer(pod, r.query.string('container'));
      const path = `/containerLogs/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}/${encodeURIComponent(container)}${query.toString() === '' ? '' : `?${query.toString()}`}`;
      const insecure = r.query.bool('insecureSkipTLSVerifyBackend');
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const out = httpsRequest({ ...agentRequestOptions(options.tls, target, insecure), path, method: 'GET', headers: { Accept: '*/*' } }, resolve);
        out.on('error', (err) => {
          reject(unreachable(target, path, err));
        });
        r.res.on('close', () => out.destroy());
        out.end();
      });
      const code = res.statusCode ?? 500;
      if (code < 200 || code > 299) throw agentRefused(code, await readText(res, 64 * 1024), target);
      // No Transfer-Encoding: HTTP/1.1 chunks a response without a length anyway, and HTTP/2 forbids the header.
      r.res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
      r.res.flushHeaders();
      await pipeResponse(res, r.res);
    },
  };
}
