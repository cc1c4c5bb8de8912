/**
 * server: the agent's listeners and endpoints, as upstream's kubelet server. The secure
 * server (TLS with a given, self-signed or requested (serverTLSBootstrap) certificate,
 * client-certificate and token authentication, AlwaysAllow or webhook authorization), the read-only server and the health
 * server; the endpoints /healthz, /pods, /runningpods/, /stats/summary, /metrics (and
 * /cadvisor, /probes, /resource), /spec/, /logs/, /containerLogs, /exec, /attach,
 * /portForward (WebSocket or SPDY, to the runtime's streaming server; v5 translated to SPDY), /run, /configz,
 * /debug/flags/v and /debug/pprof/.
 *
 * Owns: listening, TLS, the request gate, routing, and turning the agent's state into
 * upstream's JSON, text and stream shapes. Must not: change pods or the runtime beyond what a
 * client asks through /exec, /attach, /portForward and /run, or poll anything in the
 * background (stats are read on request and cached 10 s) but the pods' volumes, measured every
 * volumeStatsAggPeriod (stats/volume-stats.ts) as upstream's volume stats are.
 *
 * Errors: SERVER_TLS_INVALID (certificate, key, client CA, TLS settings),
 * SERVER_CONFIG_INVALID (webhook authentication or authorization without an API server),
 * SERVER_NO_SERVING_CERTIFICATE (serverTLSBootstrap: a handshake before a certificate was issued).
 */
export { startServers, startHealthListener, SERVER_CONFIG_INVALID, type Servers, type ServersOptions } from './servers.js';
export { serveHealthz, type HealthCheck } from './healthz.js';
export type { PodsView, ServerCri } from './host.js';
export type { Listening } from './listen.js';
export { createAgentMetrics, criRuntimeCounts, recordPodStarts, type AgentMetrics, type AgentMetricsOptions, type RuntimeCounts } from './metrics/agent-metrics.js';
export { createStatsProvider, type PodUsage, type StatsProvider, type StatsSnapshot } from './stats/provider.js';
export { createVolumeStatsCache, type PodVolumeStats, type VolumeStats, type VolumeStatsCache } from './stats/volume-stats.js';
export { createCertificate, certificateInfo, type CertificateRequest, type IssuedCertificate } from './certs.js';
export { SERVER_TLS_INVALID, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from './tls.js';
export {
  NO_SERVING_CERTIFICATE, SERVER_NO_SERVING_CERTIFICATE, type ServingCertificateSource, type ServingPair,
} from './dynamic-tls.js';
