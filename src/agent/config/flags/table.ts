/**
 * Every command-line flag of the kubelet of Kubernetes 1.28 (with the naming rule applied; the
 * table a test checks them against is testdata/flags.txt), with its type, the configuration
 * field or command-line-only option it sets, its deprecation, and the default that table states
 * (`specDefault`, checked against our defaults by a test). The defaults shown in --help are
 * computed from the effective defaults, so they cannot drift from what runs.
 */

/** How a flag's text is parsed (pflag/cliflag value types of upstream). */
export type FlagType =
  | 'string'
  | 'ip' // an IP address; empty leaves the value as it was (upstream's IPVar)
  | 'bool'
  | 'int32'
  | 'int'
  | 'int64'
  | 'duration'
  | 'strings' // comma-separated; repeats append
  | 'map' // k=v,k2=v2; repeats merge
  | 'langle-map' // signal<quantity,...; repeats merge
  | 'map-bool' // name=true|false,...; repeats merge
  | 'header-map' // name:value,...; repeatable; same names append in order
  | 'reserved-memory' // <numa>:<type>=<quantity>,...; repeatable; appends
  | 'taints' // key=value:Effect,...
  | 'vmodule' // pattern=N,...
  | 'level' // -v N
  | 'version' // --version[=true|false|raw|vX.Y.Z]
  | 'help';

export type Deprecation = { readonly kind: 'cfg' } | { readonly kind: 'rm'; readonly when: string };

/** Options that only the command line sets (upstream's KubeletFlags). */
export interface CommandLineOptions {
  bootstrapOrchconfig: string;
  certDir: string;
  cloudConfig: string;
  cloudProvider: string;
  config: string;
  configDir: string;
  exitOnLockContention: boolean;
  experimentalAllocatableIgnoreEviction: boolean;
  experimentalMounterPath: string;
  hostnameOverride: string;
  imageCredentialProviderBinDir: string;
  imageCredentialProviderConfig: string;
  keepTerminatedPodVolumes: boolean;
  orchconfig: string;
  lockFile: string;
  maximumDeadContainers: number;
  maximumDeadContainersPerContainer: number;
  /** Nanoseconds. */
  minimumContainerTTLDuration: number;
  nodeIP: string;
  nodeLabels: Record<string, string>;
  podInfraContainerImage: string;
  registerSchedulable: boolean;
  rootDir: string;
  runtimeCgroups: string;
  /** The version reported instead of the built-in one (--version=vX.Y.Z); '' when not set. */
  versionOverride: string;
}

export function defaultCommandLineOptions(): CommandLineOptions {
  return {
    bootstrapOrchconfig: '',
    certDir: '/var/lib/nodeagent/pki',
    cloudConfig: '',
    cloudProvider: '',
    config: '',
    configDir: '',
    exitOnLockContention: false,
    experimentalAllocatableIgnoreEviction: false,
    experimentalMounterPath: 'mount',
    hostnameOverride: '',
    imageCredentialProviderBinDir: '',
    imageCredentialProviderConfig: '',
    keepTerminatedPodVolumes: false,
    orchconfig: '',
    lockFile: '',
    maximumDeadContainers: -1,
    maximumDeadContainersPerContainer: 1,
    minimumContainerTTLDuration: 0,
    nodeIP: '',
    nodeLabels: {},
    podInfraContainerImage: 'registry.orch.io/pause:3.9',
    registerSchedulable: true,
    rootDir: '/var/lib/nodeagent',
    runtimeCgroups: '',
    versionOverride: '',
  };
}

export type FlagTarget =
  | { readonly field: string }
  | { readonly option: keyof CommandLineOptions }
  | { readonly action: 'help' | 'version' };

export interface FlagSpec {
  readonly name: string;
  readonly short?: string;
  readonly type: FlagType;
  readonly target: FlagTarget;
  readonly deprecation?: Deprecation;
  readonly usage: string;
  /** The default as the spec's table states it, when it is a value the flag parses. */
  readonly specDefault?: string;
}

const CFG: Deprecation = { kind: 'cfg' };
const rm = (when: string): Deprecation => ({ kind: 'rm', when });

function f(name: string, type: FlagType, field: string, usage: string, specDefault?: string, deprecation: Deprecation | null = CFG): FlagSpec {
  return {
    name, type, target: { field }, usage,
    ...(specDefault === undefined ? {} : { specDefault }),
    ...(deprecation === null ? {} : { deprecation }),
  };
}
function o(name: string, type: FlagType, option: keyof CommandLineOptions, usage: string, specDefault?: string, deprecation?: Deprecation): FlagSpec {
  return {
    name, type, target: { option }, usage,
    ...(specDefault === undefined ? {} : { specDefault }),
    ...(deprecation === undefined ? {} : { deprecation }),
  };
}

export const FLAGS: readonly FlagSpec[] = [
  f('address', 'ip', 'address', 'Address the server listens on; 0.0.0.0 or :: means all interfaces and IP families', '0.0.0.0'),
  f('allowed-unsafe-sysctls', 'strings', 'allowedUnsafeSysctls', 'Allow-list of unsafe sysctls or patterns ending in *'),
  f('anonymous-auth', 'bool', 'authentication.anonymous.enabled', 'Accept requests not rejected by other authenticators as anonymous (user system:anonymous, group system:unauthenticated)', 'true'),
  f('authentication-token-webhook', 'bool', 'authentication.webhook.enabled', 'Authenticate bearer tokens with the TokenReview API', 'false'),
  f('authentication-token-webhook-cache-ttl', 'duration', 'authentication.webhook.cacheTTL', 'Cache time of webhook token authenticator answers', '2m0s'),
  f('authorization-mode', 'string', 'authorization.mode', 'AlwaysAllow or Webhook (Webhook uses the SubjectAccessReview API)', 'AlwaysAllow'),
  f('authorization-webhook-cache-authorized-ttl', 'duration', 'authorization.webhook.cacheAuthorizedTTL', "Cache time of 'authorized' answers", '5m0s'),
  f('authorization-webhook-cache-unauthorized-ttl', 'duration', 'authorization.webhook.cacheUnauthorizedTTL', "Cache time of 'unauthorized' answers", '30s'),
  o('bootstrap-orchconfig', 'string', 'bootstrapOrchconfig', 'Path of a connection file used to obtain a client certificate when the file named by --orchconfig does not exist; on success a connection file referencing the generated client certificate and key is written to the --orchconfig path, and the certificate and key are stored in --cert-dir'),
  o('cert-dir', 'string', 'certDir', 'Directory of TLS certificates; ignored if both --tls-cert-file and --tls-private-key-file are given', '/var/lib/nodeagent/pki'),
  f('cgroup-driver', 'string', 'cgroupDriver', 'cgroupfs or systemd', 'cgroupfs'),
  f('cgroup-root', 'string', 'cgroupRoot', "Root cgroup for pods, best effort by the runtime; '' means runtime default", ''),
  f('cgroups-per-qos', 'bool', 'cgroupsPerQOS', 'Create the QoS cgroup hierarchy (top-level QoS and pod cgroups)', 'true'),
  f('client-ca-file', 'string', 'authentication.x509.clientCAFile', "Requests with a client certificate signed by an authority in this file are authenticated with the certificate's CommonName identity"),
  o('cloud-config', 'string', 'cloudConfig', 'Path of cloud-provider config; empty means none', undefined, rm('1.24 or later')),
  o('cloud-provider', 'string', 'cloudProvider', 'Cloud provider; empty means none; when set, the provider determines the node name', undefined, rm('1.24 or later')),
  f('cluster-dns', 'strings', 'clusterDNS', 'DNS server IPs for containers of pods with dnsPolicy ClusterFirst; all listed servers must serve the same records'),
  f('cluster-domain', 'string', 'clusterDomain', "Cluster domain added to containers' search domains"),
  o('config', 'string', 'config', 'Path (absolute or relative to the working directory) of the initial configuration file'),
  o('config-dir', 'string', 'configDir', 'Directory of drop-in *.conf files overriding the defaults and the --config file, merged in lexical order; also set through the environment variable NODEAGENT_CONFIG_DROPIN_DIR_ALPHA', ''),
  f('container-log-max-files', 'int32', 'containerLogMaxFiles', 'Beta. Max log files per container; must be >= 2', '5'),
  f('container-log-max-size', 'string', 'containerLogMaxSize', 'Beta. Size at which a container log file is rotated', '10Mi'),
  f('container-runtime-endpoint', 'string', 'containerRuntimeEndpoint', 'Runtime service endpoint: unix domain sockets on Linux (unix:///<path>)', undefined, null),
  f('contention-profiling', 'bool', 'enableContentionProfiling', 'Block profiling, when profiling is enabled', 'false'),
  f('cpu-cfs-quota', 'bool', 'cpuCFSQuota', 'Enforce CPU quota for containers with CPU limits', 'true'),
  f('cpu-cfs-quota-period', 'duration', 'cpuCFSQuotaPeriod', 'CPU quota period (cpu.cfs_period_us)', '100ms'),
  f('cpu-manager-policy', 'string', 'cpuManagerPolicy', 'none or static', 'none'),
  f('cpu-manager-policy-options', 'map', 'cpuManagerPolicyOptions', 'key=value options for the CPU manager policy'),
  f('cpu-manager-reconcile-period', 'duration', 'cpuManagerReconcilePeriod', 'Alpha. CPU manager reconciliation period', '10s'),
  f('enable-controller-attach-detach', 'bool', 'enableControllerAttachDetach', 'Attach/detach controller manages volumes; the agent performs no attach/detach', 'true'),
  f('enable-debugging-handlers', 'bool', 'enableDebuggingHandlers', 'Server endpoints for log collection and running containers and commands locally', 'true'),
  f('enable-server', 'bool', 'enableServer', "Enable the agent's server", 'true'),
  f('enforce-node-allocatable', 'strings', 'enforceNodeAllocatable', 'Levels: none, pods, system-reserved, orch-reserved. The last two require --system-reserved-cgroup and --orch-reserved-cgroup respectively; with none, nothing else may be set', 'pods'),
  f('event-burst', 'int32', 'eventBurst', 'Burst of event records; >= 0', '100'),
  f('event-qps', 'int32', 'eventRecordQPS', 'Event creations per second; >= 0', '50'),
  f('eviction-hard', 'langle-map', 'evictionHard', 'Thresholds that trigger pod eviction when met, e.g. memory.available<1Gi', 'imagefs.available<15%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%'),
  f('eviction-max-pod-grace-period', 'int32', 'evictionMaxPodGracePeriod', "Max grace period in seconds when terminating pods for a soft threshold; negative defers to the pod's own value", '0'),
  f('eviction-minimum-reclaim', 'map', 'evictionMinimumReclaim', 'Minimum amount reclaimed per resource under pressure, e.g. imagefs.available=2Gi'),
  f('eviction-pressure-transition-period', 'duration', 'evictionPressureTransitionPeriod', 'Wait before leaving an eviction pressure condition', '5m0s'),
  f('eviction-soft', 'langle-map', 'evictionSoft', 'Thresholds that trigger eviction when met for the matching grace period, e.g. memory.available<1.5Gi'),
  f('eviction-soft-grace-period', 'map', 'evictionSoftGracePeriod', 'Grace periods per soft signal, e.g. memory.available=1m30s'),
  o('exit-on-lock-contention', 'bool', 'exitOnLockContention', 'Exit on lock-file contention', 'false'),
  o('experimental-allocatable-ignore-eviction', 'bool', 'experimentalAllocatableIgnoreEviction', 'Ignore hard eviction thresholds when computing node allocatable', 'false', rm('1.24 or later')),
  o('experimental-mounter-path', 'string', 'experimentalMounterPath', 'Experimental. Path of the mounter binary', 'mount', rm('1.24 or later')),
  f('fail-swap-on', 'bool', 'failSwapOn', 'Refuse to start when swap is on', 'true'),
  f('feature-gates', 'map-bool', 'featureGates', 'Feature gates (key=true|false pairs); see the list below'),
  f('file-check-frequency', 'duration', 'fileCheckFrequency', 'Interval of checking config files', '20s'),
  f('hairpin-mode', 'string', 'hairpinMode', 'promiscuous-bridge, hairpin-veth, none', 'promiscuous-bridge'),
  f('healthz-bind-address', 'ip', 'healthzBindAddress', 'Address of the health server; 0.0.0.0 or :: for all', '127.0.0.1'),
  f('healthz-port', 'int32', 'healthzPort', 'Port of the local health endpoint; 0 disables', '10248'),
  { name: 'help', short: 'h', type: 'help', target: { action: 'help' }, usage: 'Print help' },
  o('hostname-override', 'string', 'hostnameOverride', 'Node identification used instead of the hostname'),
  f('http-check-frequency', 'duration', 'httpCheckFrequency', 'Interval of checking the HTTP source', '20s'),
  o('image-credential-provider-bin-dir', 'string', 'imageCredentialProviderBinDir', 'Directory of credential provider plugin binaries'),
  o('image-credential-provider-config', 'string', 'imageCredentialProviderConfig', 'Path of the credential provider config file'),
  f('image-gc-high-threshold', 'int32', 'imageGCHighThresholdPercent', 'Disk usage percent above which image garbage collection always runs; range [0,100]; 100 disables', '85'),
  f('image-gc-low-threshold', 'int32', 'imageGCLowThresholdPercent', 'Disk usage percent below which it never runs; range [0,100]; must be below the high threshold', '80'),
  f('image-service-endpoint', 'string', 'imageServiceEndpoint', 'Image service endpoint, same forms as the runtime endpoint; empty means the runtime endpoint', undefined, null),
  o('keep-terminated-pod-volumes', 'bool', 'keepTerminatedPodVolumes', 'Keep volumes of terminated pods mounted', 'false', rm('a later release')),
  f('kernel-memcg-notification', 'bool', 'kernelMemcgNotification', 'Use kernel memcg notification instead of polling for memory thresholds', 'false'),
  f('orch-api-burst', 'int32', 'orchAPIBurst', 'Burst toward the API server; >= 0', '100'),
  f('orch-api-content-type', 'string', 'contentType', 'Content type of requests to the API server', 'application/vnd.orch.protobuf'),
  f('orch-api-qps', 'int32', 'orchAPIQPS', 'QPS toward the API server; >= 0; excludes events and node heartbeats', '50'),
  f('orch-reserved', 'map', 'orchReserved', 'resource=quantity pairs reserved for system components of the cluster software; cpu, memory, ephemeral-storage, pid'),
  f('orch-reserved-cgroup', 'string', 'orchReservedCgroup', 'Absolute top-level cgroup for those components', ''),
  o('orchconfig', 'string', 'orchconfig', 'Connection file to the API server; given means API-server mode, omitted means standalone mode'),
  f('nodeagent-cgroups', 'string', 'nodeagentCgroups', 'Absolute cgroup name to run the agent in'),
  f('local-storage-capacity-isolation', 'bool', 'localStorageCapacityIsolation', 'Local ephemeral storage isolation', 'true'),
  o('lock-file', 'string', 'lockFile', 'Alpha. Lock file path'),
  f('log-flush-frequency', 'duration', 'logging.flushFrequency', 'Max time between log flushes', '5s', null),
  f('log-json-info-buffer-size', 'string', 'logging.options.json.infoBufferSize', 'Alpha. Info buffer for split JSON logs; bytes or suffix forms (1K, 2Ki, 3M, 5Mi, 6Gi); 0 disables; needs LoggingAlphaOptions', '0'),
  f('log-json-split-stream', 'bool', 'logging.options.json.splitStream', 'Alpha. Errors to stderr, info to stdout in JSON; needs LoggingAlphaOptions', 'false'),
  f('logging-format', 'string', 'logging.format', 'text, or json (gated by LoggingBetaOptions)', 'text'),
  f('make-iptables-util-chains', 'bool', 'makeIPTablesUtilChains', 'Ensure packet-filter utility rules exist', 'true'),
  f('manifest-url', 'string', 'staticPodURL', 'URL of additional pod specifications'),
  f('manifest-url-header', 'header-map', 'staticPodURLHeader', "Comma-separated name:value HTTP headers for the URL, e.g. 'a:hello,b:again'; repeatable; same-named headers are added in the given order"),
  f('max-open-files', 'int64', 'maxOpenFiles', 'Open-file limit of the process', '1000000'),
  f('max-pods', 'int32', 'maxPods', 'Max pods', '110'),
  o('maximum-dead-containers', 'int32', 'maximumDeadContainers', 'Old container instances kept globally; negative disables', '-1', rm('a later release')),
  o('maximum-dead-containers-per-container', 'int32', 'maximumDeadContainersPerContainer', 'Old instances kept per container', '1', rm('a later release')),
  f('memory-manager-policy', 'string', 'memoryManagerPolicy', 'None or Static', 'None'),
  o('minimum-container-ttl-duration', 'duration', 'minimumContainerTTLDuration', 'Min age of a finished container before collection', undefined, rm('a later release')),
  f('minimum-image-ttl-duration', 'duration', 'imageMinimumGCAge', 'Min age of an unused image before collection', '2m0s'),
  o('node-ip', 'string', 'nodeIP', "Node IP or comma-separated dual-stack IPs; if unset, default IPv4 then default IPv6; '::' prefers IPv6"),
  o('node-labels', 'map', 'nodeLabels', 'Alpha. Labels added at registration, comma-separated key=value; labels in the orch.io namespace need an allowed prefix (nodeagent.orch.io, node.orch.io) or be in the allowed set'),
  f('node-status-max-images', 'int32', 'nodeStatusMaxImages', 'Images reported in node status; -1 means no cap', '50'),
  f('node-status-update-frequency', 'duration', 'nodeStatusUpdateFrequency', "How often node status is posted; must work with the node controller's grace period", '10s'),
  f('oom-score-adj', 'int32', 'oomScoreAdj', 'Range [-1000,1000]', '-999'),
  f('pod-cidr', 'string', 'podCIDR', 'Pod IP range, standalone mode only; for IPv6 at most 65536 addresses'),
  o('pod-infra-container-image', 'string', 'podInfraContainerImage', 'Image protected from image garbage collection', undefined, rm('1.27')),
  f('pod-manifest-path', 'string', 'staticPodPath', 'Directory or single file of static pods; names starting with a dot are ignored'),
  f('pod-max-pids', 'int64', 'podPidsLimit', 'Max processes per pod; -1 uses node allocatable PID capacity', '-1'),
  f('pods-per-core', 'int32', 'podsPerCore', 'Pods per core, capped by --max-pods; 0 disables', '0'),
  f('port', 'int32', 'port', 'Server port', '10250'),
  f('protect-kernel-defaults', 'bool', 'protectKernelDefaults', "Error if kernel tunables differ from the agent's defaults", 'false'),
  f('provider-id', 'string', 'providerID', 'Unique node identifier in a machine database'),
  f('qos-reserved', 'map', 'qosReserved', 'Alpha. resource=percentage pairs (memory only); needs QOSReserved'),
  f('read-only-port', 'int32', 'readOnlyPort', 'Unauthenticated read-only port; 0 disables', '10255'),
  f('register-node', 'bool', 'registerNode', 'Register with the API server; irrelevant without --orchconfig', 'true'),
  o('register-schedulable', 'bool', 'registerSchedulable', 'Register node as schedulable; no effect if --register-node is false', 'true', rm('a later release')),
  f('register-with-taints', 'taints', 'registerWithTaints', 'Comma-separated <key>=<value>:<effect> taints; no-op if --register-node is false'),
  f('registry-burst', 'int32', 'registryBurst', 'Pull burst; used only if --registry-qps > 0', '10'),
  f('registry-qps', 'int32', 'registryPullQPS', 'Pull QPS; 0 unlimited', '5'),
  f('reserved-cpus', 'string', 'reservedSystemCPUs', 'CPUs or ranges reserved; supersedes CPU counts in the reserved flags'),
  f('reserved-memory', 'reserved-memory', 'reservedMemory', 'Per-NUMA-node memory reservations in the form <node>:<type>=<quantity>,...; repeatable'),
  f('resolv-conf', 'string', 'resolvConf', 'Base resolver file for container DNS', '/etc/resolv.conf'),
  o('root-dir', 'string', 'rootDir', 'Directory for agent files (volume mounts etc.)', '/var/lib/nodeagent'),
  f('rotate-certificates', 'bool', 'rotateCertificates', 'Auto-rotate client certificates', 'false'),
  f('rotate-server-certificates', 'bool', 'serverTLSBootstrap', 'Auto-request and rotate serving certificates; needs RotateNodeagentServerCertificate and approval of the signing requests', 'false'),
  f('runonce', 'bool', 'runOnce', 'Exit after starting pods from local manifests or URLs; exclusive with --enable-server', 'false'),
  o('runtime-cgroups', 'string', 'runtimeCgroups', 'Cgroup name to run the runtime in'),
  f('runtime-request-timeout', 'duration', 'runtimeRequestTimeout', 'Timeout of runtime requests except pull, logs, exec, attach', '2m0s'),
  f('seccomp-default', 'bool', 'seccompDefault', 'RuntimeDefault seccomp profile for all workloads', 'false', null),
  f('serialize-image-pulls', 'bool', 'serializeImagePulls', 'Pull one image at a time', 'true'),
  f('streaming-connection-idle-timeout', 'duration', 'streamingConnectionIdleTimeout', 'Idle time before a streaming connection closes; 0 means none', '4h0m0s'),
  f('sync-frequency', 'duration', 'syncFrequency', 'Max period between synchronisations of running containers and config', '1m0s'),
  f('system-cgroups', 'string', 'systemCgroups', 'Cgroup for non-kernel processes outside any cgroup; empty means none; rolling back needs a reboot'),
  f('system-reserved', 'map', 'systemReserved', 'resource=quantity pairs reserved for non-cluster components (cpu, memory, ephemeral-storage, pid)'),
  f('system-reserved-cgroup', 'string', 'systemReservedCgroup', 'Absolute top-level cgroup for them', ''),
  f('tls-cert-file', 'string', 'tlsCertFile', 'Serving x509 certificate (intermediates appended); if cert and key are both absent, a self-signed pair is generated and saved in --cert-dir'),
  f('tls-cipher-suites', 'strings', 'tlsCipherSuites', 'Cipher suites (IANA names); TLS 1.3 suites are not configurable'),
  f('tls-min-version', 'string', 'tlsMinVersion', 'VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13', ''),
  f('tls-private-key-file', 'string', 'tlsPrivateKeyFile', 'Private key matching the certificate'),
  f('topology-manager-policy', 'string', 'topologyManagerPolicy', 'none, best-effort, restricted, single-numa-node', 'none'),
  f('topology-manager-policy-options', 'map', 'topologyManagerPolicyOptions', '<key>=<value> options'),
  f('topology-manager-scope', 'string', 'topologyManagerScope', 'container or pod', 'container'),
  { name: 'v', short: 'v', type: 'level', target: { field: 'logging.verbosity' }, usage: 'Log verbosity number' },
  { name: 'version', type: 'version', target: { action: 'version' }, usage: 'Print version and exit; --version=vX.Y.Z sets the reported version' },
  f('vmodule', 'vmodule', 'logging.vmodule', 'File-filtered log levels (pattern=N,...), text format only', undefined, null),
  f('volume-plugin-dir', 'string', 'volumePluginDir', 'Directory searched for third-party volume plugins', '/usr/libexec/orch/nodeagent-plugins/volume/exec/'),
  f('volume-stats-agg-period', 'duration', 'volumeStatsAggPeriod', 'Interval of volume usage calculation; 0 disables', '1m0s'),
];

/** Flags by long name and by shorthand. */
export const FLAGS_BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((s) => [s.name, s]));
export const FLAGS_BY_SHORT: ReadonlyMap<string, FlagSpec> = new Map(
  FLAGS.filter((s) => s.short !== undefined).map((s) => [s.short ?? '', s]),
);
