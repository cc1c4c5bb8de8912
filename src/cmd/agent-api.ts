/**
 * Part of nodeagent's composition root: API-server mode (--orchconfig, with
 * --bootstrap-orchconfig). `connectApi` runs before the node's modules are built: TLS bootstrap,
 * the REST client (orchAPIQPS/orchAPIBurst, contentType), client-certificate rotation, the
 * event recorder, the object manager (ConfigMaps and Secrets of volumes, env and pulls), the
 * token manager (projected service account tokens), and the client of the servers' token and
 * access reviews. `createApiMode` builds, before the sync loop, what runs against the API server
 * (node registration and status, the lease, the pod watch, the status writer, mirror pods) and
 * the admission checks that read the Node; `start` starts it once the loops run. Without
 * --orchconfig none of this is loaded (standalone mode).
 */
import type { Clock } from '../api/clock.js';
import { durationToMs } from '../api/duration.js';
import type { Tracer } from '../api/tracing/index.js';
import type { Signal } from '../api/signal.js';
import { resourceAmount, type NodePod } from '../api/pod/index.js';
import {
  apiAdmitHandlers, createApiPodSource, createMirrorPods, createStatusWriter, pullCredentials, type ApiPodSource, type MirrorPods, type StatusWriter,
} from '../agent/apipods/index.js';
import {
  bootstrapClientCertificate, createClientCertificateManager, createServingCertificateManager, type CertificateManager,
} from '../agent/certificate/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import { createEventRecorder, nodeReference, recordPodEvent, type EventRecorder, type EventReference } from '../agent/events/index.js';
import type { HealthChecks } from '../agent/health/index.js';
import type { LogRoot, Logger } from '../agent/logging/index.js';
import { createCsiApi, createCsiDrivers, createCsiMounter, createNodeInfoPublisher, csiTimeoutFromEnv, type CsiMounter } from '../agent/csi/index.js';
import type { PluginHandler } from '../agent/pluginmanager/index.js';
import {
  createLeaseController, createNodeStatusController, goArch, runtimeNodeFacts, type LeaseController, type MachineInfo, type NodePressure,
  type NodeStatusController, type RuntimeFactsSource,
} from '../agent/nodestatus/index.js';
import {
  createOrchClient, createRestClient, loadOrchconfig, swappableRestClient, type OrchClient, type OrchConnection, type RestClient,
} from '../agent/orchclient/index.js';
import type { PodEvent } from '../agent/prober/index.js';
import type { ServingCertificateSource } from '../agent/server/index.js';
import { podCidrFollower } from '../agent/kuberuntime/index.js';
import type { CriClient } from '../agent/runtime/cri/index.js';
import type { StatusManager } from '../agent/status/index.js';
import type { AdmitHandler, DesiredPods } from '../agent/syncloop/index.js';
import {
  createClaimSource, createObjectManager, createSecretReader, createTokenManager, type ChangeDetectionStrategy, type ObjectManager, type PersistentVolumeSource,
  type ServiceAccountTokenSource, type VolumeObjectSource,
} from '../agent/volumes/index.js';
import type { NodeIdentity } from './agent-node.js';
import { nodeStatusReservation } from './agent-cm.js';
import { deviceNodeFacts } from './agent-devices.js';
import type { DeviceNodeFacts } from '../agent/cm/index.js';

/** The server's own request timeout (upstream's --request-timeout default): a request's longest wait for an answer. */
const MAIN_CLIENT_TIMEOUT_MS = 60_000;

export interface ApiConnection {
  readonly rest: RestClient;
  /** The node status and lease's client (upstream's heartbeat client): connections and a rate bucket of its own. */
  readonly heartbeat: RestClient;
  readonly recorder: EventRecorder;
  /** The ConfigMaps and Secrets of volumes, env and pull credentials (configMapAndSecretChangeDetectionStrategy); the pod manager registers the desired pods with it. */
  readonly objects: ObjectManager;
  readonly claims: PersistentVolumeSource;
  /** Secrets read with a GET each, as volume plugins read theirs (FlexVolume secretRef). */
  readonly secretReader: Pick<VolumeObjectSource, 'secret'>;
  /** CSI drivers: the plugin watcher's CSIPlugin handler and the volume manager's CSI plugin. */
  readonly csi: { readonly handler: PluginHandler; readonly mounter: CsiMounter };
  /** The service account tokens of projected volumes. */
  readonly tokens: ServiceAccountTokenSource;
  readonly pullCredentials: ReturnType<typeof pullCredentials>;
  /** Records a pod event the node's modules decided. */
  podEvent(event: PodEvent): void;
  /** Records an event on the Node (garbage collection failures). */
  nodeEvent(type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** serverTLSBootstrap (without tlsCertFile/tlsPrivateKeyFile): the serving certificate the secure server presents. */
  readonly servingCertificates?: ServingCertificateSource;
  /** The plain client of --orchconfig: the secure server's token and access reviews. */
  readonly reviews: OrchClient;
  close(): Promise<void>;
}

/**
 * `loaded`: --orchconfig as already read (`nodeagent simulate` reads it once for all its nodes);
 * read here when absent, and always after a bootstrap (which writes it).
 */
export async function connectApi(resolved: ResolvedConfiguration, logs: LogRoot, identity: NodeIdentity, clock: Clock, tracer?: Tracer, loaded?: OrchConnection): Promise<ApiConnection> {
  const nodeName = identity.name;
  const c = resolved.config;
  const o = resolved.options;
  const log = logs.logger('orchclient');
  // As upstream's kubelet: the main client waits for an answer as long as the server may take to
  // give one (its 60 s request timeout), so an overloaded server's queues are not answered by
  // the same requests again; the heartbeat (node status, lease) has a client of its own whose
  // timeout is the status update period or the lease duration, whichever is shorter.
  const heartbeatTimeoutMs = Math.min(durationToMs(c.nodeStatusUpdateFrequency), c.nodeLeaseDurationSeconds * 1000);
  const clientFor = (connection: OrchConnection, heartbeat = false): RestClient => createRestClient({
    clock, connection, qps: c.orchAPIQPS, burst: c.orchAPIBurst, contentType: c.contentType, logger: log, ...(tracer === undefined ? {} : { tracer }),
    timeoutMs: heartbeat ? heartbeatTimeoutMs : MAIN_CLIENT_TIMEOUT_MS,
  });
  if (o.bootstrapOrchconfig !== '') {
    await bootstrapClientCertificate({
      orchconfigPath: o.orchconfig, bootstrapOrchconfigPath: o.bootstrapOrchconfig, certDir: o.certDir, nodeName,
      logger: logs.logger('certificate'), createClient: clientFor, clock,
    });
  }
  const connection = loaded !== undefined && o.bootstrapOrchconfig === '' ? loaded : await loadOrchconfig(o.orchconfig);
  const swappable = swappableRestClient(clientFor(connection), clock);
  const swappableHeartbeat = swappableRestClient(clientFor(connection, true), clock);
  const rest = swappable.rest;
  let rotation: CertificateManager | undefined;
  if (c.rotateCertificates && connection.clientCert !== undefined) {
    rotation = createClientCertificateManager({
      certDir: o.certDir, nodeName, orchconfigPath: o.orchconfig,
      ...(o.bootstrapOrchconfig === '' ? {} : { bootstrapOrchconfigPath: o.bootstrapOrchconfig }),
      createClient: clientFor, logger: logs.logger('certificate'), clock,
      onRotated: () => {
        void loadOrchconfig(o.orchconfig).then((next) => {
          swappable.swap(clientFor(next));
          swappableHeartbeat.swap(clientFor(next, true));
        }, (err: unknown) => {
          log.error('Cannot reload --orchconfig after a certificate rotation', { err: String(err) });
        });
      },
    });
    await rotation.start();
  }
  const serving = c.serverTLSBootstrap && c.tlsCertFile === '' && c.tlsPrivateKeyFile === ''
    ? await servingManager(resolved, logs, identity, clientFor, clock) : undefined;
  const recorder = createEventRecorder({
    rest, reportingInstance: nodeName, qps: c.eventRecordQPS, burst: c.eventBurst, logger: logs.logger('events'), clock,
    // The modules log their events already; the recorder's own line is verbose.
    logVerbosity: 3,
  });
  // The Cache strategy's TTL is the Node's ttl annotation once the node status controller reads the Node (createApiMode).
  const objects = createObjectManager({
    rest, clock, logger: logs.logger('volumes'), strategy: c.configMapAndSecretChangeDetectionStrategy as ChangeDetectionStrategy,
  });
  const reviews = createOrchClient({ connection, clock });
  return {
    rest,
    heartbeat: swappableHeartbeat.rest,
    recorder,
    objects,
    tokens: createTokenManager({ rest, clock, logger: logs.logger('volumes') }),
    claims: createClaimSource({ rest }),
    secretReader: createSecretReader({ rest }),
    csi: csiPlugin(rest, recorder, nodeName, o.rootDir, logs.logger('csi'), { clock, expandSecrets: resolved.gates.enabled('CSINodeExpandSecret') }),
    reviews,
    pullCredentials: pullCredentials((ns, name) => objects.secret(ns, name)),
    ...(serving === undefined ? {} : { servingCertificates: serving.source }),
    podEvent(e) {
      recordPodEvent(recorder, e);
    },
    nodeEvent(type, reason, message) {
      recorder.event(nodeReference(nodeName), type, reason, reason, message);
    },
    async close() {
      await objects.stop();
      await rotation?.stop();
      await serving?.manager.stop();
      await recorder.stop();
      reviews.close();
      rest.close();
      swappableHeartbeat.rest.close();
    },
  };
}

/** The CSI drivers registered through the plugin watcher, and their volumes' mounter. */
function csiPlugin(
  rest: RestClient, recorder: EventRecorder, nodeName: string, rootDir: string, logger: Logger, o: { readonly clock: Clock; readonly expandSecrets: boolean },
): ApiConnection['csi'] {
  const drivers = createCsiDrivers({ logger, publisher: createNodeInfoPublisher({ rest, nodeName }), callTimeoutMs: csiTimeoutFromEnv(process.env) });
  const events = (regarding: EventReference, type: 'Normal' | 'Warning', reason: string, message: string): void => { recorder.event(regarding, type, reason, reason, message); };
  return { handler: drivers.pluginHandler, mounter: createCsiMounter({ rootDir, nodeName, drivers, api: createCsiApi({ rest }), logger, events, ...o }) };
}

/** The serving certificate manager (started) for the node's addresses, and the source the secure server reads. */
async function servingManager(
  resolved: ResolvedConfiguration, logs: LogRoot, identity: NodeIdentity, createClient: (connection: OrchConnection) => RestClient, clock: Clock,
): Promise<{ manager: CertificateManager; source: ServingCertificateSource }> {
  const nodeName = identity.name;
  const o = resolved.options;
  const hostname = o.hostnameOverride === '' ? nodeName : o.hostnameOverride.trim().toLowerCase();
  // As the node status reports them: InternalIP for each node IP, then Hostname.
  const addresses = [...identity.ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: hostname }];
  const listeners = new Set<() => void>();
  const manager = createServingCertificateManager({
    certDir: o.certDir, nodeName, orchconfigPath: o.orchconfig, addresses: () => addresses, createClient,
    logger: logs.logger('certificate'), clock,
    onRotated: () => { for (const l of listeners) l(); },
  });
  await manager.start();
  return {
    manager,
    source: {
      current: () => manager.current(),
      onChange(listener) {
        listeners.add(listener);
        return () => { listeners.delete(listener); };
      },
    },
  };
}

export interface ApiModeDeps {
  readonly resolved: ResolvedConfiguration;
  readonly logs: LogRoot;
  readonly api: ApiConnection;
  readonly identity: NodeIdentity;
  readonly clock: Clock;
  /** The runtime's status and version, for the node's conditions and nodeInfo. */
  readonly cri: RuntimeFactsSource & Pick<CriClient, 'updateRuntimeConfig'>;
  readonly status: StatusManager;
  readonly pods: DesiredPods;
  /** Pushes the API pods into the pod config's `api` source. */
  readonly pushPods: (pods: readonly NodePod[]) => void;
  /** The agent's health checks: the first failing one makes the node not ready. */
  readonly health: HealthChecks;
  /** The eviction manager's pressure conditions. */
  readonly pressure: () => NodePressure;
  /** Something the node status reports changed (readiness, pressure): it is reported at once rather than at the next period. */
  readonly nodeStatusChanges?: Pick<Signal, 'subscribe'>;
  /** A problem that makes the node not ready besides the health checks (graceful node shutdown under way). */
  readonly nodeProblem?: () => string | undefined;
  /** The machine facts of the node status (default: read from this machine under rootDir). */
  readonly machine?: () => Promise<MachineInfo>;
  /** Device plugin resources: in the node status (reported at once when they change) and counted at admission. */
  readonly devices?: DeviceNodeFacts;
  /** The node status's volumesInUse (default: the CSI mounter's, read under rootDir). */
  readonly volumesInUse?: () => Promise<readonly string[]>;
}

export interface ApiMode {
  /** Upstream's admission checks that read the Node (name, affinity, NoExecute taints, host ports, resources). */
  readonly admitHandlers: readonly AdmitHandler[];
  /** Registers the node and starts its status and lease, the pod watch, the status writer and mirror pods. */
  start(): void;
  /** The pod has nothing left running on the node (the sync loop's onPodFinished). */
  podFinished(pod: NodePod): void;
  /** The node's allocatable CPU (millicores) and memory (bytes) as last written (undefined before registration). */
  allocatable(): { readonly cpuMilli: number; readonly memoryBytes: number } | undefined;
  stop(): Promise<void>;
}

export function createApiMode(d: ApiModeDeps): ApiMode {
  const c = d.resolved.config;
  const o = d.resolved.options;
  const { api, cri } = d;
  const nodeName = d.identity.name;
  const nodeLog = d.logs.logger('nodestatus');
  // The Node's spec.podCIDR reaches the runtime, as --pod-cidr does in standalone mode.
  const followPodCidr = podCidrFollower({ runtime: cri, logger: nodeLog });
  const nodeStatus: NodeStatusController = createNodeStatusController({
    client: api.heartbeat,
    identity: {
      nodeName,
      hostname: o.hostnameOverride === '' ? nodeName : o.hostnameOverride.trim().toLowerCase(),
      nodeLabels: o.nodeLabels,
      registerWithTaints: c.registerWithTaints,
      registerSchedulable: o.registerSchedulable,
      providerID: c.providerID,
      enableControllerAttachDetach: c.enableControllerAttachDetach,
      operatingSystem: process.platform === 'win32' ? 'windows' : process.platform,
      architecture: goArch(process.arch),
    },
    status: {
      nodeIPs: d.identity.ips,
      port: c.port,
      agentVersion: d.resolved.version,
      maxPods: c.maxPods,
      podsPerCore: c.podsPerCore,
      reservation: nodeStatusReservation(d.resolved),
      maxImages: c.nodeStatusMaxImages,
    },
    facts: {
      ...runtimeNodeFacts(cri, () => d.health.firstProblem() ?? d.nodeProblem?.()), pressure: d.pressure, ...(d.devices === undefined ? {} : deviceNodeFacts(d.devices)),
      volumesInUse: d.volumesInUse ?? (() => api.csi.mounter.volumesInUse()),
    },
    registerNode: c.registerNode,
    updateFrequencyMs: durationToMs(c.nodeStatusUpdateFrequency),
    reportFrequencyMs: durationToMs(c.nodeStatusReportFrequency),
    machineInfo: { rootDir: o.rootDir },
    ...(d.machine === undefined ? {} : { machine: d.machine }),
    clock: d.clock,
    logger: nodeLog,
    onEvent: (e) => { api.recorder.event(nodeReference(nodeName), e.type, e.reason, e.reason, e.message); },
    onNode: (node) => {
      void followPodCidr(node.spec?.podCIDR);
      api.objects.nodeChanged(node);
      api.csi.mounter.markVolumesReportedInUse(node.status?.volumesInUse ?? []);
    },
  });
  const lease: LeaseController = createLeaseController({
    client: api.heartbeat, nodeName, leaseDurationSeconds: c.nodeLeaseDurationSeconds,
    node: () => nodeStatus.node(), clock: d.clock, logger: nodeLog,
  });
  const podLog = d.logs.logger('apipods');
  const source: ApiPodSource = createApiPodSource({ rest: api.rest, clock: d.clock, nodeName, logger: podLog, push: d.pushPods });
  const writer: StatusWriter = createStatusWriter({
    rest: api.rest, status: d.status, logger: podLog, clock: d.clock,
    podOf: (uid) => d.pods.pod(uid),
    apiObjectOf: (pod) => source.apiObjectOf(pod),
  });
  const mirrors: MirrorPods = createMirrorPods({
    rest: api.rest, nodeName, logger: podLog, clock: d.clock,
    desiredPods: () => d.pods.pods(), mirrors: () => source.mirrors(),
    nodeUID: () => nodeStatus.node()?.metadata?.uid,
    onCreated: (uid) => { writer.requestWrite(uid); },
  });
  source.onMirrorsChanged(() => { mirrors.requestSync(); });
  const devices = d.devices;
  const unsubscribeDevices = devices?.onChange(() => { nodeStatus.requestUpdate(); });
  const unsubscribeChanges = d.nodeStatusChanges?.subscribe(() => { nodeStatus.requestUpdate(); });
  // A volume a pod wants, or one its teardown let go, is reported at once (the attach/detach controller waits on it).
  const unsubscribeVolumes = api.csi.mounter.onVolumesInUseChange(() => { nodeStatus.requestUpdate(); });
  return {
    admitHandlers: apiAdmitHandlers(() => nodeStatus.node(), devices === undefined ? undefined : () => devices.allocated(), {
      inPlacePodVerticalScaling: d.resolved.gates.enabled('InPlacePodVerticalScaling'), statusOf: (pod) => d.status.getPodStatus(pod.metadata?.uid ?? '') ?? pod.status,
    }),
    allocatable() {
      const allocatable = nodeStatus.node()?.status?.allocatable;
      if (allocatable === undefined) return undefined;
      return { cpuMilli: resourceAmount(allocatable.cpu, 'cpu'), memoryBytes: resourceAmount(allocatable.memory, 'memory') };
    },
    start() {
      api.recorder.event(nodeReference(nodeName), 'Normal', 'Starting', 'Starting', 'Starting nodeagent.');
      // Registration first (upstream registers before it lists pods), but in the background: the
      // pods already running keep running, and the watch starts at once.
      source.start();
      writer.start();
      void nodeStatus.start().then(() => {
        lease.start();
        mirrors.start();
      }, (err: unknown) => { nodeLog.error('Node registration stopped', { err: String(err) }); });
    },
    podFinished(pod) {
      writer.podFinished(pod);
      mirrors.podFinished(pod);
    },
    async stop() {
      unsubscribeDevices?.();
      unsubscribeChanges?.();
      unsubscribeVolumes();
      await source.stop();
      await mirrors.stop();
      await writer.stop();
      await lease.stop();
      await nodeStatus.stop();
    },
  };
}
