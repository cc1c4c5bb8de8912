/**
 * The resource usage of nodes and pods, from the node agents' /metrics/resource, as
 * metrics-server computes it: memory is the last working set; CPU is a rate, the growth of the
 * cumulative core-seconds between the last two scrapes of a node (its window), so a node is
 * listed from its second scrape on ("metrics not available yet" before, as upstream). A
 * container seen for the first time is measured from its start (cumulative time over time since
 * start). Every node is scraped each `resolutionMs` once started, and on demand when the last
 * scrape is older than that.
 */
import { messageOf } from '../../api/errors.js';
import { metaOf, str, type WireObject } from '../registry/index.js';
import { parseExposition, type Sample } from './parse.js';

interface Point {
  /** Cumulative core-seconds. */
  readonly cpu: number;
  readonly memory: number;
  readonly timeMs: number;
  /** Container start, ms since the epoch. */
  readonly startMs?: number;
}

interface Scrape {
  readonly node: Point | undefined;
  /** By `namespace/pod/container`. */
  readonly containers: ReadonlyMap<string, Point>;
}

export interface Usage {
  readonly cpuNanoCores: number;
  readonly memoryBytes: number;
}

export interface NodeUsage extends Usage {
  readonly node: string;
  readonly timestampMs: number;
  readonly windowMs: number;
}

export interface PodUsage {
  readonly namespace: string;
  readonly name: string;
  readonly timestampMs: number;
  readonly windowMs: number;
  readonly containers: readonly (Usage & { readonly name: string })[];
}

export interface Snapshot {
  readonly nodes: readonly NodeUsage[];
  readonly pods: readonly PodUsage[];
}

export interface CollectorOptions {
  /** The current nodes. */
  readonly nodes: () => Promise<WireObject[]>;
  /** The text of the node agent's /metrics/resource. */
  readonly scrape: (node: WireObject) => Promise<string>;
  readonly log: (message: string) => void;
  readonly now?: () => number;
  /** Runs `fn` every `ms` until the returned function is called (default setInterval, unref'd). */
  readonly every?: (ms: number, fn: () => void) => () => void;
  readonly resolutionMs?: number;
}

function defaultEvery(ms: number, fn: () => void): () => void {
  const timer = setInterval(fn, ms);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
}

function toScrape(samples: readonly Sample[], fallbackMs: number): Scrape {
  const time = (s: Sample | undefined): number => s?.timestampMs ?? fallbackMs;
  const find = (name: string): Sample | undefined => samples.find((s) => s.name === name);
  const nodeCpu = find('node_cpu_usage_seconds_total');
  const nodeMemory = find('node_memory_working_set_bytes');
  const node = nodeCpu === undefined || nodeMemory === undefined ? undefined : { cpu: nodeCpu.value, memory: nodeMemory.value, timeMs: time(nodeCpu) };
  const key = (s: Sample): string => `${s.labels.namespace ?? ''}/${s.labels.pod ?? ''}/${s.labels.container ?? ''}`;
  const byKey = (name: string): Map<string, Sample> => new Map(samples.filter((s) => s.name === name).map((s) => [key(s), s]));
  const memory = byKey('container_memory_working_set_bytes');
  const start = byKey('container_start_time_seconds');
  const containers = new Map<string, Point>();
  for (const [k, cpu] of byKey('container_cpu_usage_seconds_total')) {
    const mem = memory.get(k);
    if (mem === undefined) continue;
    const started = start.get(k);
    containers.set(k, { cpu: cpu.value, memory: mem.value, timeMs: time(cpu), ...(started === undefined ? {} : { startMs: started.value * 1000 }) });
  }
  return { node, containers };
}

const rate = (cpu: number, since: number, windowMs: number): number => (windowMs <= 0 ? 0 : Math.max(0, ((cpu - since) * 1e9) / (windowMs / 1000)));

export class MetricsCollector {
  private readonly history = new Map<string, Scrape[]>();
  /** Nodes whose last scrape failed (their failure is logged once). */
  private readonly failing = new Set<string>();
  private lastRefresh = -Infinity;
  private refreshing: Promise<void> | undefined;
  private stopTimer: (() => void) | undefined;
  private readonly now: () => number;
  private readonly resolutionMs: number;

  constructor(private readonly options: CollectorOptions) {
    this.now = options.now ?? Date.now;
    this.resolutionMs = options.resolutionMs ?? 10_000;
  }

  /** Scrapes every node now and then each resolution interval, until close(). */
  start(): void {
    if (this.stopTimer !== undefined) return;
    const tick = (): void => {
      void this.refreshOnce();
    };
    this.stopTimer = (this.options.every ?? defaultEvery)(this.resolutionMs, tick);
    tick();
  }

  /** Stops the periodic scrapes; resolves when none is running. */
  async close(): Promise<void> {
    this.stopTimer?.();
    this.stopTimer = undefined;
    await this.refreshing;
  }

  /** The usage of every node and pod, scraping first when the last scrape is too old. */
  async snapshot(): Promise<Snapshot> {
    if (this.now() - this.lastRefresh >= this.resolutionMs) await this.refreshOnce();
    return this.compute();
  }

  /** One scrape of every node (joined when one runs already). Never rejects. */
  private refreshOnce(): Promise<void> {
    this.refreshing ??= this.refresh().catch((err: unknown) => {
      this.options.log(`resource metrics: listing the nodes failed: ${messageOf(err)}`);
    }).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async scrapeNode(node: WireObject): Promise<void> {
    const name = str(metaOf(node).name);
    try {
      const scrape = toScrape(parseExposition(await this.options.scrape(node)), this.now());
      if (this.failing.delete(name)) this.options.log(`resource metrics: scraping node ${name} works again`);
      const before = this.history.get(name) ?? [];
      // A node agent answers from a cached snapshot for a while: the same reading is no new point.
      const last = before[before.length - 1];
      if (last !== undefined && last.node?.timeMs === scrape.node?.timeMs) return;
      this.history.set(name, [...before, scrape].slice(-2));
    } catch (err) {
      // Once per node until it answers again: a node that serves no metrics would log every interval.
      if (!this.failing.has(name)) this.options.log(`resource metrics: scraping node ${name} failed (said once until it works again): ${messageOf(err)}`);
      this.failing.add(name);
    }
  }

  private async refresh(): Promise<void> {
    const nodes = await this.options.nodes();
    const names = new Set(nodes.map((n) => str(metaOf(n).name)));
    for (const known of [...this.history.keys()]) if (!names.has(known)) this.history.delete(known);
    for (const known of [...this.failing]) if (!names.has(known)) this.failing.delete(known);
    await Promise.all(nodes.map((n) => this.scrapeNode(n)));
    this.lastRefresh = this.now();
  }

  private compute(): Snapshot {
    const nodes: NodeUsage[] = [];
    const pods = new Map<string, { namespace: string; name: string; timestampMs: number; windowMs: number; containers: (Usage & { name: string })[] }>();
    for (const [node, scrapes] of this.history) {
      const [prev, cur] = scrapes.length === 2 ? scrapes : [undefined, scrapes[0]];
      if (cur === undefined) continue;
      if (prev?.node !== undefined && cur.node !== undefined && cur.node.timeMs > prev.node.timeMs) {
        const windowMs = cur.node.timeMs - prev.node.timeMs;
        nodes.push({ node, cpuNanoCores: rate(cur.node.cpu, prev.node.cpu, windowMs), memoryBytes: cur.node.memory, timestampMs: cur.node.timeMs, windowMs });
      }
      for (const [key, point] of cur.containers) {
        const before = prev?.containers.get(key);
        const fromPrev = before !== undefined && before.startMs === point.startMs && point.timeMs > before.timeMs;
        const sinceMs = fromPrev ? before.timeMs : point.startMs;
        if (sinceMs === undefined || point.timeMs <= sinceMs) continue;
        const windowMs = point.timeMs - sinceMs;
        const [namespace = '', pod = '', container = ''] = key.split('/');
        const podKey = `${namespace}/${pod}`;
        const entry = pods.get(podKey) ?? { namespace, name: pod, timestampMs: point.timeMs, windowMs, containers: [] };
        entry.timestampMs = Math.max(entry.timestampMs, point.timeMs);
        entry.windowMs = Math.max(entry.windowMs, windowMs);
        entry.containers.push({ name: container, cpuNanoCores: rate(point.cpu, fromPrev ? before.cpu : 0, windowMs), memoryBytes: point.memory });
        pods.set(podKey, entry);
      }
    }
    return { nodes, pods: [...pods.values()] };
  }
}
