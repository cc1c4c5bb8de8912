/**
 * Part of nodeagent's composition root: the modules every mode of the agent uses (the daemon
 * and --runonce): the CRI client, the runtime manager, the pod cgroups and volumes, the prober,
 * the status manager, the per-pod sync and the pod sources. Only src/cmd knows them all.
 */
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { durationToMs } from '../api/duration.js';
import { messageOf } from '../api/errors.js';
import { readNodeCapacity } from '../api/node-capacity.js';
import { API_SOURCE } from '../api/pod/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { createPodCgroups, podCgroupParent, qosClass } from '../agent/cm/index.js';
import { createPodStatusCache, createRuntimeManager, type PodRuntimeManager, type PodStatusCache } from '../agent/kuberuntime/index.js';
import type { LogRoot, Logger } from '../agent/logging/index.js';
import { nodeIPs, nodeName } from '../agent/nodeinfo/index.js';
import { createPodConfig, type PodConfig } from '../agent/podsource/index.js';
import { createPodSyncer } from '../agent/podsync/index.js';
import { createProberManager, createProberMetrics, type PodEvent, type ProberManager, type ProberMetrics } from '../agent/prober/index.js';
import { connectCri, type CriClient } from '../agent/runtime/cri/index.js';
import { createStatusManager, type StatusManager } from '../agent/status/index.js';
import { createVolumeManager, mountsFor, writeEtcHosts, containerDir, type PodVolumes } from '../agent/volumes/index.js';
import type { ApiConnection } from './agent-api.js';
import { realClock } from '../api/clock.js';

/** Waits until the runtime answers, logging (once per change of reason) while it does not. */
async function waitForRuntime(cri: CriClient, endpoint: string, log: Logger, signal?: AbortSignal): Promise<void> {
  let last = '';
  for (let attempt = 0; ; attempt++) {
    try {
      const v = await cri.version('v1');
      log.info('Container runtime ready', { endpoint, runtime: `${v.runtimeName} ${v.runtimeVersion}`, criVersion: v.runtimeApiVersion });
      return;
    } catch (err) {
      const reason = messageOf(err);
      if (reason !== last) log.error('Container runtime not ready; retrying', { endpoint, err: reason });
      last = reason;
    }
    if (signal?.aborted === true) throw new Error('stopped while waiting for the container runtime');
    await delay(Math.min(5000, 200 * 2 ** Math.min(attempt, 5)));
  }
}

/** The modules every mode of the agent uses (the daemon and --runonce). */
export interface NodeModules {
  readonly nodeName: string;
  readonly nodeIPs: readonly string[];
  readonly cri: CriClient;
  readonly runtime: PodRuntimeManager;
  /** The runtime manager's pod statuses, vouched for by the daemon's PLEG. */
  readonly statusCache: PodStatusCache;
  readonly status: StatusManager;
  readonly syncer: ReturnType<typeof createPodSyncer>;
  readonly podConfig: PodConfig;
  readonly volumes: ReturnType<typeof createVolumeManager>;
  readonly cgroups: ReturnType<typeof createPodCgroups>;
  readonly prober: ProberManager;
  readonly proberMetrics: ProberMetrics;
  readonly sidecarContainers: boolean;
  /** Set by the daemon: a probe result changed for this pod (sync it now). */
  readonly probeWake: { fn?: (podUID: string) => void };
  /** Set by the daemon: where pod events go once recorded (they are logged either way). */
  readonly events: { fn?: (event: PodEvent) => void };
}

/**
 * Builds the modules; waits for the container runtime to answer first. `isDesired` tells the
 * per-pod sync whether a terminated pod is still wanted (see podsync).
 */
/** The node's name and IPs (primary first), worked out once per start. */
export interface NodeIdentity {
  readonly name: string;
  readonly ips: readonly string[];
}

export async function nodeIdentity(resolved: ResolvedConfiguration): Promise<NodeIdentity> {
  return { name: nodeName(resolved.options.hostnameOverride), ips: await nodeIPs({ nodeIP: resolved.options.nodeIP }) };
}

export async function buildNode(
  resolved: ResolvedConfiguration, logs: LogRoot, isDesired: (uid: string) => boolean,
  extra: { readonly api?: ApiConnection | undefined; readonly identity?: NodeIdentity } = {},
): Promise<NodeModules> {
  const c = resolved.config;
  const o = resolved.options;
  const log = logs.logger('agent');
  const api = extra.api;
  const { name, ips } = extra.identity ?? (await nodeIdentity(resolved));
  log.info('Node identity', { node: name, ips });
  const cri = connectCri({
    runtimeEndpoint: c.containerRuntimeEndpoint,
    ...(c.imageServiceEndpoint === '' ? {} : { imageEndpoint: c.imageServiceEndpoint }),
    requestTimeoutMs: durationToMs(c.runtimeRequestTimeout),
  });
  await waitForRuntime(cri, c.containerRuntimeEndpoint, log);
  if (c.podCIDR !== '' && o.orchconfig === '') {
    // Standalone mode: the pod CIDR comes from the configuration (upstream's --pod-cidr).
    await cri.updateRuntimeConfig({ networkConfig: { podCidr: c.podCIDR } });
    log.info('Pod CIDR handed to the runtime', { podCIDR: c.podCIDR });
  }

  const cgroupConfig = { cgroupRoot: c.cgroupRoot, cgroupsPerQOS: c.cgroupsPerQOS, cgroupDriver: c.cgroupDriver === 'systemd' ? 'systemd' as const : 'cgroupfs' as const };
  const cgroups = createPodCgroups({
    ...cgroupConfig,
    logger: logs.logger('cm'),
    podPidsLimit: c.podPidsLimit,
    cpuCFSQuota: c.cpuCFSQuota,
    cpuCFSQuotaPeriodUs: Math.round(c.cpuCFSQuotaPeriod / 1000),
  });
  const sidecarContainers = resolved.gates.enabled('SidecarContainers');
  const events: NodeModules['events'] = {};
  const onEvent = (event: PodEvent): void => { events.fn?.(event); };
  const probeWake: NodeModules['probeWake'] = {};
  const proberMetrics = createProberMetrics();
  const prober = createProberManager({
    exec: cri,
    logger: logs.logger('prober'),
    clock: realClock,
    metrics: proberMetrics,
    sidecarContainers,
    onEvent,
    onResult: (change) => { probeWake.fn?.(change.podUID); },
  });
  // The machine's capacity, read once: what unset limits mean to the downward API.
  const capacity = readNodeCapacity();
  const volumes = createVolumeManager({ rootDir: o.rootDir, logger: logs.logger('volumes'), nodeCapacity: () => capacity, ...(api === undefined ? {} : { objects: api.objects }) });
  const prepared = new Map<string, PodVolumes>();
  const etcHosts = new Map<string, { sandbox: string; path: string | undefined }>();

  /** /etc/hosts of a pod's sandbox, written once per sandbox with the IPs the runtime manager read for it. */
  function etcHostsFor(pod: Pod, sandbox: { readonly id: string; readonly podIPs: readonly string[] }): string | undefined {
    if (pod.spec?.hostNetwork === true) return undefined;
    const uid = pod.metadata?.uid ?? '';
    const known = etcHosts.get(uid);
    if (known?.sandbox === sandbox.id) return known.path;
    const path = writeEtcHosts({ rootDir: o.rootDir, pod, podIPs: sandbox.podIPs, clusterDomain: c.clusterDomain });
    etcHosts.set(uid, { sandbox: sandbox.id, path });
    return path;
  }

  const statusCache = createPodStatusCache();
  const runtime = createRuntimeManager({
    clock: realClock,
    statusCache,
    runtime: cri,
    images: cri,
    logger: logs.logger('kuberuntime'),
    cpuCFSQuota: c.cpuCFSQuota,
    cpuCFSQuotaPeriodNs: c.cpuCFSQuotaPeriod,
    dns: { clusterDNS: c.clusterDNS, clusterDomain: c.clusterDomain, resolvConf: c.resolvConf },
    hostIPs: () => ips,
    nodeName: name,
    nodeCapacity: () => capacity,
    volumes: {
      async mountsFor(pod: Pod, container: Container, sandbox) {
        const uid = pod.metadata?.uid ?? '';
        const podVolumes = prepared.get(uid) ?? (await volumes.preparePodVolumes(pod));
        const hosts = etcHostsFor(pod, sandbox);
        return mountsFor(container, podVolumes, hosts === undefined ? {} : { etcHostsPath: hosts });
      },
      containerDir: (pod: Pod, container: Container) => containerDir(o.rootDir, pod.metadata?.uid ?? '', container.name),
    },
    // The sync made the cgroup already (podsync); here only its name is needed.
    cgroupParent: (pod) => Promise.resolve(podCgroupParent(pod, cgroupConfig)),
    serializeImagePulls: c.serializeImagePulls,
    ...(c.maxParallelImagePulls === null ? {} : { maxParallelImagePulls: c.maxParallelImagePulls }),
    registryPullQPS: c.registryPullQPS,
    registryBurst: c.registryBurst,
    probeResults: prober,
    onEvent,
    sidecarContainers,
    seccompDefault: c.seccompDefault,
    seccompProfileRoot: path.join(o.rootDir, 'seccomp'),
    ...(api === undefined ? {} : { pullCredentials: api.pullCredentials }),
  });

  const status = createStatusManager();
  const syncer = createPodSyncer({
    runtime,
    cgroups,
    volumes: {
      async preparePodVolumes(pod) {
        const v = await volumes.preparePodVolumes(pod);
        prepared.set(pod.metadata?.uid ?? '', v);
        return v;
      },
      async cleanupPodVolumes(uid) {
        prepared.delete(uid);
        etcHosts.delete(uid);
        await volumes.cleanupPodVolumes(uid);
      },
    },
    status,
    logger: logs.logger('podsync'),
    hostIPs: () => ips,
    qosClass,
    isDesired,
    probes: prober,
    sidecarContainers,
    onEvent,
  });
  const podConfig = createPodConfig({
    nodeName: name,
    staticPodPath: c.staticPodPath,
    fileCheckFrequencyMs: durationToMs(c.fileCheckFrequency),
    staticPodURL: c.staticPodURL,
    staticPodURLHeader: c.staticPodURLHeader,
    httpCheckFrequencyMs: durationToMs(c.httpCheckFrequency),
    logger: logs.logger('podsource'),
    pushSources: api === undefined ? [] : [API_SOURCE],
  });
  return { nodeName: name, nodeIPs: ips, cri, runtime, statusCache, status, syncer, podConfig, volumes, cgroups, prober, proberMetrics, sidecarContainers, probeWake, events };
}

