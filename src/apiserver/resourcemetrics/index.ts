/**
 * resourcemetrics: the resource metrics API, `metrics.orch.io/v1beta1` nodes and pods (and the
 * `metrics.k8s.io/v1beta1` view kubectl top looks for): CPU and memory of each node and pod,
 * computed as metrics-server does from each node agent's /metrics/resource, scraped through the
 * node proxy's TLS identity. The registry serves them from a read-only Store over the collector.
 *
 * Must not: store anything, write objects, or serve other resources.
 */
import { request as httpsRequest } from 'node:https';
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
  readonly pods: () => ResourceRegistry;
  readonly tls: NodeAgentTls;
  readonly log: (message: string) => void;
}

const SCRAPE_TIMEOUT_MS = 10_000;

/** The text of a node agent's /metrics/resource. Rejects on a failure or a non-2xx answer. */
export function scrapeResourceMetrics(tls: NodeAgentTls, node: WireObject): Promise<string> {
  const target = nodeTarget(node);
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ ...agentRequestOptions(tls, target), path: '/metrics/resource', method: 'GET', timeout: SCRAPE_TIMEOUT_MS }, (res) => {
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
    nodes: async () => {
      const nodes = options.nodes();
      return (await nodes.store.list(nodes.prefix(''))).items;
    },
    scrape: (node) => scrapeResourceMetrics(options.tls, node),
    log: options.log,
  });
  return { store: new MetricsStore({ collector, nodes: options.nodes, pods: options.pods }), collector };
}
