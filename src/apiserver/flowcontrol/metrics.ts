/**
 * Upstream's API Priority and Fairness metrics: apiserver_flowcontrol_dispatched_requests_total,
 * apiserver_flowcontrol_rejected_requests_total (by reason: queue-full, concurrency-limit,
 * time-out, cancelled), apiserver_flowcontrol_current_inqueue_requests,
 * apiserver_flowcontrol_current_executing_requests, apiserver_flowcontrol_request_wait_duration_seconds
 * (by execute: true/false) and apiserver_flowcontrol_nominal_limit_seats.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface FlowLabels {
  readonly priority_level: string;
  readonly flow_schema: string;
}

export interface FlowControlMetrics {
  dispatched(labels: FlowLabels, waitedSeconds: number): void;
  rejected(labels: FlowLabels, reason: string, waitedSeconds: number): void;
  inQueue(labels: FlowLabels, delta: number): void;
  executing(labels: FlowLabels, delta: number): void;
  nominalLimit(level: string, seats: number): void;
}

const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

export function createFlowControlMetrics(registry: Registry): FlowControlMetrics {
  const registers = [registry];
  const labelNames = ['priority_level', 'flow_schema'] as const;
  const dispatched = new Counter({ name: 'apiserver_flowcontrol_dispatched_requests_total', help: 'Number of requests executed by API Priority and Fairness subsystem', labelNames, registers });
  const rejected = new Counter({ name: 'apiserver_flowcontrol_rejected_requests_total', help: 'Number of requests rejected by API Priority and Fairness subsystem', labelNames: [...labelNames, 'reason'], registers });
  const inqueue = new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_requests', help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', labelNames, registers });
  const executing = new Gauge({ name: 'apiserver_flowcontrol_current_executing_requests', help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', labelNames, registers });
  const wait = new Histogram({ name: 'apiserver_flowcontrol_request_wait_duration_seconds', help: 'Length of time a request spent waiting in its queue', labelNames: [...labelNames, 'execute'], buckets: WAIT_BUCKETS, registers });
  const nominal = new Gauge({ name: 'apiserver_flowcontrol_nominal_limit_seats', help: 'Nominal number of execution seats configured for each priority level', labelNames: ['priority_level'], registers });
  return {
    dispatched(labels, waitedSeconds) {
      dispatched.inc(labels);
      wait.observe({ ...labels, execute: 'true' }, waitedSeconds);
    },
    rejected(labels, reason, waitedSeconds) {
      rejected.inc({ ...labels, reason });
      wait.observe({ ...labels, execute: 'false' }, waitedSeconds);
    },
    inQueue(labels, delta) {
      inqueue.inc(labels, delta);
    },
    executing(labels, delta) {
      executing.inc(labels, delta);
    },
    nominalLimit(level, seats) {
      nominal.set({ priority_level: level }, seats);
    },
  };
}
