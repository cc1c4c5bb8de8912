/**
 * Where a pod's node agent listens: the pod's node (spec.nodeName), its address (InternalIP
 * first) and port (status.daemonEndpoints.nodeagentEndpoint.Port, default 10250); which
 * container a request means; and the TLS options toward the agents (client certificate of
 * --nodeagent-client-certificate/--nodeagent-client-key, verification with
 * --nodeagent-certificate-authority, none without it, as upstream without
 * --kubelet-certificate-authority).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestOptions } from 'node:https';
import { messageOf } from '../../api/errors.js';
import { metaOf, str, type ResourceRegistry, type WireObject } from '../registry/index.js';
import { badRequest, internal, StatusError } from '../status/index.js';

export const DEFAULT_NODEAGENT_PORT = 10250;
const ADDRESS_PREFERENCE = ['InternalIP', 'InternalDNS', 'Hostname', 'ExternalIP', 'ExternalDNS'];

export interface NodeAgentTls {
  /** PEM client certificate and key the server presents to the agents. */
  readonly cert?: string;
  readonly key?: string;
  /** PEM CAs that verify the agents' serving certificates; absent: not verified. */
  readonly ca?: string;
}

export interface NodeTarget {
  readonly node: string;
  readonly host: string;
  readonly port: number;
}

export interface Located {
  readonly pod: WireObject;
  readonly target: NodeTarget;
}

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const recs = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(rec) : []);

/** The pod and its agent's address. Throws 404 (pod, node), 400 (not bound), 500 (no address). */
export async function locatePod(pods: ResourceRegistry, nodes: ResourceRegistry, namespace: string, name: string): Promise<Located> {
  const pod = await pods.get(namespace, name);
  const nodeName = str(rec(pod.spec).nodeName);
  if (nodeName === '') throw badRequest(`pod ${name} does not have a host assigned`);
  return { pod, target: nodeTarget(await nodes.get('', nodeName)) };
}

/** Where the agent of `node` listens. Throws 500 when the node has no address. */
export function nodeTarget(node: WireObject): NodeTarget {
  const nodeName = str(metaOf(node).name);
  const addresses = recs(rec(node.status).addresses);
  let host = '';
  for (const type of ADDRESS_PREFERENCE) {
    host = str(addresses.find((a) => a.type === type && str(a.address) !== '')?.address);
    if (host !== '') break;
  }
  if (host === '') throw internal(`node ${nodeName} has no address the node agent can be reached at (status.addresses is empty)`);
  const port = rec(rec(rec(node.status).daemonEndpoints).nodeagentEndpoint).Port;
  return { node: nodeName, host, port: typeof port === 'number' && port > 0 ? port : DEFAULT_NODEAGENT_PORT };
}

const names = (list: unknown): string[] => recs(list).map((c) => str(c.name));
const goList = (items: readonly string[]): string => `[${items.join(' ')}]`;

/** The container a request names, or the pod's only one. Throws 400 naming the choices. */
export function chooseContainer(pod: WireObject, requested: string | undefined): string {
  const spec = rec(pod.spec);
  const podName = str(metaOf(pod).name);
  const containers = names(spec.containers);
  const inits = names(spec.initContainers);
  const ephemeral = names(spec.ephemeralContainers);
  if (requested !== undefined && requested !== '') {
    if ([...containers, ...inits, ...ephemeral].includes(requested)) return requested;
    throw badRequest(`container ${requested} is not valid for pod ${podName}`);
  }
  if (containers.length === 1 && containers[0] !== undefined) return containers[0];
  let message = `a container name must be specified for pod ${podName}, choose one of: ${goList(containers)}`;
  if (inits.length > 0) message += ` or one of the init containers: ${goList(inits)}`;
  if (ephemeral.length > 0) message += ` or one of the ephemeral containers: ${goList(ephemeral)}`;
  throw badRequest(message);
}

/** https.request options for the agent of `target` (`insecure`: skip verifying it, pods/log only). */
export function agentRequestOptions(tls: NodeAgentTls, target: NodeTarget, insecure = false): RequestOptions {
  return {
    host: target.host,
    port: target.port,
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    rejectUnauthorized: tls.ca !== undefined && !insecure,
    agent: false,
  };
}

export function agentUrl(target: NodeTarget, path: string): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `https://${host}:${target.port}${path}`;
}

/** The Status for an agent that could not be reached (500, as upstream). */
export function unreachable(target: NodeTarget, path: string, err: unknown): StatusError {
  return internal(`error trying to reach the node agent of node ${target.node} (${agentUrl(target, path)}): ${messageOf(err)}`);
}

const REASONS: Readonly<Record<number, StatusError['reason']>> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict',
  429: 'TooManyRequests', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/** The agent's refusal as a Status with its code and its body as the message. */
export function agentRefused(code: number, body: string, target: NodeTarget): StatusError {
  const text = body.trim().slice(0, 4096);
  const message = text === '' ? `the node agent of node ${target.node} answered ${code}` : text;
  return new StatusError(code >= 400 && code <= 599 ? code : 502, REASONS[code] ?? 'InternalError', message);
}

/**
 * Streams the agent's response body to the client until either side ends; an error on the
 * agent's side ends the client's response, a client that goes away ends the agent's.
 */
export function pipeResponse(from: IncomingMessage, to: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    from.pipe(to);
    from.on('end', resolve);
    from.on('error', () => {
      to.destroy();
      resolve();
    });
    to.on('close', () => {
      from.destroy();
      resolve();
    });
  });
}
