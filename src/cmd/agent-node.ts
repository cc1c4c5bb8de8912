/**
 * Part of nodeagent's composition root: the modules every mode of the agent uses (the daemon
 * and --runonce): the CRI client, the runtime manager with its pod status cache, the pod cgroups
 * and volumes, the prober, the status manager, the per-pod sync and the pod sources. Only
 * src/cmd knows them all.
 */
import path from 'node:path';
import type { Clock } from '../api/clock.js';
import { durationToMs } from '../api/duration.js';
import { readNodeCapacity } from '../api/node-capacity.js';
import { API_SOURCE, qosClass } from '../api/pod/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { loadCredentialProviders, pullKeyring } from '../agent/credentialprovider/index.js';
import { cgroupConfigOf, createPodCgroups, podCgroupParent, type ContainerManager, type DeviceManager } from '../agent/cm/index.js';
import { createPodStatusCache, createRuntimeManager, runtimeNetworkState, waitForRuntime, type PodRuntimeManager, type PodStatusCache } from '../agent/kuberuntime/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { nodeIPs, nodeName } from '../agent/nodeinfo/index.js';
import { createPodConfig, type PodConfig } from '../agent/podsource/index.js';
import { createPodSyncer, tracedPodSyncer } from '../agent/podsync/index.js';
import { createProberManager, createProberMetrics, type PodEvent, type ProberManager, type ProberMetrics } from '../agent/prober/index.js';
import { connectCri, type CriClient } from '../agent/runtime/cri/index.js';
import { createStatusManager, type StatusManager } from '../agent/status/index.js';
import { createResizeManager, POD_STATUS_MANAGER_STATE_FILE, type ResizeManager } from '../agent/resize/index.js';
import type { DesiredPods } from '../agent/syncloop/index.js';
import type { PodSyncer } from '../agent/podworkers/index.js';
import { createVolumeManager, type VolumeManager } from '../agent/volumes/index.js';
import type { ApiConnection } from './agent-api.js';
import { buildContainerManager } from './agent-cm.js';
import { buildDeviceManager } from './agent-devices.js';
import { startFlexVolumes, type FlexVolumes } from './agent-flex.js';
import type { AgentTracing } from './agent-tracing.js';

/** The modules every mode of the agent uses (the daemon and --runonce). */
export interface NodeModules {
  readonly nodeName: string;
  readonly nodeIPs: readonly string[];
  readonly cri: CriClient;
  readonly runtime: PodRuntimeManager;
  /** The runtime manager's pod statuses, vouched for by the daemon's PLEG. */
  readonly podCache: PodStatusCache;
  readonly status: StatusManager;
  readonly syncer: PodSyncer;
  readonly podConfig: PodConfig;
  readonly volumes: VolumeManager;
  readonly cgroups: ReturnType<typeof createPodCgroups>;
  /** Node allocatable, the resource managers and the system cgroups; the daemon starts it. */
  readonly containerManager: ContainerManager;
  /** Device plugins (started by the container manager). */
  readonly devices: DeviceManager;
  readonly prober: ProberManager;
  readonly proberMetrics: ProberMetrics;
  /** The FlexVolume drivers (probed and watched; the daemon stops them) and their mounter. */
  readonly flex: FlexVolumes;
  /** In-place pod resize (the InPlacePodVerticalScaling gate; absent when it is off). */
  readonly resize: ResizeManager | undefined;
}

/** The node's name and IPs (primary first), worked out once per start. */
export interface NodeIdentity {
  readonly name: string;
  readonly ips: readonly string[];
}

export async function nodeIdentity(resolved: ResolvedConfiguration): Promise<NodeIdentity> {
  return { name: nodeName(resolved.options.hostnameOverride), ips: await nodeIPs({ nodeIP: resolved.options.nodeIP }) };
}

export interface BuildNodeOptions {
  readonly identity: NodeIdentity;
  /** The agent's one clock. */
  readonly clock: Clock;
  /** The pods the sources want: a terminated pod still wanted keeps its stopped containers (see podsync). */
  readonly desired: Pick<DesiredPods, 'isDesired' | 'activePods'>;
  /** The node's allocatable CPU and memory as the API server has it (API-server mode; else the machine's capacity counts). */
  readonly allocatable?: () => { readonly cpuMilli: number; readonly memoryBytes: number } | undefined;
  /** API-server mode: object readers, pull credentials and the event recorder. */
  readonly api?: ApiConnection | undefined;
  /** Tracing, when configured (src/cmd/agent-tracing.ts). */
  readonly tracing?: AgentTracing | undefined;
}

/** Builds the modules; waits for the container runtime to answer first. */
export async function buildNode(resolved: ResolvedConfiguration, logs: LogRoot, options: BuildNodeOptions): Promise<NodeModules> {
  const c = resolved.config;
  const o = resolved.options;
  const log = logs.logger('agent');
  const { api, clock, tracing } = options;
  const { name, ips } = options.identity;
  log.info('Node identity', { node: name, ips });
  // Image credential provider plugins (checked before anything starts: a missing plugin stops the agent, as upstream).
  const credentialLog = logs.logger('credentialprovider');
  const credentialProviders = o.imageCredentialProviderConfig === '' ? undefined : await loadCredentialProviders({
    configPath: o.imageCredentialProviderConfig, binDir: o.imageCredentialProviderBinDir, clock, logger: credentialLog,
  });
  const cri = connectCri({
    runtimeEndpoint: c.containerRuntimeEndpoint,
    ...(c.imageServiceEndpoint === '' ? {} : { imageEndpoint: c.imageServiceEndpoint }),
    requestTimeoutMs: durationToMs(c.runtimeRequestTimeout),
    ...(tracing === undefined ? {} : { tracer: tracing.tracer('cri') }),
  });
  try {
    await waitForRuntime(cri, { endpoint: c.containerRuntimeEndpoint, logger: log, clock });
    if (c.podCIDR !== '' && o.orchconfig === '') {
      // Standalone mode: the pod CIDR comes from the configuration (upstream's --pod-cidr).
      await cri.updateRuntimeConfig({ networkConfig: { podCidr: c.podCIDR } });
      log.info('Pod CIDR handed to the runtime', { podCIDR: c.podCIDR });
    }
  } catch (err) {
    cri.close();
    throw err;
  }

  // The host's cgroups and topology, and the settings they cannot honour (refused here, in every mode).
  const devices = buildDeviceManager(resolved, logs, clock, cri);
  const containerManager = buildContainerManager(resolved, logs, clock, cri, api, devices.hints);
  let host;
  try {
    host = await containerManager.prepare();
  } catch (err) {
    cri.close();
    throw err;
  }
  const cgroupConfig = cgroupConfigOf(c);
  const cgroups = createPodCgroups({
    ...cgroupConfig,
    clock,
    logger: logs.logger('cm'),
    podPidsLimit: c.podPidsLimit,
    cpuCFSQuota: c.cpuCFSQuota,
    cpuCFSQuotaPeriodUs: Math.round(c.cpuCFSQuotaPeriod / 1000),
    ...(host.qosMemoryReserve === undefined ? {} : { qosMemoryReserve: host.qosMemoryReserve }),
  });
  const sidecarContainers = resolved.gates.enabled('SidecarContainers');
  const podHostIPs = resolved.gates.enabled('PodHostIPs');
  // Events are logged by the module that decided them; in API-server mode they are also recorded.
  const onEvent = api === undefined ? undefined : (event: PodEvent): void => { api.podEvent(event); };
  const proberMetrics = createProberMetrics();
  const prober = createProberManager({
    clock,
    exec: cri,
    logger: logs.logger('prober'),
    metrics: proberMetrics,
    sidecarContainers,
    ...(onEvent === undefined ? {} : { onEvent }),
  });
  // The machine's capacity, read once: what unset limits mean to the downward API and the OOM score.
  const capacity = readNodeCapacity();
  const flex = await startFlexVolumes(resolved, logs, { clock, nodeName: name, secrets: api?.secretReader });
  const volumes = createVolumeManager({
    rootDir: o.rootDir, clock, clusterDomain: c.clusterDomain, logger: logs.logger('volumes'), nodeCapacity: () => capacity, flex: flex.plugin,
    ...(api === undefined ? {} : { objects: api.objects, tokens: api.tokens, claims: api.claims, csi: api.csi.mounter }),
  });
  const podCache = createPodStatusCache({ clock });
  // InPlacePodVerticalScaling: the allocation checkpoint is read now (a damaged one stops the agent, naming the file).
  const resize = !resolved.gates.enabled('InPlacePodVerticalScaling') ? undefined : createResizeManager({
    statePath: path.join(o.rootDir, POD_STATUS_MANAGER_STATE_FILE),
    logger: logs.logger('resize'),
    allocatable: () => options.allocatable?.() ?? capacity,
    activePods: () => options.desired.activePods(),
    ...(onEvent === undefined ? {} : { onDecision: (pod, decision, message) => { onEvent({ type: 'Warning', reason: decision === 'Infeasible' ? 'ResizeInfeasible' : 'ResizeDeferred', message, pod }); } }),
  });
  const pullCredentials = pullKeyring({ secrets: api?.pullCredentials, providers: credentialProviders, logger: credentialLog, onEvent });
  const runtime = createRuntimeManager({
    clock,
    nodeCapacity: () => capacity,
    statusCache: podCache,
    runtime: cri,
    images: cri,
    logger: logs.logger('kuberuntime'),
    podLogsRoot: c.podLogsDir,
    cpuCFSQuota: c.cpuCFSQuota,
    cpuCFSQuotaPeriodNs: c.cpuCFSQuotaPeriod,
    dns: { clusterDNS: c.clusterDNS, clusterDomain: c.clusterDomain, resolvConf: c.resolvConf },
    hostIPs: () => ips,
    nodeName: name,
    volumes,
    // The sync made the cgroup already (podsync); here only its name is needed.
    cgroupParent: (pod) => Promise.resolve(podCgroupParent(pod, cgroupConfig)),
    serializeImagePulls: c.serializeImagePulls,
    ...(c.maxParallelImagePulls === null ? {} : { maxParallelImagePulls: c.maxParallelImagePulls }),
    registryPullQPS: c.registryPullQPS,
    registryBurst: c.registryBurst,
    probeResults: prober,
    ...(onEvent === undefined ? {} : { onEvent }),
    sidecarContainers,
    podHostIPs,
    seccompDefault: c.seccompDefault,
    seccompProfileRoot: path.join(o.rootDir, 'seccomp'),
    ...(pullCredentials === undefined ? {} : { pullCredentials }),
    ...(api === undefined ? {} : { envObjects: api.objects }),
    containerCpuset: (pod, container) => containerManager.cpuset(pod, container),
    devices: devices.containers,
    ...(host.memorySwap === undefined ? {} : { memorySwap: host.memorySwap }),
    tracer: tracing?.tracer('kuberuntime'),
    ...(resize === undefined ? {} : { inPlaceResize: resize }),
  });

  const status = createStatusManager();
  const network = runtimeNetworkState({ runtime: cri, clock });
  const untracedSyncer = createPodSyncer({
    runtime,
    cgroups,
    volumes,
    status,
    logger: logs.logger('podsync'),
    clock,
    hostIPs: () => ips,
    qosClass,
    isDesired: (uid) => options.desired.isDesired(uid),
    probes: prober,
    sidecarContainers,
    statusGates: { podReadyToStartContainers: resolved.gates.enabled('PodReadyToStartContainersCondition'), podHostIPs },
    ...(onEvent === undefined ? {} : { onEvent }),
    networkError: () => network.networkError(),
    ...(resize === undefined ? {} : { resize }),
  });
  const syncer = tracing === undefined ? untracedSyncer
    : tracedPodSyncer({ syncer: untracedSyncer, tracer: tracing.tracer('podsync'), parents: tracing.parents });
  const podConfig = createPodConfig({
    nodeName: name,
    staticPodPath: c.staticPodPath,
    fileCheckFrequencyMs: durationToMs(c.fileCheckFrequency),
    staticPodURL: c.staticPodURL,
    staticPodURLHeader: c.staticPodURLHeader,
    httpCheckFrequencyMs: durationToMs(c.httpCheckFrequency),
    logger: logs.logger('podsource'),
    clock,
    pushSources: api === undefined ? [] : [API_SOURCE],
    ...(tracing === undefined ? {} : { tracing: { tracer: tracing.tracer('podsource'), parents: tracing.parents } }),
  });
  return { nodeName: name, nodeIPs: ips, cri, runtime, podCache, status, syncer, podConfig, volumes, cgroups, containerManager, devices, prober, proberMetrics, flex, resize };
}
