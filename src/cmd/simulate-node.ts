/**
 * Part of nodeagent's composition root: one simulated node (`nodeagent simulate`). It is the
 * agent of agent.ts in API-server mode with the node's parts swapped (src/agent/simulate): the
 * real REST client, event recorder, node registration and status, lease, pod source, admission,
 * sync loop, pod workers, pod sync, runtime manager, prober, PLEG and status writer, over an
 * in-memory runtime, without cgroups, volumes, servers, GC or log rotation.
 */
import { join } from 'node:path';
import type { Clock } from '../api/clock.js';
import { Disposers } from '../api/disposers.js';
import { durationToMs } from '../api/duration.js';
import { API_SOURCE, qosClass } from '../api/pod/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import type { OrchConnection } from '../agent/orchclient/index.js';
import { HealthChecks } from '../agent/health/index.js';
import { createPodStatusCache, createRuntimeManager } from '../agent/kuberuntime/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { createPodConfig } from '../agent/podsource/index.js';
import { createPodSyncer } from '../agent/podsync/index.js';
import { createPodWorkers } from '../agent/podworkers/index.js';
import { createProberManager, createProberMetrics } from '../agent/prober/index.js';
import { noCgroups, noVolumes, nodeCapacityOf, simulatedMachine, SimulatedRuntime, type SimulatedCapacity } from '../agent/simulate/index.js';
import { createStatusManager } from '../agent/status/index.js';
import { createPodManager } from '../agent/syncloop/index.js';
import { connectApi, createApiMode } from './agent-api.js';
import { wireSyncLoop } from './agent-syncloop.js';

const NO_PRESSURE = { memory: false, disk: false, pid: false } as const;
const NO_VOLUMES: readonly string[] = [];

export interface SimulatedNodeSpec {
  readonly name: string;
  readonly ip: string;
  /** --node-labels of this node. */
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: ResolvedConfiguration['config']['registerWithTaints'];
  readonly capacity: SimulatedCapacity;
  readonly maxPods: number;
  readonly sandboxDelayMs: number;
  readonly startDelayMs: number;
}

export interface SimulatedNode {
  readonly name: string;
  /** The node's runtime (pods and containers it holds). */
  readonly runtime: SimulatedRuntime;
  stop(): Promise<void>;
}

export interface SimulatedNodeDeps {
  /** The configuration every node shares (from the flags after `--`), made per node with its spec. */
  readonly base: ResolvedConfiguration;
  readonly logs: LogRoot;
  readonly clock: Clock;
  /** Where the nodes' pod log directories go (the runtime manager makes them). */
  readonly logsDir: string;
  /** --orchconfig, read once for every node (each node still makes its own clients and connections). */
  readonly connection: OrchConnection;
}

export async function startSimulatedNode(spec: SimulatedNodeSpec, deps: SimulatedNodeDeps): Promise<SimulatedNode> {
  const disposers = new Disposers();
  try {
    const runtime = await compose(spec, deps, disposers);
    return { name: spec.name, runtime, stop: () => disposers.dispose() };
  } catch (err) {
    await disposers.dispose();
    throw err;
  }
}

async function compose(spec: SimulatedNodeSpec, deps: SimulatedNodeDeps, disposers: Disposers): Promise<SimulatedRuntime> {
  const { logs, clock } = deps;
  const resolved: ResolvedConfiguration = {
    ...deps.base,
    options: { ...deps.base.options, hostnameOverride: spec.name, nodeLabels: { ...deps.base.options.nodeLabels, ...spec.labels } },
    config: { ...deps.base.config, registerWithTaints: spec.taints, maxPods: spec.maxPods },
  };
  const c = resolved.config;
  const identity = { name: spec.name, ips: [spec.ip] };
  const api = await connectApi(resolved, logs, identity, clock, undefined, deps.connection);
  disposers.push(() => api.close());

  const cri = new SimulatedRuntime({ clock, sandboxDelayMs: spec.sandboxDelayMs, startDelayMs: spec.startDelayMs });
  const onEvent = api.podEvent.bind(api);
  const prober = createProberManager({ clock, exec: cri, logger: logs.logger('prober'), metrics: createProberMetrics(), onEvent });
  disposers.push(() => prober.stop());
  const podCache = createPodStatusCache({ clock });
  const capacity = nodeCapacityOf(spec.capacity);
  const runtime = createRuntimeManager({
    clock, statusCache: podCache, runtime: cri, images: cri, logger: logs.logger('kuberuntime'),
    podLogsRoot: join(deps.logsDir, spec.name),
    dns: { clusterDNS: c.clusterDNS, clusterDomain: c.clusterDomain, resolvConf: '' },
    hostIPs: () => identity.ips, nodeName: spec.name, nodeCapacity: () => capacity,
    volumes: noVolumes, cgroupParent: () => Promise.resolve(''),
    serializeImagePulls: false, registryPullQPS: 0, probeResults: prober, onEvent, canLowerOomScore: () => true,
  });
  const pods = createPodManager({ registrar: api.objects });
  const status = createStatusManager();
  const syncer = createPodSyncer({
    runtime, cgroups: noCgroups, volumes: noVolumes, status, logger: logs.logger('podsync'), clock,
    hostIPs: () => identity.ips, qosClass, isDesired: (uid) => pods.isDesired(uid), probes: prober, onEvent,
  });
  const podConfig = createPodConfig({
    nodeName: spec.name, staticPodPath: '', fileCheckFrequencyMs: durationToMs(c.fileCheckFrequency), staticPodURL: '', staticPodURLHeader: {},
    httpCheckFrequencyMs: durationToMs(c.httpCheckFrequency), logger: logs.logger('podsource'), clock, pushSources: [API_SOURCE],
  });
  const workers = createPodWorkers({ clock, syncer, logger: logs.logger('podworkers'), resyncIntervalMs: durationToMs(c.syncFrequency) });
  disposers.push(() => workers.stop());
  const health = new HealthChecks([{ name: 'ping', check: () => undefined }]);
  const machine = simulatedMachine(spec.name, spec.capacity);
  const apiMode = createApiMode({
    resolved, logs, api, identity, clock, cri, status, pods, health,
    pushPods: (apiPods) => { podConfig.pushSnapshot(API_SOURCE, apiPods); },
    // No eviction manager: a simulated node is never under pressure.
    pressure: () => NO_PRESSURE,
    machine: () => Promise.resolve(machine),
    // Nothing is mounted (noVolumes): no read of the host's pod directories at each status update.
    volumesInUse: () => Promise.resolve(NO_VOLUMES),
  });
  const { syncLoop, pleg } = wireSyncLoop({
    clock, logs, prober, health, podCache,
    runtime: { listPodSandbox: () => cri.listPodSandbox(), listContainers: () => cri.listContainers() },
    loop: { podConfig, workers, pods, runtime, volumes: noVolumes, cgroups: noCgroups, status, podCapacity: c.maxPods, admit: [...apiMode.admitHandlers] },
    podEvent: onEvent,
    podFinished: (pod) => { apiMode.podFinished(pod); },
  });

  syncLoop.start();
  disposers.push(() => syncLoop.stop());
  pleg.start();
  disposers.push(() => pleg.stop());
  await podConfig.start();
  disposers.push(() => podConfig.stop());
  apiMode.start();
  disposers.push(() => apiMode.stop());
  return cri;
}
