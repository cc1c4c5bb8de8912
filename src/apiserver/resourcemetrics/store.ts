/**
 * A read-only Store over the collector, so that the generic registry serves the metrics kinds
 * (get, list with selectors and paging, tables, protobuf) like stored ones: NodeMetrics at
 * `/nodemetrics/<node>`, PodMetrics at `/podmetrics/<namespace>/<pod>`, built on each read with
 * the labels of their node or pod. Writes and watches are refused (the definitions serve get and
 * list only).
 */
import { OrchError } from '../../api/errors.js';
import { formatDuration, MILLISECOND } from '../../api/duration.js';
import { labelsOf, metaOf, str, type ResourceRegistry, type WireObject } from '../registry/index.js';
import { StoreErrorCode, type ListOptions, type ListResult, type Store, type StoredObject, type Watch } from '../storage/index.js';
import type { MetricsCollector, Usage } from './collector.js';

export const NODE_METRICS_STORAGE = 'nodemetrics';
export const POD_METRICS_STORAGE = 'podmetrics';

export interface MetricsStoreOptions {
  readonly collector: MetricsCollector;
  readonly nodes: () => ResourceRegistry;
  readonly pods: () => ResourceRegistry;
  readonly now?: () => Date;
}

const time = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const usage = (u: Usage): Record<string, string> => ({ cpu: `${Math.round(u.cpuNanoCores)}n`, memory: `${Math.round(u.memoryBytes / 1024)}Ki` });
/** A window as Go prints durations, to the millisecond. */
const window = (ms: number): string => formatDuration(Math.round(ms) * MILLISECOND);

function readOnly(what: string): OrchError {
  return new OrchError('APISERVER_METRICS_READ_ONLY', 'invalid', `the resource metrics are read-only: ${what} is not served`, { subject: what });
}

export class MetricsStore implements Store {
  private readonly now: () => Date;

  constructor(private readonly options: MetricsStoreOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Every metrics object, keyed, in key order. */
  private async objects(): Promise<Map<string, StoredObject>> {
    const snapshot = await this.options.collector.snapshot();
    const labelsOfAll = async (registry: ResourceRegistry): Promise<Map<string, Record<string, string>>> => {
      const all = await registry.store.list(registry.prefix(''));
      return new Map(all.items.map((o: WireObject) => [`${str(metaOf(o).namespace)}/${str(metaOf(o).name)}`, labelsOf(o)]));
    };
    const [nodeLabels, podLabels] = await Promise.all([labelsOfAll(this.options.nodes()), labelsOfAll(this.options.pods())]);
    const created = `${this.now().toISOString().slice(0, 19)}Z`;
    const out = new Map<string, StoredObject>();
    for (const n of snapshot.nodes) {
      const labels = nodeLabels.get(`/${n.node}`);
      if (labels === undefined) continue;
      out.set(`/${NODE_METRICS_STORAGE}/${n.node}`, {
        metadata: { name: n.node, creationTimestamp: created, ...(Object.keys(labels).length === 0 ? {} : { labels }) },
        timestamp: time(n.timestampMs), window: window(n.windowMs), usage: usage(n),
      });
    }
    for (const p of snapshot.pods) {
      const labels = podLabels.get(`${p.namespace}/${p.name}`);
      if (labels === undefined) continue;
      out.set(`/${POD_METRICS_STORAGE}/${p.namespace}/${p.name}`, {
        metadata: { name: p.name, namespace: p.namespace, creationTimestamp: created, ...(Object.keys(labels).length === 0 ? {} : { labels }) },
        timestamp: time(p.timestampMs), window: window(p.windowMs),
        containers: [...p.containers].sort((a, b) => a.name.localeCompare(b.name)).map((c) => ({ name: c.name, usage: usage(c) })),
      });
    }
    return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  async get(key: string): Promise<StoredObject> {
    const found = (await this.objects()).get(key);
    if (found === undefined) throw new OrchError(StoreErrorCode.notFound, 'not-found', `no metrics at ${key}`, { subject: key });
    return found;
  }

  async list(prefix: string, _options?: ListOptions): Promise<ListResult> {
    const items = [...(await this.objects())].filter(([k]) => k.startsWith(prefix)).map(([, o]) => o);
    return { items, resourceVersion: '1' };
  }

  create(): Promise<StoredObject> {
    return Promise.reject(readOnly('create'));
  }

  update(): Promise<StoredObject> {
    return Promise.reject(readOnly('update'));
  }

  delete(): Promise<StoredObject> {
    return Promise.reject(readOnly('delete'));
  }

  watch(): Promise<Watch> {
    return Promise.reject(readOnly('watch'));
  }
}
