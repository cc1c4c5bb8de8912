/**
 * Part of nodeagent's composition root: the agent's tracing (the `tracing` section of the
 * configuration, behind the NodeagentTracing gate that validation checks). Without the section
 * nothing of OpenTelemetry is loaded and the modules get no tracer; with it, the provider
 * exports to its endpoint (upstream's default localhost:4317 when it names none) and each
 * module gets the tracer of its own scope.
 */
import { hostname } from 'node:os';
import type { Clock } from '../api/clock.js';
import { DEFAULT_TRACING_ENDPOINT, startTracing, TraceParents, type Tracer, type TracingProvider } from '../api/tracing/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import type { LogRoot } from '../agent/logging/index.js';

/** What the agent's modules trace with. */
export interface AgentTracing {
  tracer(scope: 'cri' | 'orchclient' | 'podsource' | 'podsync' | 'kuberuntime'): Tracer;
  /** The pod sources' spans, by pod UID, for the pods' next syncs. */
  readonly parents: TraceParents;
  readonly provider: TracingProvider;
}

/** Starts the provider when the configuration asks for tracing; undefined (nothing loaded) otherwise. */
export async function startAgentTracing(resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock): Promise<AgentTracing | undefined> {
  const settings = resolved.config.tracing;
  if (settings === null) return undefined;
  const log = logs.logger('tracing');
  const endpoint = settings.endpoint === '' ? DEFAULT_TRACING_ENDPOINT : settings.endpoint;
  const provider = await startTracing({
    endpoint, samplingRatePerMillion: settings.samplingRatePerMillion, serviceName: 'nodeagent', hostName: hostname(), clock,
    onExportError: (message) => { log.warn('Exporting spans failed', { endpoint, err: message }); },
  });
  log.info('Tracing', { endpoint, samplingRatePerMillion: settings.samplingRatePerMillion ?? 0 });
  const parents = new TraceParents();
  return { provider, parents, tracer: (scope) => provider.tracer(`nodeagent/${scope}`) };
}
