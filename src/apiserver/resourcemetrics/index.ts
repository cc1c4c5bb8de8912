/**
 * resourcemetrics: the resource metrics API, `metrics.orch.io/v1beta1` nodes and pods (and the
 * `metrics.k8s.io/v1beta1` view kubectl top looks for): CPU and memory of each node and pod,
 * computed as metrics-server does from each node agent's /metrics/resource, scraped through the
 * node proxy's TLS identity. The registry serves them from a read-only Store over the collector.
 *
 * Must not: store anything, write objects, or serve other resources.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import { agentRequestOptions, nodeTarget, type NodeAgentTls } from '../nodeproxy/index.js';
import type { ResourceRegistry, WireObject } from '../registry/index.js';
import { MetricsCollector } from './collector.js';
import { MetricsStore } from './store.js';

export { MetricsCollector, type CollectorOptions, type NodeUsage, type PodUsage, type Snapshot } from './collector.js';
export { METRICS_GROUP, nodeMetricsDefinition, podMetricsDefinition } from './definitions.js';
export { MetricsStore } from './store.js';
export { parseExposition, type Sample } from './parse.js';

export interface ResourceMetricsOptions {
  readonly nodes: () => ResourceRegistry;
  /** The nodes to scrape, from memory (an informer): every node is read each resolution interval. */
  readonly currentNodes: () => Promise<WireObject[]>;
  readonly pods: () => ResourceRegistry;
  readonly tls: NodeAgentTls;
  readonly log: (message: string) => void;
}

const SCRAPE_TIMEOUT_MS = 10_000;

/**
 * One keep-alive agent per TLS identity, with one secure context: every node is scraped each
 * resolution interval, and a new connection (and a new context, parsing the PEMs) per scrape
 * costs the server a TLS handshake per node per interval.
 */
const agents = new WeakMap<NodeAgentTls, Agent>();

function scrapeAgent(tls: NodeAgentTls): Agent {
  let agent = agents.get(tls);
  if (agent === undefined) {
    const secureContext = createSecureContext({
      ...(tls.cert === undefined ? {} : { cert: tls.cert }), ...(tls.key === undefined ? {} : { key: tls.key }), ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    });
    agent = new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, secureContext, timeout: 60_000 });
    agents.set(tls, agent);
  }
  return agent;
}

/** The text of a node agent's /metrics/resource. Rejects on a failure or a non-2xx answer. */
export function scrapeResourceMetrics(tls: NodeAgentTls, node: WireObject): Promise<string> {
  const target = nodeTarget(node);
  return new Promise((resolve, reject) => {
    const { cert: _cert, key: _key, ca: _ca, ...plain } = agentRequestOptions(tls, target);
    const req = httpsRequest({ ...plain, agent: scrapeAgent(tls), path: '/metrics/resource', method: 'GET', timeout: SCRAPE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 300) resolve(text);
        else reject(new Error(`the node agent of ${target.node} answered ${code}: ${text.trim().slice(0, 200)}`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${SCRAPE_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The store of the metrics kinds and its collector (start() it; close() it at shutdown). */
export function resourceMetrics(options: ResourceMetricsOptions): { store: MetricsStore; collector: MetricsCollector } {
  const collector = new MetricsCollector({
    nodes: options.currentNodes,
    scrape: (node) => scrapeResourceMetrics(options.tls, node),
    log: options.log,
  });
  return { store: new MetricsStore({ collector, nodes: options.nodes, pods: options.pods }), collector };
}
