/**
 * The eviction manager's metrics in the agent's /metrics registry, under upstream's names with
 * the `nodeagent_` prefix: nodeagent_evictions{eviction_signal} (pods evicted, by the signal or
 * local storage limit that led to it) and nodeagent_eviction_stats_age_seconds{eviction_signal}
 * (how old the observation of a met threshold was when it drove an eviction). Upstream has no
 * gauge of the pressure conditions; nodeagent_node_pressure{condition} (1 while the condition
 * is True) is the module's own.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PressureCondition } from './types.js';

export interface EvictionMetrics {
  evicted(signal: string): void;
  observeStatsAge(signal: string, seconds: number): void;
  pressure(conditions: readonly PressureCondition[]): void;
}

/** prometheus' default buckets, as upstream's histogram. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CONDITIONS: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export function createEvictionMetrics(registry: Registry): EvictionMetrics {
  const registers = [registry];
  const evictions = new Counter({
    name: 'nodeagent_evictions', help: 'Cumulative number of pod evictions by eviction signal', labelNames: ['eviction_signal'], registers,
  });
  const age = new Histogram({
    name: 'nodeagent_eviction_stats_age_seconds', help: 'Time between when stats are collected, and when pod is evicted based on those stats by eviction signal',
    labelNames: ['eviction_signal'], buckets: BUCKETS, registers,
  });
  const pressure = new Gauge({ name: 'nodeagent_node_pressure', help: 'Whether the node condition is True (1) or False (0)', labelNames: ['condition'], registers });
  for (const condition of CONDITIONS) pressure.set({ condition }, 0);
  return {
    evicted: (signal) => { evictions.inc({ eviction_signal: signal }); },
    observeStatsAge: (signal, seconds) => { age.observe({ eviction_signal: signal }, seconds); },
    pressure(conditions) {
      for (const condition of CONDITIONS) pressure.set({ condition }, conditions.includes(condition) ? 1 : 0);
    },
  };
}
