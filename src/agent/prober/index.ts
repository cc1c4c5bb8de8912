/**
 * The prober of nodeagent (upstream: pkg/kubelet/prober): liveness, readiness and startup
 * probes of exec (CRI ExecSync), httpGet, tcpSocket and grpc (grpc.health.v1.Health/Check), one
 * timer-driven worker per probe, with upstream's thresholds, initial delay and period; the
 * results by container ID and the readiness by container name; the probe metrics.
 *
 * Owns: running probes and keeping their results; the HTTP, TCP and exec actions that
 * lifecycle hooks reuse (kuberuntime runs the hooks); the prober metrics registry.
 * Must not: kill or restart containers (the runtime manager does, asking `failedProbe`),
 * compute pod statuses (the status module takes `readiness`), read the runtime's state itself
 * (the per-pod sync hands it `updatePod`), or loop: every wait is a timer.
 */
export { createProberManager, type ProberManagerOptions } from './manager.js';
export { createProberMetrics, PROBE_DURATION_BUCKETS, type ProbeLabels, type ProbeMetricResult, type ProberMetrics } from './metrics.js';
export { grpcProbe, healthCodec, HEALTH_CHECK_METHOD, SERVING_STATUSES, type ServingStatus } from './grpc.js';
export { httpGet, httpRequest, httpTarget, MAX_RESPONSE_BODY_BYTES, PROBE_AGENT_VERSION, resolveContainerPort, type HttpTarget } from './http.js';
export { probeTimings, runProbe, type ProbeTarget, type ProbeTimings } from './probe.js';
export { execProbe, tcpProbe, type ExecRunner } from './socket.js';
export { quantizedDelay, TIMER_QUANTUM_MS } from './worker.js';
export type * from './types.js';
