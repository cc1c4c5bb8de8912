/**
 * The console's live data, shared by its views: reflectors of nodes, pods and events (started
 * at sign-in, kept for the session), of node leases (while a node view is open), and the node
 * metrics polled from the resource metrics API at its resolution while a node view is open
 * (the API has no watch), kept as a history of the last minutes.
 *
 * A browser holds at most 6 HTTP/1.1 connections to one server, and each open watch or followed
 * log holds one: the views open at most 4 streams at once, leaving room for short reads. A tab
 * hidden for a minute stops its watches; shown again, they resume from their resourceVersion.
 */
import { ApiError, type Api } from './api.js';
import { History } from './history.js';
import type { KubeObject, Lease, ListOf, Node, NodeMetrics } from './kube.js';
import { eventRow, podRow, type EventRow, type PodRow } from './model.js';
import { parseQuantity } from './quantity.js';
import { Reflector, type ReflectorState, type Timers } from './reflector.js';

export const METRICS_WINDOW_MS = 10 * 60_000;
const METRICS_EVERY_MS = 10_000;
const HIDDEN_STOP_MS = 60_000;

export interface MetricsState {
  /** '' while reads succeed; the last failure otherwise (no agent serves metrics, forbidden...). */
  readonly error: string;
  readonly lastMs: number | undefined;
}

export class Hub {
  readonly nodes: Reflector<Node>;
  readonly pods: Reflector<PodRow>;
  readonly events: Reflector<EventRow>;
  readonly leases: Reflector<Lease>;
  readonly history = new History(METRICS_WINDOW_MS);
  metrics: MetricsState = { error: '', lastMs: undefined };

  private readonly api: Api;
  private readonly timers: Timers;
  private readonly now: () => number;
  private nodeViews = 0;
  private metricsTimer: unknown;
  /** Bumped by every start and stop of the metrics loop: a read in flight when it stops schedules nothing. */
  private metricsGeneration = 0;
  private hiddenTimer: unknown;
  private paused = false;
  private readonly metricsListeners = new Set<() => void>();

  constructor(options: { api: Api; timers: Timers; now: () => number }) {
    this.api = options.api;
    this.timers = options.timers;
    this.now = options.now;
    const base = { api: options.api, timers: options.timers };
    this.nodes = new Reflector<Node>({ ...base, path: '/api/v1/nodes', transform: (o: KubeObject) => o });
    this.pods = new Reflector<PodRow>({ ...base, path: '/api/v1/pods', transform: podRow });
    this.events = new Reflector<EventRow>({ ...base, path: '/apis/events.orch.io/v1/events', transform: eventRow });
    this.leases = new Reflector<Lease>({ ...base, path: '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', transform: (o: KubeObject) => o });
  }

  /** Starts the session's watches. */
  start(): void {
    for (const r of [this.nodes, this.pods, this.events]) r.start();
  }

  /** Stops everything (sign-out). */
  stop(): void {
    for (const r of [this.nodes, this.pods, this.events, this.leases]) r.stop();
    this.stopMetrics();
    if (this.hiddenTimer !== undefined) this.timers.clearTimeout(this.hiddenTimer);
  }

  /** A node view opened: node leases and metrics until the returned function is called. */
  acquireNodeData(): () => void {
    this.nodeViews++;
    if (this.nodeViews === 1 && !this.paused) {
      this.leases.start();
      this.pollMetrics();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.nodeViews--;
      if (this.nodeViews === 0) {
        this.leases.stop();
        this.stopMetrics();
      }
    };
  }

  onMetrics(listener: () => void): () => void {
    this.metricsListeners.add(listener);
    return () => this.metricsListeners.delete(listener);
  }

  /** The tab was hidden or shown (document.visibilityState). */
  visibility(visible: boolean): void {
    if (visible) {
      if (this.hiddenTimer !== undefined) this.timers.clearTimeout(this.hiddenTimer);
      this.hiddenTimer = undefined;
      if (!this.paused) return;
      this.paused = false;
      this.start();
      if (this.nodeViews > 0) {
        this.leases.start();
        this.pollMetrics();
      }
      return;
    }
    if (this.hiddenTimer !== undefined || this.paused) return;
    this.hiddenTimer = this.timers.setTimeout(() => {
      this.hiddenTimer = undefined;
      this.paused = true;
      for (const r of [this.nodes, this.pods, this.events, this.leases]) r.stop();
      this.stopMetrics();
    }, HIDDEN_STOP_MS);
  }

  /** The worst state of the session's watches, for the header's indicator. */
  connection(): ReflectorState {
    const states = [this.nodes, this.pods, this.events].map((r) => r.state);
    return states.find((s) => s.kind === 'failed') ?? states.find((s) => s.kind === 'retrying')
      ?? states.find((s) => s.kind === 'listing' || s.kind === 'idle') ?? { kind: 'live' };
  }

  private stopMetrics(): void {
    this.metricsGeneration++;
    if (this.metricsTimer !== undefined) this.timers.clearTimeout(this.metricsTimer);
    this.metricsTimer = undefined;
  }

  private pollMetrics(): void {
    this.stopMetrics();
    const generation = this.metricsGeneration;
    const tick = async (): Promise<void> => {
      try {
        const list = await this.api.get<ListOf<NodeMetrics>>('/apis/metrics.orch.io/v1beta1/nodes');
        for (const m of list.items ?? []) {
          const name = m.metadata?.name ?? '';
          const t = Date.parse(m.timestamp ?? '') || this.now();
          this.history.add(`node/${name}/cpu`, t, parseQuantity(m.usage?.cpu) ?? 0);
          this.history.add(`node/${name}/memory`, t, parseQuantity(m.usage?.memory) ?? 0);
        }
        this.metrics = { error: '', lastMs: this.now() };
      } catch (err) {
        this.metrics = { error: err instanceof ApiError || err instanceof Error ? err.message : String(err), lastMs: this.metrics.lastMs };
      }
      for (const l of [...this.metricsListeners]) l();
    };
    const loop = (): void => {
      void tick().finally(() => {
        if (generation === this.metricsGeneration) this.metricsTimer = this.timers.setTimeout(loop, METRICS_EVERY_MS);
      });
    };
    loop();
  }
}
