/**
 * The prober's metrics (upstream: prober_probe_total and prober_probe_duration_seconds), in a
 * prom-client Registry of their own that the servers serve on /metrics/probes:
 *
 *   nodeagent_prober_probe_total{probe_type,result,container,pod,namespace}   counter
 *     result: successful | failed | unknown (the probe could not be run)
 *   nodeagent_prober_probe_duration_seconds{probe_type,container,pod,namespace}   histogram
 *     of successful probes, as upstream
 *
 * Series of a pod are removed when its workers stop.
 */
import { Counter, Histogram, Registry } from 'prom-client';

export interface ProbeLabels {
  readonly probe_type: string;
  readonly container: string;
  readonly pod: string;
  readonly namespace: string;
}

export type ProbeMetricResult = 'successful' | 'failed' | 'unknown';

/** The series of one probe, resolved once (label hashing is not repeated on every run). */
export interface ProbeSeries {
  observe(result: ProbeMetricResult, seconds: number): void;
}

export interface ProberMetrics {
  /** The registry holding the prober's metrics only. */
  readonly registry: Registry;
  /** Counts one probe run; its duration is observed for successful runs. */
  observe(labels: ProbeLabels, result: ProbeMetricResult, seconds: number): void;
  /** The series of one probe, for a worker to keep. */
  series(labels: ProbeLabels): ProbeSeries;
  /** Removes the series of one probe (its worker stopped). */
  forget(labels: ProbeLabels): void;
}

export const PROBE_DURATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createProberMetrics(): ProberMetrics {
  const registry = new Registry();
  const total = new Counter({
    name: 'nodeagent_prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'nodeagent_prober_probe_duration_seconds',
    help: 'Duration in seconds for a probe response.',
    labelNames: ['probe_type', 'container', 'pod', 'namespace'] as const,
    buckets: [...PROBE_DURATION_BUCKETS],
    registers: [registry],
  });
  const series = (labels: ProbeLabels): ProbeSeries => {
    const count = (result: ProbeMetricResult) => total.labels({ probe_type: labels.probe_type, result, container: labels.container, pod: labels.pod, namespace: labels.namespace });
    const counters = { successful: count('successful'), failed: count('failed'), unknown: count('unknown') };
    const timing = duration.labels({ ...labels });
    return {
      observe(result, seconds) {
        counters[result].inc();
        if (result === 'successful') timing.observe(seconds);
      },
    };
  };
  return {
    registry,
    series,
    observe(labels, result, seconds) {
      series(labels).observe(result, seconds);
    },
    forget(labels) {
      for (const result of ['successful', 'failed', 'unknown'] as const) {
        total.remove({ probe_type: labels.probe_type, result, container: labels.container, pod: labels.pod, namespace: labels.namespace });
      }
      duration.remove({ ...labels });
    },
  };
}
