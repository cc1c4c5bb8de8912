/**
 * The metrics endpoints: /metrics (the agent's registry), /metrics/probes (the prober's
 * registry), /metrics/resource and /metrics/cadvisor (computed from the stats snapshot).
 */
import { availableParallelism } from 'node:os';
import type { Registry } from 'prom-client';
import { messageOf } from '../../../api/errors.js';
import { HttpError } from '../http.js';
import type { Route } from '../router.js';
import type { StatsProvider } from '../stats/provider.js';
import type { AgentMetrics } from './agent-metrics.js';
import { EXPOSITION_CONTENT_TYPE, renderFamilies, type Family } from './exposition.js';
import { cadvisorFamilies, resourceFamilies } from './container-metrics.js';

function registryRoute(pattern: string, bucket: string, registry: Registry): Route {
  return {
    pattern, methods: ['GET'], bucket,
    async handle({ res }) {
      const text = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) }).end(text);
    },
  };
}

function snapshotRoute(pattern: string, bucket: string, stats: StatsProvider, families: (s: Awaited<ReturnType<StatsProvider['snapshot']>>) => Family[]): Route {
  return {
    pattern, methods: ['GET'], bucket,
    async handle({ res }) {
      let text: string;
      try {
        text = renderFamilies(families(await stats.snapshot()));
      } catch (err) {
        throw new HttpError(500, `An error has occurred while collecting metrics: ${messageOf(err)}`);
      }
      res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) }).end(text);
    },
  };
}

export function metricsRoutes(metrics: AgentMetrics, stats: StatsProvider): Route[] {
  const cores = availableParallelism();
  return [
    registryRoute('/metrics', 'metrics', metrics.registry),
    registryRoute('/metrics/probes', 'metrics/probes', metrics.probeRegistry),
    snapshotRoute('/metrics/resource', 'metrics/resource', stats, resourceFamilies),
    snapshotRoute('/metrics/cadvisor', 'metrics/cadvisor', stats, (s) => cadvisorFamilies(s, { cores })),
  ];
}
