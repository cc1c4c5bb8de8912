/**
 * Part of nodeagent's composition root: builds the agent's modules from the resolved
 * configuration and wires them (the only place that knows them all). `startAgent` returns
 * once the agent runs; `stop()` stops the agent's loops and leaves the containers running
 * (a restarted agent adopts them), as upstream's agent does.
 */
import { availableParallelism } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { durationToMs } from '../api/duration.js';
import { messageOf } from '../api/errors.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { createPodCgroups, podCgroupParent, qosClass } from '../agent/cm/index.js';
import { POD_UID_LABEL, createRuntimeManager, type PodRuntimeManager } from '../agent/kuberuntime/index.js';
import type { LogRoot, Logger } from '../agent/logging/index.js';
import { nodeIPs, nodeName } from '../agent/nodeinfo/index.js';
import { createPleg, type Pleg } from '../agent/pleg/index.js';
import { createPodConfig, type PodConfig } from '../agent/podsource/index.js';
import { createPodSyncer } from '../agent/podsync/index.js';
import { createPodWorkers, type PodWorkers } from '../agent/podworkers/index.js';
import { connectCri, type CriClient } from '../agent/runtime/cri/index.js';
import { createOrchClient, loadOrchconfig, type OrchClient } from '../agent/orchclient/index.js';
import {
  createAgentMetrics, criRuntimeCounts, recordPodStarts, startServers, type AgentMetrics, type HealthCheck, type Servers,
} from '../agent/server/index.js';
import { createStatusManager, type StatusManager } from '../agent/status/index.js';
import { createSyncLoop, podCapacity, type SyncLoop } from '../agent/syncloop/index.js';
import { createVolumeManager, mountsFor, writeEtcHosts, containerDir, type PodVolumes } from '../agent/volumes/index.js';

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
  readonly cri: CriClient;
  readonly runtime: PodRuntimeManager;
  readonly status: StatusManager;
  readonly syncer: ReturnType<typeof createPodSyncer>;
  readonly podConfig: PodConfig;
  readonly volumes: ReturnType<typeof createVolumeManager>;
  readonly cgroups: ReturnType<typeof createPodCgroups>;
}

/**
 * Builds the modules; waits for the container runtime to answer first. `isDesired` tells the
 * per-pod sync whether a terminated pod is still wanted (see podsync).
 */
export async function buildNode(resolved: ResolvedConfiguration, logs: LogRoot, isDesired: (uid: string) => boolean): Promise<NodeModules> {
  const c = resolved.config;
  const o = resolved.options;
  const log = logs.logger('agent');
  const name = nodeName(o.hostnameOverride);
  const ips = await nodeIPs({ nodeIP: o.nodeIP });
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
  const cgroups = createPodCgroups({ ...cgroupConfig, logger: logs.logger('cm') });
  const volumes = createVolumeManager({ rootDir: o.rootDir, logger: logs.logger('volumes') });
  const prepared = new Map<string, PodVolumes>();
  const etcHosts = new Map<string, { sandbox: string; path: string | undefined }>();

  /** /etc/hosts of a pod's current sandbox, written once its IPs are known. */
  async function etcHostsFor(pod: Pod): Promise<string | undefined> {
    if (pod.spec?.hostNetwork === true) return undefined;
    const uid = pod.metadata?.uid ?? '';
    const sandboxes = await cri.listPodSandbox({ labelSelector: { [POD_UID_LABEL]: uid }, state: { state: 'SANDBOX_READY' } });
    const newest = [...sandboxes].sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)))[0];
    if (newest === undefined) return undefined;
    const known = etcHosts.get(uid);
    if (known?.sandbox === newest.id) return known.path;
    const status = await cri.podSandboxStatus({ podSandboxId: newest.id });
    const net = status.status?.network;
    const podIPs = net === null || net === undefined ? [] : [net.ip, ...net.additionalIps.map((a) => a.ip)].filter((ip) => ip !== '');
    const path = await writeEtcHosts({ rootDir: o.rootDir, pod, podIPs, clusterDomain: c.clusterDomain });
    etcHosts.set(uid, { sandbox: newest.id, path });
    return path;
  }

  const runtime = createRuntimeManager({
    runtime: cri,
    images: cri,
    logger: logs.logger('kuberuntime'),
    cpuCFSQuota: c.cpuCFSQuota,
    cpuCFSQuotaPeriodNs: c.cpuCFSQuotaPeriod,
    dns: { clusterDNS: c.clusterDNS, clusterDomain: c.clusterDomain, resolvConf: c.resolvConf },
    hostIPs: () => ips,
    nodeName: name,
    volumes: {
      async mountsFor(pod: Pod, container: Container) {
        const uid = pod.metadata?.uid ?? '';
        const podVolumes = prepared.get(uid) ?? (await volumes.preparePodVolumes(pod));
        const hosts = await etcHostsFor(pod);
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
  });
  const podConfig = createPodConfig({
    nodeName: name,
    staticPodPath: c.staticPodPath,
    fileCheckFrequencyMs: durationToMs(c.fileCheckFrequency),
    staticPodURL: c.staticPodURL,
    staticPodURLHeader: c.staticPodURLHeader,
    httpCheckFrequencyMs: durationToMs(c.httpCheckFrequency),
    logger: logs.logger('podsource'),
  });
  return { nodeName: name, cri, runtime, status, syncer, podConfig, volumes, cgroups };
}

export async function startAgent(resolved: ResolvedConfiguration, logs: LogRoot): Promise<Agent> {
  const c = resolved.config;
  const log = logs.logger('agent');
  // The sync loop and the workers refer to each other through these closures.
  const late: { loop?: SyncLoop } = {};
  const { nodeName: name, cri, runtime, status, syncer, podConfig, volumes, cgroups } = await buildNode(resolved, logs, (uid) => late.loop?.isDesired(uid) ?? false);
  const workers: PodWorkers = createPodWorkers({
    syncer,
    logger: logs.logger('podworkers'),
    resyncIntervalMs: durationToMs(c.syncFrequency),
    onFinished: (uid) => late.loop?.podFinished(uid),
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
  });
  late.loop = syncLoop;
  const pleg = createPleg({
    runtime: { listPodSandbox: () => cri.listPodSandbox(), listContainers: () => cri.listContainers() },
    logger: logs.logger('pleg'),
    onPodChanged: (uid) => { syncLoop.podChanged(uid); },
  });

  const started = Date.now();
  const healthChecks: HealthCheck[] = [
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
    {
      name: 'syncloop',
      check: () => {
        const p = pleg.health();
        if (!p.healthy) return p.message;
        const last = syncLoop.lastHousekeeping();
        const reference = last === 0 ? started : last;
        return Date.now() - reference > 3 * 60_000 ? `sync loop stalled: last housekeeping ${Math.round((Date.now() - reference) / 1000)}s ago` : undefined;
      },
    },
  ];
  syncLoop.start();
  pleg.start();
  await podConfig.start();

  // ---- The servers (src/agent/server): secure (TLS, authn, authz), read-only and health ----
  const metrics = createAgentMetrics({ nodeName: name, runtimeCounts: () => criRuntimeCounts(cri) });
  const stopPodStarts = recordPodStarts(status, syncLoop, (seconds) => { metrics.observePodStartDuration(seconds); });
  let orchClient: OrchClient | undefined;
  let servers: Servers;
  try {
    // The API server client of --orchconfig (for now only the servers' token and access reviews use it).
    orchClient = resolved.options.orchconfig === '' ? undefined : createOrchClient({ connection: await loadOrchconfig(resolved.options.orchconfig) });
    servers = await startServers({
      config: c,
      certDir: resolved.options.certDir,
      rootDir: resolved.options.rootDir,
      nodeName: name,
      nodeIPs: await nodeIPs({ nodeIP: resolved.options.nodeIP }),
      ...(orchClient === undefined ? {} : { orchClient }),
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
      stopPodStarts();
      await servers.close();
      orchClient?.close();
      cri.close();
    },
  };
}
