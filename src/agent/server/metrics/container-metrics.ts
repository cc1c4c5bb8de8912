/**
 * Container and node metrics computed per scrape from the stats snapshot:
 * /metrics/resource (upstream's resource metrics: node_cpu_usage_seconds_total,
 * node_memory_working_set_bytes, container_*, pod_*, scrape_error) and /metrics/cadvisor
 * (cAdvisor's container_* families for the pods' containers, with container, pod, namespace,
 * id, image and name labels, and machine_*).
 */
import type { PodUsage, StatsSnapshot } from '../stats/provider.js';
import type { Family, Sample } from './exposition.js';

const seconds = (ns: number | undefined): number | undefined => (ns === undefined ? undefined : ns / 1e9);
const at = (time: string | undefined, fallback: number): number => (time === undefined ? fallback : Date.parse(time));

function samples<T>(items: readonly T[], f: (item: T) => Sample | undefined): Sample[] {
  return items.map(f).filter((s): s is Sample => s !== undefined);
}

function containersOf(s: StatsSnapshot): { pod: PodUsage; c: PodUsage['containers'][number] }[] {
  return s.pods.flatMap((pod) => pod.containers.map((c) => ({ pod, c })));
}

export function resourceFamilies(s: StatsSnapshot): Family[] {
  const t = s.timestamp;
  const cs = containersOf(s);
  const clabels = (x: (typeof cs)[number]): Record<string, string> => ({ container: x.c.name, namespace: x.pod.namespace, pod: x.pod.name });
  const plabels = (p: PodUsage): Record<string, string> => ({ namespace: p.namespace, pod: p.name });
  const value = (v: number | undefined, labels: Record<string, string>, time: number): Sample | undefined =>
    (v === undefined ? undefined : { labels, value: v, timestampMs: time });
  return [
    {
      name: 'container_cpu_usage_seconds_total', help: '[STABLE] Cumulative cpu time consumed by the container in core-seconds', type: 'counter',
      samples: samples(cs, (x) => value(seconds(x.c.cpu?.usageCoreNanoSeconds), clabels(x), at(x.c.cpu?.time, t))),
    },
    {
      name: 'container_memory_working_set_bytes', help: '[STABLE] Current working set of the container in bytes', type: 'gauge',
      samples: samples(cs, (x) => value(x.c.memory?.workingSetBytes, clabels(x), at(x.c.memory?.time, t))),
    },
    {
      name: 'container_start_time_seconds', help: '[STABLE] Start time of the container since unix epoch in seconds', type: 'gauge',
      samples: cs.map((x) => ({ labels: clabels(x), value: x.c.startTime / 1000, timestampMs: x.c.startTime })),
    },
    {
      name: 'node_cpu_usage_seconds_total', help: '[STABLE] Cumulative cpu time consumed by the node in core-seconds', type: 'counter',
      samples: samples([s.node], (n) => value(seconds(n.cpu.usageCoreNanoSeconds), {}, t)),
    },
    {
      name: 'node_memory_working_set_bytes', help: '[STABLE] Current working set of the node in bytes', type: 'gauge',
      samples: samples([s.node], (n) => value(n.memory.workingSetBytes, {}, t)),
    },
    {
      name: 'pod_cpu_usage_seconds_total', help: '[STABLE] Cumulative cpu time consumed by the pod in core-seconds', type: 'counter',
      samples: samples(s.pods, (p) => value(seconds(p.cpu?.usageCoreNanoSeconds), plabels(p), at(p.cpu?.time, t))),
    },
    {
      name: 'pod_memory_working_set_bytes', help: '[STABLE] Current working set of the pod in bytes', type: 'gauge',
      samples: samples(s.pods, (p) => value(p.memory?.workingSetBytes, plabels(p), at(p.memory?.time, t))),
    },
    {
      name: 'scrape_error', help: '[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise', type: 'gauge',
      samples: [{ value: s.errors.length > 0 ? 1 : 0 }],
    },
  ];
}

export function cadvisorFamilies(s: StatsSnapshot, machine: { cores: number }): Family[] {
  const t = s.timestamp;
  const cs = containersOf(s);
  const labels = (x: (typeof cs)[number]): Record<string, string> => ({
    container: x.c.name, id: `/${x.c.id}`, image: x.c.image, name: x.c.id, namespace: x.pod.namespace, pod: x.pod.name,
  });
  const gauge = (name: string, help: string, f: (x: (typeof cs)[number]) => number | undefined): Family => ({
    name, help, type: 'gauge',
    samples: samples(cs, (x) => { const v = f(x); return v === undefined ? undefined : { labels: labels(x), value: v, timestampMs: t }; }),
  });
  return [
    {
      name: 'container_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed in seconds.', type: 'counter',
      samples: samples(cs, (x) => { const v = seconds(x.c.cpu?.usageCoreNanoSeconds); return v === undefined ? undefined : { labels: { ...labels(x), cpu: 'total' }, value: v, timestampMs: t }; }),
    },
    gauge('container_memory_working_set_bytes', 'Current working set in bytes.', (x) => x.c.memory?.workingSetBytes),
    gauge('container_memory_usage_bytes', 'Current memory usage in bytes, including all memory regardless of when it was accessed', (x) => x.c.memory?.usageBytes),
    gauge('container_memory_rss', 'Size of RSS in bytes.', (x) => x.c.memory?.rssBytes),
    gauge('container_fs_usage_bytes', 'Number of bytes that are consumed by the container on this filesystem.', (x) => x.c.rootfs?.usedBytes),
    gauge('container_start_time_seconds', 'Start time of the container since unix epoch in seconds.', (x) => x.c.startTime / 1000),
    gauge('container_last_seen', 'Last time a container was seen by the exporter', () => t / 1000),
    { name: 'machine_cpu_cores', help: 'Number of logical CPU cores.', type: 'gauge', samples: [{ value: machine.cores }] },
    { name: 'machine_memory_bytes', help: 'Amount of memory installed on the machine.', type: 'gauge', samples: [{ value: s.node.memory.capacity }] },
  ];
}
