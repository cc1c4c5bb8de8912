/**
 * The configuration-file types of nodeagent.config.orch.io/v1beta1 (upstream's
 * KubeletConfiguration of kubelet.config.k8s.io/v1beta1, renamed; docs/configuration.md),
 * declared once as schemas; the TypeScript types are derived from them. Defaults are the file's
 * defaults (upstream's SetDefaults_KubeletConfiguration); the few defaults that differ for a
 * start without --config are in defaults.ts.
 */
import {
  HOUR,
  MILLISECOND,
  MINUTE,
  SECOND,
  bool,
  boolMap,
  duration,
  float,
  int32,
  int64,
  list,
  nullableStruct,
  optionalInt32,
  optionalString,
  str,
  stringListMap,
  stringMap,
  strings,
  struct,
  timeOrDuration,
  uint32,
  type ObjectOf,
} from './schema.js';

export const GROUP_VERSION = 'nodeagent.config.orch.io/v1beta1';
export const CONFIGURATION_KIND = 'NodeagentConfiguration';
export const CREDENTIAL_PROVIDER_CONFIG_KIND = 'CredentialProviderConfig';

export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  'imagefs.available': '15%',
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
};

export const DEFAULT_CONTAINER_RUNTIME_ENDPOINT = 'unix:///run/containerd/containerd.sock';
/** Where the runtime writes pods' container logs (upstream's podLogsDir). */
export const DEFAULT_POD_LOGS_DIR = '/var/log/pods';

const z = { zeroIsUnset: true } as const;

export const loggingSchema = {
  format: str('text', { ...z, required: true }),
  flushFrequency: timeOrDuration(5 * SECOND, { ...z, required: true }),
  verbosity: uint32(0, { required: true }),
  vmodule: list({ filePattern: str(''), verbosity: uint32(0) }, { required: true }),
  options: struct(
    {
      json: struct(
        {
          splitStream: bool(false, { required: true }),
          infoBufferSize: str('0', { ...z, required: true }),
        },
        { required: true },
      ),
    },
    { required: true },
  ),
} as const;

export const tracingSchema = {
  endpoint: str(''),
  samplingRatePerMillion: optionalInt32(),
} as const;

export const configurationSchema = {
  enableServer: bool(true, { required: true }),
  staticPodPath: str(''),
  syncFrequency: duration(1 * MINUTE, z),
  fileCheckFrequency: duration(20 * SECOND, z),
  httpCheckFrequency: duration(20 * SECOND, z),
  staticPodURL: str(''),
  staticPodURLHeader: stringListMap(),
  address: str('0.0.0.0', z),
  port: int32(10250, z),
  readOnlyPort: int32(0),
  tlsCertFile: str(''),
  tlsPrivateKeyFile: str(''),
  tlsCipherSuites: strings(),
  tlsMinVersion: str(''),
  rotateCertificates: bool(false),
  serverTLSBootstrap: bool(false),
  authentication: struct({
    x509: struct({ clientCAFile: str('') }),
    webhook: struct({ enabled: bool(true), cacheTTL: duration(2 * MINUTE, z) }),
    anonymous: struct({ enabled: bool(false) }),
  }),
  authorization: struct({
    mode: str('Webhook', z),
    webhook: struct({
      cacheAuthorizedTTL: duration(5 * MINUTE, z),
      cacheUnauthorizedTTL: duration(30 * SECOND, z),
    }),
  }),
  registryPullQPS: int32(5),
  registryBurst: int32(10, z),
  eventRecordQPS: int32(50),
  eventBurst: int32(100, z),
  enableDebuggingHandlers: bool(true),
  enableContentionProfiling: bool(false),
  healthzPort: int32(10248),
  healthzBindAddress: str('127.0.0.1', z),
  oomScoreAdj: int32(-999),
  clusterDomain: str(''),
  clusterDNS: strings(),
  streamingConnectionIdleTimeout: duration(4 * HOUR, z),
  nodeStatusUpdateFrequency: duration(10 * SECOND, z),
  nodeStatusReportFrequency: duration(5 * MINUTE, z),
  nodeLeaseDurationSeconds: int32(40, z),
  imageMinimumGCAge: duration(2 * MINUTE, z),
  imageGCHighThresholdPercent: int32(85),
  imageGCLowThresholdPercent: int32(80),
  volumeStatsAggPeriod: duration(1 * MINUTE, z),
  nodeagentCgroups: str(''),
  systemCgroups: str(''),
  cgroupRoot: str(''),
  cgroupsPerQOS: bool(true),
  cgroupDriver: str('cgroupfs', z),
  cpuManagerPolicy: str('none', z),
  cpuManagerPolicyOptions: stringMap(),
  cpuManagerReconcilePeriod: duration(10 * SECOND, z),
  memoryManagerPolicy: str('None', z),
  topologyManagerPolicy: str('none', z),
  topologyManagerScope: str('container', z),
  topologyManagerPolicyOptions: stringMap(),
  qosReserved: stringMap(),
  runtimeRequestTimeout: duration(2 * MINUTE, z),
  hairpinMode: str('promiscuous-bridge', z),
  maxPods: int32(110, z),
  podCIDR: str(''),
  podPidsLimit: int64(-1),
  resolvConf: str('/etc/resolv.conf'),
  runOnce: bool(false),
  cpuCFSQuota: bool(true),
  cpuCFSQuotaPeriod: duration(100 * MILLISECOND),
  nodeStatusMaxImages: int32(50),
  maxOpenFiles: int64(1_000_000, z),
  contentType: str('application/vnd.orch.protobuf', z),
  orchAPIQPS: int32(50),
  orchAPIBurst: int32(100, z),
  serializeImagePulls: bool(true),
  maxParallelImagePulls: optionalInt32(),
  evictionHard: stringMap(DEFAULT_EVICTION_HARD),
  evictionSoft: stringMap(),
  evictionSoftGracePeriod: stringMap(),
  evictionPressureTransitionPeriod: duration(5 * MINUTE, z),
  evictionMaxPodGracePeriod: int32(0),
  evictionMinimumReclaim: stringMap(),
  podsPerCore: int32(0),
  enableControllerAttachDetach: bool(true),
  protectKernelDefaults: bool(false),
  makeIPTablesUtilChains: bool(true),
  iptablesMasqueradeBit: int32(14),
  iptablesDropBit: int32(15),
  featureGates: boolMap(),
  failSwapOn: bool(true),
  memorySwap: struct({ swapBehavior: str('') }),
  containerLogMaxSize: str('10Mi', z),
  containerLogMaxFiles: int32(5),
  containerLogMaxWorkers: int32(1),
  containerLogMonitorInterval: duration(10 * SECOND),
  configMapAndSecretChangeDetectionStrategy: str('Watch', z),
  systemReserved: stringMap(),
  orchReserved: stringMap(),
  reservedSystemCPUs: str('', { required: true }),
  showHiddenMetricsForVersion: str(''),
  systemReservedCgroup: str(''),
  orchReservedCgroup: str(''),
  enforceNodeAllocatable: strings(['pods']),
  allowedUnsafeSysctls: strings(),
  volumePluginDir: str('/usr/libexec/orch/nodeagent-plugins/volume/exec/', z),
  providerID: str(''),
  kernelMemcgNotification: bool(false),
  logging: struct(loggingSchema, { required: true }),
  enableSystemLogHandler: bool(true),
  enableSystemLogQuery: bool(false),
  shutdownGracePeriod: duration(0),
  shutdownGracePeriodCriticalPods: duration(0),
  shutdownGracePeriodByPodPriority: list({
    priority: int32(0, { required: true }),
    shutdownGracePeriodSeconds: int64(0, { required: true }),
  }),
  reservedMemory: list({
    numaNode: int32(0, { required: true }),
    limits: stringMap({}, { required: true }),
  }),
  enableProfilingHandler: bool(true),
  enableDebugFlagsHandler: bool(true),
  seccompDefault: bool(false),
  memoryThrottlingFactor: float(0.9),
  registerWithTaints: list({
    key: str('', { required: true }),
    value: str(''),
    effect: str('', { required: true }),
    // Decoded so that a taint that gives it is refused (validate.ts), not dropped as unknown.
    timeAdded: optionalString(),
  }),
  registerNode: bool(true),
  tracing: nullableStruct(tracingSchema),
  localStorageCapacityIsolation: bool(true),
  containerRuntimeEndpoint: str(DEFAULT_CONTAINER_RUNTIME_ENDPOINT, { ...z, required: true }),
  imageServiceEndpoint: str(''),
  podLogsDir: str(DEFAULT_POD_LOGS_DIR, z),
} as const;

/** The effective configuration: every field present, durations in nanoseconds. */
export type NodeagentConfiguration = ObjectOf<typeof configurationSchema>;
export type LoggingConfiguration = ObjectOf<typeof loggingSchema>;
export type TracingConfiguration = ObjectOf<typeof tracingSchema>;

export const credentialProviderSchema = {
  name: str('', { required: true }),
  matchImages: strings([], { required: true }),
  defaultCacheDuration: duration(0, { required: true }),
  apiVersion: str('', { required: true }),
  args: strings(),
  env: list({ name: str('', { required: true }), value: str('', { required: true }) }),
} as const;

export const credentialProviderConfigSchema = {
  providers: list(credentialProviderSchema, { required: true }),
} as const;

export type CredentialProvider = ObjectOf<typeof credentialProviderSchema>;
export type CredentialProviderConfig = ObjectOf<typeof credentialProviderConfigSchema>;
