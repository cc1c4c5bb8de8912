/**
 * The labels of a request for the request metrics, as upstream's apiserver reports them: the
 * verb as the REST action (LIST, not GET, for collections; WATCH; CONNECT for the streams and
 * the node proxy; DELETECOLLECTION), the scope (resource for named objects and creates,
 * namespace, cluster), whether it is long-running (watches and connect streams, pods/log) and
 * whether it writes.
 */
import type { RequestLabels } from '../metrics/index.js';
import type { RequestInfo } from './request-info.js';

const REPORTED: Readonly<Record<string, string>> = {
  get: 'GET', list: 'LIST', watch: 'WATCH', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETECOLLECTION',
};

/** Subresources served as streams (upstream's long-running connect requests). */
const STREAMS = new Set(['exec', 'attach', 'portforward', 'proxy']);
const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface Instrumented {
  readonly labels: RequestLabels;
  readonly longRunning: boolean;
  readonly mutating: boolean;
}

export function instrumentation(info: RequestInfo, method: string, dryRun: boolean): Instrumented {
  if (info.kind === 'nonResource') {
    return { labels: { verb: method.toUpperCase(), dryRun: false, group: '', version: '', resource: '', subresource: '', scope: '' }, longRunning: false, mutating: false };
  }
  const stream = STREAMS.has(info.subresource);
  const verb = stream ? 'CONNECT' : REPORTED[info.verb] ?? method.toUpperCase();
  const scope = info.name !== '' || info.verb === 'create' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster';
  return {
    labels: { verb, dryRun, group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource, scope },
    longRunning: stream || info.verb === 'watch' || info.subresource === 'log',
    mutating: !stream && MUTATING.has(info.verb),
  };
}
