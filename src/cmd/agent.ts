/**
 * Part of nodeagent's composition root: builds the agent's modules from the resolved
 * configuration and wires them (the only place that knows them all). `startAgent` returns
 * once the agent runs; `stop()` stops the agent's loops and leaves the containers running
 * (a restarted agent adopts them), as upstream's agent does.
 */
import { availableParallelism } from 'node:os';
import { realClock } from '../api/clock.js';
import { durationToMs } from '../api/duration.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { sysctlAdmission, type PodRuntimeManager } from '../agent/kuberuntime/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { createPleg, type Pleg } from '../agent/pleg/index.js';
import type { PodConfig } from '../agent/podsource/index.js';
import { createPodWorkers, type PodWorkers } from '../agent/podworkers/index.js';
import type { OrchClient } from '../agent/orchclient/index.js';
import {
  createAgentMetrics, criRuntimeCounts, recordPodStarts, startServers, type AgentMetrics, type HealthCheck, type Servers,
} from '../agent/server/index.js';
import type { StatusManager } from '../agent/status/index.js';
import { createSyncLoop, podCapacity, type SyncLoop } from '../agent/syncloop/index.js';
import { API_SOURCE } from '../api/pod/index.js';
import type { ApiMode } from './agent-api.js';
import { buildNode, nodeIdentity, type NodeModules } from './agent-node.js';

export { buildNode, type NodeModules } from './agent-node.js';

export interface Agent {
  readonly nodeName: string;
  readonly status: StatusManager;
  readonly syncLoop: SyncLoop;
  readonly podConfig: PodConfig;
  readonly runtime: PodRuntimeManager;
  readonly pleg: Pleg;
  readonly healthChecks: readonly HealthCheck[];
  /** The secure, read-only and health listeners. */
  readonly servers: Servers;
  /** The agent's metrics (the prober registers in metrics.probeRegistry). */
  readonly metrics: AgentMetrics;
  stop(): Promise<void>;
}

export async function startAgent(resolved: ResolvedConfiguration, logs: LogRoot): Promise<Agent> {
  const c = resolved.config;
  const log = logs.logger('agent');
  // The sync loop, the workers and API-server mode refer to each other through these closures.
  const late: { loop?: SyncLoop; apiMode?: ApiMode } = {};
  // API-server mode (--orchconfig): bootstrap, the REST client and the event recorder come first.
  const identity = await nodeIdentity(resolved);
  // Its modules are loaded only then: a standalone agent holds none of their code.
  const apiModules = resolved.options.orchconfig === '' ? undefined : await import('./agent-api.js');
  const api = await apiModules?.connectApi(resolved, logs, identity);
  let node: NodeModules;
  try {
    node = await buildNode(resolved, logs, (uid) => late.loop?.isDesired(uid) ?? false, { api, identity });
  } catch (err) {
    await api?.close();
    throw err;
  }
  const { nodeName: name, cri, runtime, status, syncer, podConfig, volumes, cgroups, prober } = node;
  if (api !== undefined) node.events.fn = (e) => { api.podEvent(e); };
  const workers: PodWorkers = createPodWorkers({
    syncer,
    logger: logs.logger('podworkers'),
    clock: realClock,
    resyncIntervalMs: durationToMs(c.syncFrequency),
    onFinished: (uid) => {
      const pod = late.loop?.pod(uid);
      late.loop?.podFinished(uid);
      if (pod !== undefined) late.apiMode?.podFinished(pod);
    },
  });
  const syncLoop = createSyncLoop({
    podConfig,
    workers,
    runtime,
    volumes,
    cgroups,
    status,
    podCapacity: podCapacity(c.maxPods, c.podsPerCore, availableParallelism()),
    logger: logs.logger('syncloop'),
    clock: realClock,
    admit: [(pod) => sysctlAdmission(pod, c.allowedUnsafeSysctls), ...(api === undefined || apiModules === undefined ? [] : apiModules.apiAdmitHandlers(() => late.apiMode?.node()))],
    onReject: (pod, reason, message) => { api?.podEvent({ type: 'Warning', reason, message, pod }); },
    onDeletable: (pod) => { late.apiMode?.podFinished(pod); },
  });
  late.loop = syncLoop;
  node.probeWake.fn = (uid) => { syncLoop.podChanged(uid); };
  const pleg = createPleg({
    runtime: { listPodSandbox: () => cri.listPodSandbox(), listContainers: () => cri.listContainers() },
    logger: logs.logger('pleg'),
    clock: realClock,
    onPodChanged: (uid, observed) => {
      // The agent's own start of a container, read back by the sync that made it: no resync.
      if (node.statusCache.holds(uid, observed)) return;
      const seenAt = Date.now();
      node.statusCache.invalidate(uid);
      // Seen while the agent was starting the pod (its sandbox before its containers): no resync
      // once that sync, which left no problem, has read everything back running.
      syncLoop.podChanged(uid, () => node.syncer.lastErrors(uid).length > 0 || !node.statusCache.explains(uid, observed, seenAt));
    },
    onRelisted: (startedAt, seen) => { node.statusCache.relisted(startedAt, seen); },
  });

  const started = Date.now();
  const healthChecks: HealthCheck[] = [
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
    { name: 'syncloop', check: loopHealth },
  ];
  function loopHealth(): string | undefined {
    const p = pleg.health();
    if (!p.healthy) return p.message;
    const last = syncLoop.lastHousekeeping();
    const reference = last === 0 ? started : last;
    return Date.now() - reference > 3 * 60_000 ? `sync loop stalled: last housekeeping ${Math.round((Date.now() - reference) / 1000)}s ago` : undefined;
  }
  syncLoop.start();
  pleg.start();
  await podConfig.start();
  if (api !== undefined && apiModules !== undefined) {
    late.apiMode = apiModules.startApiMode({
      resolved, logs, api, nodeName: name, nodeIPs: node.nodeIPs, cri, status, syncLoop,
      pushPods: (pods) => { podConfig.pushSnapshot(API_SOURCE, pods); },
      health: loopHealth,
    });
  }

  // ---- The servers (src/agent/server): secure (TLS, authn, authz), read-only and health ----
  const metrics = createAgentMetrics({ nodeName: name, runtimeCounts: () => criRuntimeCounts(cri), probeRegistry: node.proberMetrics.registry });
  const stopPodStarts = recordPodStarts(status, syncLoop, (seconds) => { metrics.observePodStartDuration(seconds); });
  let orchClient: OrchClient | undefined;
  let servers: Servers;
  try {
    // The API server client of --orchconfig (for now only the servers' token and access reviews use it).
    orchClient = apiModules === undefined ? undefined : await apiModules.orchClientFor(resolved.options.orchconfig);
    servers = await startServers({
      config: c,
      certDir: resolved.options.certDir,
      rootDir: resolved.options.rootDir,
      nodeName: name,
      nodeIPs: node.nodeIPs,
      ...(orchClient === undefined ? {} : { orchClient }),
      ...(api?.servingCertificates === undefined ? {} : { servingCertificates: api.servingCertificates }),
      pods: { desiredPods: () => syncLoop.desiredPods(), podStatus: (uid) => status.getPodStatus(uid) },
      cri,
      healthChecks,
      logs,
      gates: resolved.gates,
      metrics,
      logger: logs.logger('server'),
    });
  } catch (err) {
    stopPodStarts();
    orchClient?.close();
    await podConfig.stop();
    await syncLoop.stop();
    await pleg.stop();
    await workers.stop();
    await prober.stop();
    await late.apiMode?.stop();
    await api?.close();
    cri.close();
    throw err;
  }
  // ---- end of the servers ----

  log.info('nodeagent running', { node: name, pods: c.staticPodPath === '' ? undefined : c.staticPodPath, url: c.staticPodURL === '' ? undefined : c.staticPodURL });

  return {
    nodeName: name, status, syncLoop, podConfig, runtime, pleg, healthChecks, servers, metrics,
    async stop() {
      await podConfig.stop();
      await syncLoop.stop();
      await pleg.stop();
      await workers.stop();
      await prober.stop();
      stopPodStarts();
      await servers.close();
      await late.apiMode?.stop();
      await api?.close();
      orchClient?.close();
      cri.close();
    },
  };
}
