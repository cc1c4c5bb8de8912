/**
 * Part of nodeagent's composition root: builds the agent's modules from the resolved
 * configuration, in the order they depend on each other, and wires them (the only place that
 * knows them all). `startAgent` returns once the agent runs; `stop()` stops it in the reverse
 * order and leaves the containers running (a restarted agent adopts them), as upstream's agent
 * does.
 */
import { availableParallelism } from 'node:os';
import type { Clock } from '../api/clock.js';
import { Disposers } from '../api/disposers.js';
import { durationToMs } from '../api/duration.js';
import { API_SOURCE } from '../api/pod/index.js';
import { createSignal } from '../api/signal.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { HealthChecks } from '../agent/health/index.js';
import { createUserNamespaceAdmission, sysctlAdmission } from '../agent/kuberuntime/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { createPodWorkers } from '../agent/podworkers/index.js';
import { createAgentMetrics, createStatsProvider, createVolumeStatsCache, criRuntimeCounts, recordPodStarts, startServers } from '../agent/server/index.js';
import { createPodManager, podCapacity } from '../agent/syncloop/index.js';
import { createNodeCleanup } from './agent-cleanup.js';
import { startDeviceServices } from './agent-devices.js';
import { CSI_PLUGIN_TYPE } from '../agent/pluginmanager/index.js';
import { createEviction } from './agent-eviction.js';
import { buildNode, nodeIdentity } from './agent-node.js';
import { nodeShutdown } from './agent-shutdown.js';
import { containerdPlegEvents, wireSyncLoop } from './agent-syncloop.js';
import { startAgentTracing } from './agent-tracing.js';

export { buildNode, type NodeModules } from './agent-node.js';

export interface Agent {
  /**
   * Stops the agent's loops and servers; the containers keep running. A step that takes longer
   * than STOP_STEP_MS is logged by name and left behind, so that stopping always ends.
   */
  stop(): Promise<void>;
}

/** How long one teardown step may take before the agent stops waiting for it. */
const STOP_STEP_MS = 10_000;

/** Starts the agent on `clock`, the one clock every module reads (nodeagent.ts passes the host's). */
export async function startAgent(resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock): Promise<Agent> {
  const disposers = new Disposers();
  try {
    await compose(resolved, logs, clock, disposers);
  } catch (err) {
    await disposers.dispose().catch((e: unknown) => {
      logs.logger('agent').error('Stopping what had started failed', { err: String(e) });
    });
    throw err;
  }
  const log = logs.logger('agent');
  return {
    stop: () => disposers.dispose({
      clock, stepMs: STOP_STEP_MS,
      onOverdue: (name) => { log.warn(`Stopping ${name} did not finish within ${STOP_STEP_MS / 1000} s; going on without it`); },
    }),
  };
}

/** Builds and starts every module, pushing the teardown of each onto `disposers` as it goes. */
async function compose(resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock, disposers: Disposers): Promise<void> {
  const c = resolved.config;
  const identity = await nodeIdentity(resolved);
  // Tracing first and stopped last: its provider exports the spans of everything stopping before it.
  const tracing = await startAgentTracing(resolved, logs, clock);
  if (tracing !== undefined) disposers.push(() => tracing.provider.shutdown(), 'tracing');
  // API-server mode (--orchconfig): its modules are loaded only then, so that a standalone agent
  // holds none of their code. Bootstrap, the REST client and the event recorder come first.
  const apiModules = resolved.options.orchconfig === '' ? undefined : await import('./agent-api.js');
  const api = apiModules === undefined ? undefined : await apiModules.connectApi(resolved, logs, identity, clock, tracing?.tracer('orchclient'));
  if (api !== undefined) disposers.push(() => api.close(), 'the API-server connection');

  // In API-server mode the pod manager registers the desired pods with the ConfigMap and Secret manager.
  const pods = createPodManager({ registrar: api?.objects });
  // The node's allocatable for in-place resize, once API-server mode (made below) knows the Node.
  let allocatable: (() => { readonly cpuMilli: number; readonly memoryBytes: number } | undefined) | undefined;
  const node = await buildNode(resolved, logs, { identity, clock, desired: pods, api, tracing, allocatable: () => allocatable?.() });
  const { cri, status, podConfig, prober } = node;
  disposers.push(() => { cri.close(); }, 'the CRI connection');
  disposers.push(() => { node.flex.drivers.stop(); }, 'the FlexVolume driver watch');
  disposers.push(() => prober.stop(), 'the probes');
  const health = new HealthChecks([
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
  ]);

  const workers = createPodWorkers({ clock, syncer: node.syncer, logger: logs.logger('podworkers'), resyncIntervalMs: durationToMs(c.syncFrequency) });
  disposers.push(() => workers.stop(), 'the pod workers');
  const metrics = createAgentMetrics({ nodeName: identity.name, runtimeCounts: () => criRuntimeCounts(cri), probeRegistry: node.proberMetrics.registry });
  // The pods' volume stats (every volumeStatsAggPeriod) and the stats snapshots the servers and the eviction manager share.
  const volumeStats = createVolumeStatsCache({
    rootDir: resolved.options.rootDir, pods: () => pods.pods(), periodMs: durationToMs(c.volumeStatsAggPeriod), clock, logger: logs.logger('stats'),
    ...(api === undefined ? {} : { csi: (uid: string) => api.csi.mounter.podVolumeStats(uid) }),
  });
  volumeStats.start();
  disposers.push(() => volumeStats.stop(), 'the volume stats');
  const stats = createStatsProvider({ cri, rootDir: resolved.options.rootDir, podLogsRoot: c.podLogsDir, clock, logger: logs.logger('stats'), volumes: volumeStats });

  const nodeEvent = api?.nodeEvent.bind(api);
  // Raised by graceful node shutdown and the eviction manager, heard by the node status (API-server mode).
  const nodeStatusChanges = createSignal();
  // Graceful node shutdown: its kills go through the workers; while it runs the node is NotReady.
  const shutdown = nodeShutdown({
    resolved, logs, clock, env: process.env, pods, workers, nodeEvent, podEvent: api?.podEvent.bind(api),
    nodeStatusChanged: () => { nodeStatusChanges.notify(); },
  });
  // Garbage collection and log rotation (src/cmd/agent-cleanup.ts), started once the loops run;
  // the eviction manager reclaims through them.
  const cleanup = createNodeCleanup({
    resolved, logs, clock, cri, env: process.env, registry: metrics.registry,
    sourcesReady: () => podConfig.sourcesReady(),
    isRemovable: (uid) => !pods.isDesired(uid) && workers.stateOf(uid) === undefined,
    isTerminated: (uid) => workers.stateOf(uid) === undefined,
    podChanged: (uid) => { node.podCache.invalidate(uid); },
    onEvent: nodeEvent === undefined ? undefined : (e) => { nodeEvent(e.type, e.reason, e.message); },
  });
  // The eviction manager: its kills carry the Evicted failure through the workers.
  const eviction = await createEviction({
    resolved, logs, clock, cri, pods, workers, registry: metrics.registry, reclaim: cleanup,
    podStats: async (maxAgeMs) => (await stats.snapshot(maxAgeMs)).pods,
    onNodeEvent: api === undefined ? undefined : (e) => { api.nodeEvent(e.type, e.reason, e.message); },
    onPodEvent: api === undefined ? undefined : (pod, e) => { api.podEvent({ ...e, pod }); },
    onPressureChange: () => { nodeStatusChanges.notify(); },
  });
  const apiMode = api === undefined || apiModules === undefined ? undefined : apiModules.createApiMode({
    resolved, logs, api, identity, clock, cri, status, pods, health, nodeStatusChanges,
    pressure: () => eviction.pressure(), nodeProblem: () => shutdown?.problem(),
    pushPods: (apiPods) => { podConfig.pushSnapshot(API_SOURCE, apiPods); },
    devices: node.devices.node,
  });

  if (apiMode !== undefined) allocatable = () => apiMode.allocatable();
  const shutdownAdmit = shutdown === undefined ? [] : [shutdown.admit.bind(shutdown)];
  // EventedPLEG: containerd's task events drive the PLEG, the relist is the safety net.
  const plegEvents = resolved.gates.enabled('EventedPLEG') ? containerdPlegEvents(c.containerRuntimeEndpoint, cri, clock) : undefined;
  if (plegEvents !== undefined) disposers.push(() => { plegEvents.close(); }, "the runtime's event stream");
  const { syncLoop, pleg } = wireSyncLoop({
    clock, logs, prober, health, podCache: node.podCache, events: plegEvents,
    runtime: { listPodSandbox: () => cri.listPodSandbox(), listContainers: () => cri.listContainers() },
    loop: {
      podConfig, workers, pods, runtime: node.runtime, volumes: node.volumes, cgroups: node.cgroups, status,
      podCapacity: podCapacity(c.maxPods, c.podsPerCore, availableParallelism()),
      // upstream's order: the eviction manager's, sysctls, the resource managers' allocation, the API-server mode's checks, then node shutdown's.
      admit: [
        eviction.admit, (pod) => sysctlAdmission(pod, c.allowedUnsafeSysctls),
        createUserNamespaceAdmission({ gate: resolved.gates.enabled('UserNamespacesStatelessPodsSupport'), runtime: cri }),
        (pod, admitted) => node.containerManager.admit(pod, admitted),
        ...(apiMode?.admitHandlers ?? []), ...shutdownAdmit,
      ],
    },
    podEvent: api?.podEvent.bind(api),
    podFinished: apiMode === undefined ? undefined : (pod) => { apiMode.podFinished(pod); },
  });

  // Node allocatable, the resource managers' state and the system cgroups before any pod is admitted.
  await node.containerManager.start({ activePods: () => syncLoop.activePods(), sourcesReady: () => podConfig.sourcesReady() });
  disposers.push(() => node.containerManager.stop(), 'the container manager');
  // The plugin watcher and the pod resources API (src/cmd/agent-devices.ts).
  const deviceServices = await startDeviceServices({ resolved, logs, clock, devices: node.devices, pods: () => pods.pods(), assignments: () => node.containerManager.assignments(),
    ...(api === undefined ? {} : { handlers: new Map([[CSI_PLUGIN_TYPE, api.csi.handler]]) }) });
  disposers.push(() => deviceServices.stop(), 'the plugin watcher and pod resources API');
  // A resize deferred for want of room is tried again when a pod leaves the node.
  const resize = node.resize;
  if (resize !== undefined) disposers.push(syncLoop.onPodFinished(() => { for (const uid of resize.deferred()) syncLoop.podChanged(uid); }), 'deferred resize retries');
  syncLoop.start();
  disposers.push(() => syncLoop.stop(), 'the sync loop');
  if (shutdown !== undefined) {
    const manager = shutdown;
    await manager.start();
    disposers.push(() => manager.stop(), 'graceful node shutdown');
  }
  pleg.start();
  disposers.push(() => pleg.stop(), 'the PLEG');
  await podConfig.start();
  disposers.push(() => podConfig.stop(), 'the pod sources');
  if (apiMode !== undefined) {
    apiMode.start();
    disposers.push(() => apiMode.stop(), 'API-server mode');
  }

  // The servers (src/agent/server): secure (TLS, authn, authz), read-only and health.
  disposers.push(recordPodStarts(status, { desiredPods: () => pods.pods() }, (seconds) => { metrics.observePodStartDuration(seconds); }, clock), 'the pod start metric');

  // Garbage collection and log rotation, in the background, then the eviction manager, which reclaims through them.
  cleanup.start();
  disposers.push(() => cleanup.stop(), 'garbage collection and log rotation');
  eviction.start();
  disposers.push(() => eviction.stop(), 'the eviction manager');
  const servers = await startServers({
    config: c,
    certDir: resolved.options.certDir,
    rootDir: resolved.options.rootDir,
    nodeName: identity.name,
    nodeIPs: identity.ips,
    ...(api === undefined ? {} : { orchClient: api.reviews }),
    ...(api?.servingCertificates === undefined ? {} : { servingCertificates: api.servingCertificates }),
    pods: { desiredPods: () => pods.pods(), podStatus: (uid) => status.getPodStatus(uid) },
    cri,
    healthChecks: health.all(),
    logs,
    gates: resolved.gates,
    metrics,
    stats,
    logger: logs.logger('server'),
    clock,
  });
  disposers.push(() => servers.close(), 'the servers');

  logs.logger('agent').info('nodeagent running', {
    node: identity.name,
    ...(c.staticPodPath === '' ? {} : { pods: c.staticPodPath }),
    ...(c.staticPodURL === '' ? {} : { url: c.staticPodURL }),
  });
}
