/**
 * /stats/summary (GET or POST, as upstream): the summary API of the node and its pods from
 * the stats provider's snapshot; `only_cpu_and_memory=true` keeps CPU and memory only. The
 * system containers are the agent itself (its process) and `pods` (the sum of the pods).
 * /stats/ and the older per-container paths are gone upstream (404 here too).
 */
import { formatTime } from '../../../api/time.js';
import { messageOf } from '../../../api/errors.js';
import { HttpError, readBody, sendJson } from '../http.js';
import type { Route } from '../router.js';
import type { PodUsage, StatsProvider, StatsSnapshot } from './provider.js';
import { type ContainerSummary, type PodSummary, type Summary } from './types.js';

const PROCESS_START = Date.now() - process.uptime() * 1000;

function systemContainers(s: StatsSnapshot): ContainerSummary[] {
  const time = formatTime(s.timestamp);
  const cpu = process.cpuUsage();
  const self: ContainerSummary = {
    name: 'nodeagent',
    startTime: formatTime(PROCESS_START),
    cpu: { time, usageCoreNanoSeconds: (cpu.user + cpu.system) * 1000 },
    memory: { time, workingSetBytes: process.memoryUsage.rss(), rssBytes: process.memoryUsage.rss() },
  };
  const sum = (f: (p: PodUsage) => number | undefined): number => s.pods.reduce((a, p) => a + (f(p) ?? 0), 0);
  const pods: ContainerSummary = {
    name: 'pods',
    startTime: formatTime(s.node.startTime),
    cpu: { time, usageNanoCores: sum((p) => p.cpu?.usageNanoCores), usageCoreNanoSeconds: sum((p) => p.cpu?.usageCoreNanoSeconds) },
    memory: { time, workingSetBytes: sum((p) => p.memory?.workingSetBytes), usageBytes: sum((p) => p.memory?.usageBytes) },
  };
  return [self, pods];
}

function podSummary(p: PodUsage, cpuAndMemoryOnly: boolean): PodSummary {
  const containers: ContainerSummary[] = p.containers.map((c) => ({
    name: c.name,
    startTime: formatTime(c.startTime),
    ...(c.cpu === undefined ? {} : { cpu: c.cpu }),
    ...(c.memory === undefined ? {} : { memory: c.memory }),
    ...(cpuAndMemoryOnly || c.rootfs === undefined ? {} : { rootfs: c.rootfs }),
    ...(cpuAndMemoryOnly || c.logs === undefined ? {} : { logs: c.logs }),
  }));
  const base: PodSummary = {
    podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
    startTime: formatTime(p.startTime),
    containers,
    ...(p.cpu === undefined ? {} : { cpu: p.cpu }),
    ...(p.memory === undefined ? {} : { memory: p.memory }),
  };
  if (cpuAndMemoryOnly) return base;
  return {
    ...base,
    ...(p.network === undefined ? {} : { network: p.network }),
    ...(p.volumes === undefined || p.volumes.length === 0 ? {} : { volume: p.volumes }),
    'ephemeral-storage': p.ephemeralStorage,
    ...(p.processCount === undefined ? {} : { process_stats: { process_count: p.processCount } }),
  };
}

/** The summary of a snapshot (exported for tests). */
export function buildSummary(s: StatsSnapshot, nodeName: string, cpuAndMemoryOnly: boolean): Summary {
  const { capacity: _capacity, ...memory } = s.node.memory;
  const n = s.node;
  return {
    node: {
      nodeName,
      systemContainers: systemContainers(s),
      startTime: formatTime(n.startTime),
      cpu: n.cpu,
      memory,
      ...(cpuAndMemoryOnly ? {} : {
        ...(n.network === undefined ? {} : { network: n.network }),
        ...(n.fs === undefined ? {} : { fs: n.fs }),
        runtime: n.imageFs === undefined ? {} : { imageFs: n.imageFs, containerFs: n.imageFs },
        rlimit: n.rlimit,
      }),
    },
    pods: s.pods.map((p) => podSummary(p, cpuAndMemoryOnly)),
  };
}

export function statsRoutes(stats: StatsProvider, nodeName: string): Route[] {
  return [{
    pattern: '/stats/summary',
    methods: ['GET', 'POST'],
    bucket: 'stats',
    async handle({ req, res, url }) {
      const form = new URLSearchParams(url.searchParams);
      if (req.method === 'POST' && (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        for (const [k, v] of new URLSearchParams((await readBody(req)).toString('utf8'))) form.append(k, v);
      }
      const only = form.getAll('only_cpu_and_memory');
      const cpuAndMemoryOnly = only.length === 1 && only[0] === 'true';
      let snapshot: StatsSnapshot;
      try {
        snapshot = await stats.snapshot();
      } catch (err) {
        throw new HttpError(500, `Internal Error: failed to get node info: ${messageOf(err)}`);
      }
      sendJson(res, 200, buildSummary(snapshot, nodeName, cpuAndMemoryOnly));
    },
  }];
}
