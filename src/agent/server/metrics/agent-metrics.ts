/**
 * The agent's own metrics (/metrics) in a prom-client registry: the process and Node.js
 * runtime metrics, and nodeagent_* metrics named after upstream's kubelet_* ones:
 * nodeagent_node_name{node}, nodeagent_running_pods, nodeagent_running_containers
 * {container_state}, nodeagent_pod_start_duration_seconds, and the servers' request metrics
 * (nodeagent_http_requests_total, nodeagent_http_requests_duration_seconds,
 * nodeagent_http_inflight_requests). A second, empty registry is for the prober's metrics
 * (/metrics/probes): the prober registers its metrics there.
 */
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from '../../../api/clock.js';
import { CONFIG_SEEN_ANNOTATION } from '../../../api/pod/index.js';
import { POD_UID_LABEL } from '../../kuberuntime/index.js';
import type { PodsView, ServerCri } from '../host.js';
import type { RequestObserver } from '../pipeline.js';

export interface RuntimeCounts {
  readonly pods: number;
  readonly containers: Readonly<Record<string, number>>;
}

export interface AgentMetricsOptions {
  readonly nodeName: string;
  /** Pods with a ready sandbox and containers by state, read when /metrics is scraped. */
  runtimeCounts(): Promise<RuntimeCounts>;
  /** The prober's registry, served on /metrics/probes (default: an empty one). */
  readonly probeRegistry?: Registry;
}

export interface AgentMetrics {
  /** /metrics */
  readonly registry: Registry;
  /** /metrics/probes: the prober registers its metrics here. */
  readonly probeRegistry: Registry;
  /** Records one pod start: seconds from the agent first seeing the pod to the pod running. */
  observePodStartDuration(seconds: number): void;
  /** Request metrics of the servers. */
  readonly requests: RequestObserver;
}

/** Resolution of the event-loop delay histogram (prom-client's default metrics). */
const EVENT_LOOP_SAMPLE_MS = 1000;

const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

export function createAgentMetrics(o: AgentMetricsOptions): AgentMetrics {
  const registry = new Registry();
  // prom-client samples the event-loop delay every 10 ms by default: 100 wake-ups a second of an
  // otherwise idle agent (about a third of its idle CPU). One sample a second still shows a
  // blocked loop in nodejs_eventloop_lag_*.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const registers = [registry];
  new Gauge({ name: 'nodeagent_node_name', help: "The node's name. The count is always 1.", labelNames: ['node'], registers }).set({ node: o.nodeName }, 1);
  let counts: Promise<RuntimeCounts> | undefined;
  const latest = (): Promise<RuntimeCounts> => {
    // One runtime read serves both gauges of a scrape.
    counts ??= o.runtimeCounts().finally(() => { setImmediate(() => { counts = undefined; }); });
    return counts;
  };
  new Gauge({
    name: 'nodeagent_running_pods', help: 'Number of pods that have a running pod sandbox', registers,
    async collect() { this.set((await latest()).pods); },
  });
  new Gauge({
    name: 'nodeagent_running_containers', help: 'Number of containers currently running', labelNames: ['container_state'], registers,
    async collect() {
      this.reset();
      for (const [state, n] of Object.entries((await latest()).containers)) this.set({ container_state: state }, n);
    },
  });
  const podStart = new Histogram({
    name: 'nodeagent_pod_start_duration_seconds',
    help: 'Duration in seconds from the agent seeing a pod for the first time to the pod starting to run',
    buckets: POD_START_BUCKETS, registers,
  });
  const labelNames = ['method', 'path', 'server_type', 'long_running'] as const;
  const total = new Counter({ name: 'nodeagent_http_requests_total', help: 'Number of the http requests received since the server started', labelNames, registers });
  const duration = new Histogram({ name: 'nodeagent_http_requests_duration_seconds', help: 'Duration in seconds to serve http requests', labelNames, registers });
  const inflight = new Gauge({ name: 'nodeagent_http_inflight_requests', help: 'Number of the inflight http requests', labelNames: ['server_type'], registers });
  return {
    registry,
    probeRegistry: o.probeRegistry ?? new Registry(),
    observePodStartDuration: (seconds) => { podStart.observe(seconds); },
    requests: {
      observe(r) {
        const labels = { method: r.method, path: r.bucket, server_type: r.serverType, long_running: String(r.longRunning) };
        total.inc(labels);
        duration.observe(labels, r.seconds);
      },
      inflight(delta, serverType) { inflight.inc({ server_type: serverType }, delta); },
    },
  };
}

/**
 * Observes each pod's start once: when its status first shows phase Running, the time since
 * the agent first saw it (the orch.io/config.seen annotation, else the status's startTime).
 * Returns the unsubscribe function.
 */
export function recordPodStarts(
  status: { onChange(listener: (uid: string, status: PodStatus) => void): () => void },
  pods: Pick<PodsView, 'desiredPods'>,
  observe: (seconds: number) => void,
  clock: Pick<Clock, 'now'>,
): () => void {
  const started = new Set<string>();
  return status.onChange((uid, s) => {
    if (s.phase !== 'Running' || started.has(uid)) return;
    if (started.size > 10_000) started.clear();
    started.add(uid);
    const pod = pods.desiredPods().find((p) => p.metadata.uid === uid);
    const seen = Date.parse(pod?.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ?? s.startTime ?? '');
    if (Number.isFinite(seen)) observe(Math.max(0, clock.now() - seen) / 1000);
  });
}

/** Counts for the running gauges from the CRI (the agent's sandboxes and containers only). */
export async function criRuntimeCounts(cri: Pick<ServerCri, 'listPodSandbox' | 'listContainers'>): Promise<RuntimeCounts> {
  const [sandboxes, containers] = await Promise.all([cri.listPodSandbox({ state: { state: 'SANDBOX_READY' } }), cri.listContainers()]);
  const states: Record<string, number> = { created: 0, running: 0, exited: 0, unknown: 0 };
  for (const c of containers) {
    if (c.labels[POD_UID_LABEL] === undefined) continue;
    const state = c.state.replace(/^CONTAINER_/, '').toLowerCase();
    states[state] = (states[state] ?? 0) + 1;
  }
  return { pods: sandboxes.filter((s) => s.labels[POD_UID_LABEL] !== undefined).length, containers: states };
}
