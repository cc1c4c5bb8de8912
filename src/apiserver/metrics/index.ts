/**
 * metrics: orch-apiserver's own /metrics, in the Prometheus text format (prom-client), under
 * upstream's kube-apiserver metric names: apiserver_request_total and
 * apiserver_request_duration_seconds (by verb, dry_run, group, version, resource, subresource,
 * scope, component; the total also by code), apiserver_current_inflight_requests,
 * apiserver_longrunning_requests (watches and connect streams open), apiserver_watch_events_total,
 * apiserver_terminated_watchers_total (watchers ended for not keeping up, by resource),
 * etcd_request_duration_seconds (the storage's latency by operation and type, whichever the
 * backend), orch_build_info (upstream's kubernetes_build_info: the product's name is ours), and
 * the process and Node.js runtime metrics.
 *
 * Must not: route requests or read the store itself (the router and the store wrapper report).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { instrumentStore } from './store.js';

/** What a request is, as the request metrics label it. */
export interface RequestLabels {
  /** Upstream's reported verb: GET, LIST, WATCH, POST, PUT, PATCH, DELETE, CONNECT. */
  readonly verb: string;
  readonly dryRun: boolean;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  /** resource, namespace, cluster, or '' for non-resource requests. */
  readonly scope: string;
}

export interface ApiServerMetrics {
  readonly registry: Registry;
  /** Marks a request started; call the result with its status code when it ended. */
  requestStarted(labels: RequestLabels, longRunning: boolean, mutating: boolean): (code: number) => void;
  /** One event sent on a watch of `kind`. */
  watchEvent(group: string, version: string, kind: string): void;
  /** A watcher of `resource` ended because it could not keep up. */
  watcherTerminated(resource: string): void;
  /** One storage call of `operation` on the resource `type`, and how long it took. */
  storageCall(operation: string, type: string, seconds: number): void;
  /** One change of `resource` applied by its watch cache. */
  watchCacheEvent(resource: string): void;
}

export interface MetricsOptions {
  readonly version: { readonly gitVersion: string; readonly gitCommit: string; readonly major: string; readonly minor: string; readonly goVersion: string; readonly platform: string };
  /** Seconds since an arbitrary origin (default process.hrtime). */
  readonly clock?: () => number;
}

/** kube-apiserver's request latency buckets. */
const REQUEST_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** The storage latency buckets of upstream's etcd_request_duration_seconds. */
const STORAGE_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

const REQUEST_LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

export function createApiServerMetrics(options: MetricsOptions): ApiServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 });
  const registers = [registry];
  const clock = options.clock ?? ((): number => Number(process.hrtime.bigint()) / 1e9);
  const v = options.version;
  new Gauge({
    name: 'orch_build_info', help: 'A metric with a constant \'1\' value labeled by major, minor, git version, git commit, build date, Go version, compiler, and platform from which orch-apiserver was built.',
    labelNames: ['major', 'minor', 'git_version', 'git_commit', 'go_version', 'platform'], registers,
  }).set({ major: v.major, minor: v.minor, git_version: v.gitVersion, git_commit: v.gitCommit, go_version: v.goVersion, platform: v.platform }, 1);
  const total = new Counter({
    name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [...REQUEST_LABELS, 'code'], registers,
  });
  const duration = new Histogram({
    name: 'apiserver_request_duration_seconds', help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: REQUEST_LABELS, buckets: REQUEST_BUCKETS, registers,
  });
  const inflight = new Gauge({
    name: 'apiserver_current_inflight_requests', help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'], registers,
  });
  inflight.set({ request_kind: 'readOnly' }, 0);
  inflight.set({ request_kind: 'mutating' }, 0);
  const longRunning = new Gauge({
    name: 'apiserver_longrunning_requests', help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
    labelNames: REQUEST_LABELS.filter((l) => l !== 'dry_run'), registers,
  });
  const watchEvents = new Counter({
    name: 'apiserver_watch_events_total', help: 'Number of events sent in watch clients', labelNames: ['group', 'version', 'kind'], registers,
  });
  const terminated = new Counter({
    name: 'apiserver_terminated_watchers_total', help: 'Counter of watchers closed due to unresponsiveness broken by resource type.', labelNames: ['resource'], registers,
  });
  const storage = new Histogram({
    name: 'etcd_request_duration_seconds', help: 'Storage request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'type'], buckets: STORAGE_BUCKETS, registers,
  });
  const cacheEvents = new Counter({
    name: 'apiserver_watch_cache_events_received_total', help: 'Counter of events received in watch cache broken by resource type.', labelNames: ['resource'], registers,
  });
  return {
    registry,
    requestStarted(labels, isLongRunning, mutating) {
      const started = clock();
      const values = {
        verb: labels.verb, dry_run: labels.dryRun ? 'All' : '', group: labels.group, version: labels.version,
        resource: labels.resource, subresource: labels.subresource, scope: labels.scope, component: 'apiserver',
      };
      const { dry_run: _dryRun, ...longLabels } = values;
      const kind = mutating ? 'mutating' : 'readOnly';
      if (isLongRunning) longRunning.inc(longLabels);
      else inflight.inc({ request_kind: kind });
      let done = false;
      return (code) => {
        if (done) return;
        done = true;
        total.inc({ ...values, code: String(code) });
        if (isLongRunning) {
          longRunning.dec(longLabels);
        } else {
          inflight.dec({ request_kind: kind });
          duration.observe(values, clock() - started);
        }
      };
    },
    watchEvent(group, version, kind) {
      watchEvents.inc({ group, version, kind });
    },
    watcherTerminated(resource) {
      terminated.inc({ resource });
    },
    storageCall(operation, type, seconds) {
      storage.observe({ operation, type }, seconds);
    },
    watchCacheEvent(resource) {
      cacheEvents.inc({ resource });
    },
  };
}
