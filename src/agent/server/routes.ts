/**
 * Which endpoints each server has, as upstream installs them. Every server: /healthz. The
 * secure and read-only servers: /pods, /stats/summary, /metrics*, /spec/. The secure server
 * with enableDebuggingHandlers: /run, /exec, /attach, /portForward, /containerLogs, /configz,
 * /runningpods/, /checkpoint (ContainerCheckpoint gate), and /logs/ (enableSystemLogHandler),
 * /debug/pprof/ (enableProfilingHandler), /debug/flags/v (enableDebugFlagsHandler); a
 * disabled one of those three answers 405 "<name> endpoint is disabled.". The read-only
 * server, and the secure one without debugging handlers, answer 405 "Debug endpoints are
 * disabled." on the debugging paths and 404 on the rest (/configz, /debug/flags/v).
 */
import type { Clock } from '../../api/clock.js';
import type { NodeagentConfiguration } from '../config/index.js';
import { configzRoutes, debugFlagsRoutes, type VerbositySetter } from './debug/configz.js';
import { pprofRoutes } from './debug/pprof.js';
import { serveHealthz, type HealthCheck } from './healthz.js';
import type { PodsView, ServerCri } from './host.js';
import { HttpError } from './http.js';
import { containerLogRoutes } from './logs/container-logs.js';
import { systemLogRoutes } from './logs/system-logs.js';
import type { AgentMetrics } from './metrics/agent-metrics.js';
import { metricsRoutes } from './metrics/routes.js';
import { checkpointRoutes } from './checkpoint.js';
import { podRoutes } from './pods.js';
import type { Route } from './router.js';
import { specRoutes } from './spec.js';
import type { StatsProvider } from './stats/provider.js';
import { statsRoutes } from './stats/summary.js';
import { streamingRoutes } from './streaming/routes.js';
import type { Logger } from '../logging/index.js';

export interface RouteDeps {
  readonly config: NodeagentConfiguration;
  readonly nodeName: string;
  readonly rootDir: string;
  readonly pods: PodsView;
  readonly cri: ServerCri;
  readonly stats: StatsProvider;
  readonly metrics: AgentMetrics;
  readonly healthChecks: readonly HealthCheck[];
  readonly logs: VerbositySetter;
  readonly gateEnabled: (name: string) => boolean;
  readonly logger: Logger;
  /** The agent's clock (timestamps, since-times of logs). */
  readonly clock: Clock;
  /** The node's log directory (default /var/log). */
  readonly logDir?: string;
}

export function healthzRoutes(checks: readonly HealthCheck[]): Route[] {
  const handle: Route['handle'] = ({ req, res }) => { serveHealthz(checks, req, res); };
  return [
    { pattern: '/healthz', bucket: 'healthz', handle },
    { pattern: '/healthz/*check', bucket: 'healthz', handle },
  ];
}

/** A path (and everything below it) answering 405 with `message`. */
function disabled(prefix: string, bucket: string, message: string): Route[] {
  const handle = (): never => { throw new HttpError(405, `${message}\n`); };
  return [{ pattern: prefix, bucket, handle }, { pattern: `${prefix}/*rest`, bucket, handle }];
}

const DEBUG_PATHS: readonly (readonly [string, string])[] = [
  ['/run', 'run'], ['/exec', 'exec'], ['/attach', 'attach'], ['/portForward', 'portForward'], ['/containerLogs', 'containerLogs'],
  ['/runningpods', 'runningpods'], ['/debug/pprof', 'debug'], ['/logs', 'logs'],
];

function defaultRoutes(d: RouteDeps): Route[] {
  return [
    ...healthzRoutes(d.healthChecks),
    ...podRoutes(d.pods, d.cri).pods,
    ...statsRoutes(d.stats, d.nodeName),
    ...metricsRoutes(d.metrics, d.stats),
    ...specRoutes({ rootDir: d.rootDir, clock: d.clock }),
  ];
}

function debuggingDisabledRoutes(): Route[] {
  return DEBUG_PATHS.flatMap(([p, b]) => disabled(p, b, 'Debug endpoints are disabled.'));
}

function gatedCheckpointRoutes(d: RouteDeps): Route[] {
  return d.gateEnabled('ContainerCheckpoint') ? checkpointRoutes({ pods: d.pods, cri: d.cri, rootDir: d.rootDir, clock: d.clock }) : [];
}

export function secureRoutes(d: RouteDeps): Route[] {
  const c = d.config;
  if (!c.enableDebuggingHandlers) return [...defaultRoutes(d), ...debuggingDisabledRoutes()];
  const idleTimeoutMs = c.streamingConnectionIdleTimeout / 1e6;
  const query = c.enableSystemLogQuery && d.gateEnabled('NodeLogQuery');
  return [
    ...defaultRoutes(d),
    ...streamingRoutes({ pods: d.pods, cri: d.cri, idleTimeoutMs, logger: d.logger.named('streaming') }),
    ...containerLogRoutes(d.pods, d.cri, d.clock),
    ...configzRoutes(c),
    ...podRoutes(d.pods, d.cri).runningPods,
    ...gatedCheckpointRoutes(d),
    ...(c.enableSystemLogHandler ? systemLogRoutes({ query, ...(d.logDir === undefined ? {} : { logDir: d.logDir }) }) : disabled('/logs', 'logs', 'logs endpoint is disabled.')),
    ...(c.enableProfilingHandler ? pprofRoutes({ contention: c.enableContentionProfiling, clock: d.clock }) : disabled('/debug/pprof', 'debug', 'profiling endpoint is disabled.')),
    ...(c.enableDebugFlagsHandler ? debugFlagsRoutes(d.logs) : disabled('/debug/flags/v', 'debug', 'flags endpoint is disabled.')),
  ];
}

export function readOnlyRoutes(d: RouteDeps): Route[] {
  return [...defaultRoutes(d), ...debuggingDisabledRoutes()];
}
