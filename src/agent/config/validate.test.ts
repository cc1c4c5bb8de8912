import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveFeatureGates } from './feature-gates.js';
import { defaultCommandLineOptions } from './flags/table.js';
import { flagDefaults } from './resolve.js';
import { HEADER, problemsOf, resolveArgs, tempFiles } from './fixtures.js';
import type { NodeagentConfiguration } from './types.js';
import { validateConfiguration } from './validate.js';

/** [command line, a text every matching problem line contains] */
const REJECTED: readonly [readonly string[], string][] = [
  [['--image-gc-high-threshold=101'], 'imageGCHighThresholdPercent: must be from 0 to 100, got 101'],
  [['--image-gc-low-threshold=-1'], 'imageGCLowThresholdPercent: must be from 0 to 100, got -1'],
  [['--image-gc-low-threshold=85'], 'imageGCLowThresholdPercent: must be below imageGCHighThresholdPercent (85), got 85'],
  [['--oom-score-adj=-1001'], 'oomScoreAdj: must be from -1000 to 1000, got -1001'],
  [['--port=0'], 'port: must be from 1 to 65535, got 0'],
  [['--read-only-port=70000'], 'readOnlyPort: must be from 1 to 65535, got 70000'],
  [['--healthz-port=-1'], 'healthzPort: must be from 1 to 65535, got -1'],
  [['--container-log-max-files=1'], 'containerLogMaxFiles: must be 2 or more, got 1'],
  [['--container-log-max-size=ten'], 'containerLogMaxSize: '],
  [['--node-status-max-images=-2'], 'nodeStatusMaxImages: must be -1 (no cap) or more, got -2'],
  [['--pods-per-core=200'], 'podsPerCore: must not exceed maxPods (110), got 200'],
  [['--event-qps=-1'], 'eventRecordQPS: must not be negative, got -1'],
  [['--event-burst=-1'], 'eventBurst: must not be negative'],
  [['--registry-qps=-1'], 'registryPullQPS: must not be negative'],
  [['--registry-burst=-1'], 'registryBurst: must not be negative'],
  [['--orch-api-qps=-1'], 'orchAPIQPS: must not be negative'],
  [['--orch-api-burst=-1'], 'orchAPIBurst: must not be negative'],
  [['--max-open-files=-1'], 'maxOpenFiles: must not be negative'],
  [['--pod-max-pids=-2'], 'podPidsLimit: must be -1'],
  [['--runonce'], 'runOnce: cannot be combined with enableServer'],
  [['--enforce-node-allocatable=none,pods'], 'enforceNodeAllocatable: "none" cannot be combined with other options'],
  [['--enforce-node-allocatable=pods,system-reserved'], 'enforceNodeAllocatable: "system-reserved" needs systemReservedCgroup'],
  [['--enforce-node-allocatable=orch-reserved'], 'enforceNodeAllocatable: "orch-reserved" needs orchReservedCgroup'],
  [['--enforce-node-allocatable=everything'], 'enforceNodeAllocatable: "everything" is not allowed; use one of none, pods, system-reserved, orch-reserved'],
  [['--cgroup-driver=docker'], 'cgroupDriver: "docker" is not allowed; use one of cgroupfs, systemd'],
  [['--cpu-manager-policy=dynamic'], 'cpuManagerPolicy: "dynamic" is not allowed'],
  [['--memory-manager-policy=none'], 'memoryManagerPolicy: "none" is not allowed; use one of None, Static'],
  [['--topology-manager-policy=strict'], 'topologyManagerPolicy: "strict" is not allowed'],
  [['--topology-manager-scope=node'], 'topologyManagerScope: "node" is not allowed'],
  [['--hairpin-mode=on'], 'hairpinMode: "on" is not allowed'],
  [['--tls-min-version=VersionTLS14'], 'tlsMinVersion: "VersionTLS14" is not allowed'],
  [['--tls-cipher-suites=TLS_FAKE'], 'tlsCipherSuites: unknown cipher suite "TLS_FAKE"'],
  [['--tls-min-version=VersionTLS13', '--tls-cipher-suites=TLS_RSA_WITH_AES_128_CBC_SHA'], 'tlsCipherSuites: cannot be set when tlsMinVersion is VersionTLS13'],
  [['--tls-cert-file=/a.crt'], 'tlsPrivateKeyFile: tlsCertFile and tlsPrivateKeyFile must be given together'],
  [['--logging-format=xml'], 'logging.format: "xml" is not allowed; use one of text, json'],
  [['--logging-format=json', '--feature-gates=LoggingBetaOptions=false'], 'logging.format: needs the feature gate LoggingBetaOptions'],
  [['--log-json-split-stream'], 'logging.options.json.splitStream: needs the feature gate LoggingAlphaOptions'],
  [['--log-json-info-buffer-size=1Mi'], 'logging.options.json.infoBufferSize: needs the feature gate LoggingAlphaOptions'],
  [['--logging-format=json', '--vmodule=a=1'], 'logging.vmodule: is only supported with the text format'],
  [['--feature-gates=NoSuchGate=true'], 'featureGates: unrecognized feature gate: NoSuchGate'],
  [['--feature-gates=LocalStorageCapacityIsolationFSQuotaMonitoring=true'], 'featureGates: LocalStorageCapacityIsolationFSQuotaMonitoring cannot be enabled: project quotas are not used'],
  [['--feature-gates=NodeagentInUserNamespace=true'], 'featureGates: NodeagentInUserNamespace cannot be enabled: running the agent inside a user namespace is not supported'],
  [['--feature-gates=DynamicResourceAllocation=true'], 'featureGates: DynamicResourceAllocation cannot be enabled: dynamic resource allocation (resource claims, DRA drivers) is not implemented'],
  [['--feature-gates=NodeagentPodResourcesDynamicResources=true'], 'featureGates: NodeagentPodResourcesDynamicResources cannot be enabled: dynamic resource allocation is not implemented'],
  [['--feature-gates=CSIVolumeHealth=true'], 'featureGates: CSIVolumeHealth cannot be enabled: CSI volume health'],
  [['--feature-gates=RecoverVolumeExpansionFailure=true'], 'featureGates: RecoverVolumeExpansionFailure cannot be enabled: the node expands volumes as with the gate off'],
  [['--feature-gates=NodeagentCgroupDriverFromCRI=true'], 'featureGates: NodeagentCgroupDriverFromCRI cannot be enabled: the cgroup driver is not taken from the runtime'],
  [['--feature-gates=SizeMemoryBackedVolumes=false'], 'featureGates: SizeMemoryBackedVolumes cannot be disabled: memory-backed emptyDir volumes are always sized by their sizeLimit here'],
  [['--feature-gates=PodDisruptionConditions=false'], 'featureGates: PodDisruptionConditions cannot be disabled: the agent always sets the DisruptionTarget condition'],
  [['--feature-gates=AllAlpha=true'], 'featureGates: LocalStorageCapacityIsolationFSQuotaMonitoring cannot be enabled'],
  [['--qos-reserved=memory=50%'], 'qosReserved: needs the feature gate QOSReserved'],
  [['--qos-reserved=cpu=50%', '--feature-gates=QOSReserved=true'], 'qosReserved: only memory can be reserved'],
  [['--cpu-cfs-quota-period=50ms'], 'cpuCFSQuotaPeriod: needs the feature gate CustomCPUCFSQuotaPeriod'],
  [['--cpu-cfs-quota-period=2s', '--feature-gates=CustomCPUCFSQuotaPeriod=true'], 'cpuCFSQuotaPeriod: must be from 1ms to 1s, got 2s'],
  [['--cpu-manager-policy-options=full-pcpus-only=true'], 'cpuManagerPolicyOptions: are only accepted with cpuManagerPolicy static'],
  [['--cpu-manager-policy=static', '--cpu-manager-policy-options=align-by-socket=true'], 'cpuManagerPolicyOptions: option align-by-socket needs the feature gate CPUManagerPolicyAlphaOptions'],
  [['--cpu-manager-policy=static', '--cpu-manager-policy-options=magic=true'], 'cpuManagerPolicyOptions: unknown option "magic"'],
  [['--topology-manager-policy-options=prefer-closest-numa-nodes=true'], 'topologyManagerPolicyOptions: option prefer-closest-numa-nodes needs the feature gate TopologyManagerPolicyBetaOptions'],
  [['--eviction-hard=memory.free<1Gi'], 'evictionHard: unknown eviction signal "memory.free"'],
  [['--eviction-hard=nodefs.available<120%'], 'evictionHard: threshold "120%" of nodefs.available must be a percentage from 0% to 100%'],
  [['--eviction-hard=memory.available<-1Gi'], 'evictionHard: threshold of memory.available: "-1Gi" must not be negative'],
  [['--eviction-soft=memory.available<1Gi'], 'evictionSoftGracePeriod: the soft threshold of memory.available needs a grace period'],
  [['--eviction-soft-grace-period=memory.available=1m'], 'evictionSoftGracePeriod: grace period given for memory.available, which has no soft threshold'],
  [['--eviction-soft=memory.available<1Gi', '--eviction-soft-grace-period=memory.available=soon'], 'evictionSoftGracePeriod: grace period of memory.available'],
  [['--eviction-minimum-reclaim=imagefs.available=lots'], 'evictionMinimumReclaim: minimum reclaim of imagefs.available'],
  [['--eviction-minimum-reclaim=imagefs.available=0%'], 'evictionMinimumReclaim: minimum reclaim of imagefs.available: "0%" must be above 0%'],
  [['--eviction-hard=memory.available<0'], 'evictionHard: threshold of memory.available: "0" must be positive'],
  [['--system-reserved=gpu=1'], 'systemReserved: unknown resource "gpu"'],
  [['--orch-reserved=memory=1Gb'], 'orchReserved: memory: '],
  [['--allowed-unsafe-sysctls=net.core.*,Bad_Name'], 'allowedUnsafeSysctls[1]: "Bad_Name" is not a sysctl name'],
  [['--reserved-cpus=3-1'], 'reservedSystemCPUs: "3-1" is not a CPU list'],
  [['--reserved-cpus=0', '--system-reserved-cgroup=/sys'], 'reservedSystemCPUs: cannot be used together with systemReservedCgroup or orchReservedCgroup'],
  [['--reserved-memory=0:memory=1Gi', '--reserved-memory=0:cpu=1'], 'reservedMemory[1].numaNode: NUMA node 0 is listed twice'],
  [['--system-cgroups=/system'], 'systemCgroups: needs cgroupRoot (--cgroup-root) to be set'],
  [['--nodeagent-cgroups=relative'], 'nodeagentCgroups: must be an absolute cgroup name starting with /'],
  [['--address=0.0.0.300'], 'invalid value "0.0.0.300" for flag --address: expected an IPv4 or IPv6 address'],
  [['--healthz-bind-address=localhost'], 'invalid value "localhost" for flag --healthz-bind-address: expected an IPv4 or IPv6 address'],
  [['--cluster-dns=10.0.0.10,dns'], 'clusterDNS[1]: "dns" is not an IPv4 or IPv6 address'],
  [['--pod-cidr=10.0.0.0/33'], 'podCIDR: "10.0.0.0/33" is not a CIDR'],
  [['--pod-cidr=fd00::/64'], 'podCIDR: "fd00::/64": an IPv6 pod range may hold at most 65536 addresses'],
  [['--manifest-url=ftp://x/pods'], 'staticPodURL: "ftp://x/pods" must be an http or https URL'],
  [['--container-runtime-endpoint=tcp://127.0.0.1:1'], 'containerRuntimeEndpoint: "tcp://127.0.0.1:1": npipe and tcp endpoints are not supported on Linux'],
  [['--image-service-endpoint=unix://relative.sock'], 'imageServiceEndpoint: "unix://relative.sock": the socket path must be absolute'],
  [['--register-with-taints=a=b:NoSchedule,a=c:NoSchedule'], 'for flag --register-with-taints: taint "a=c:NoSchedule" repeats key'],
  [['--node-labels=orch.io/role=x'], '--node-labels: labels in the orch.io namespace must begin with an allowed prefix'],
  [['--node-labels=foo.orch.io/role=x'], 'not allowed: foo.orch.io/role'],
  [['--node-labels=a=b c'], '--node-labels: value of a: '],
  [['--node-ip=10.0.0.1,10.0.0.2'], '--node-ip: give one address, or two of different families'],
  [['--node-ip=abc'], '--node-ip: "abc" is not an IPv4 or IPv6 address'],
  [['--hostname-override=Bad_Name'], '--hostname-override: '],
  [['--authorization-mode=Webhook'], 'authorization.mode: Webhook authorization needs the API server (--orchconfig)'],
  [['--authentication-token-webhook'], 'authentication.webhook.enabled: webhook token authentication needs the API server'],
  [['--rotate-server-certificates'], 'serverTLSBootstrap: the serving certificate is requested from the API server (--orchconfig)'],
  [['--authorization-mode=RBAC', '--orchconfig=/x'], 'authorization.mode: "RBAC" is not allowed; use one of AlwaysAllow, Webhook'],
  [['--sync-frequency=0s'], 'syncFrequency: must be a positive duration, got 0s'],
  [['--runtime-request-timeout=-1s'], 'runtimeRequestTimeout: must be a positive duration, got -1s'],
  [['--minimum-image-ttl-duration=-1m'], 'imageMinimumGCAge: must not be negative, got -1m0s'],
];

void describe('validation rules', () => {
  for (const [argv, expected] of REJECTED) {
    void it(`rejects ${argv.join(' ')}`, async () => {
      const problems = await problemsOf(argv);
      assert.ok(problems.some((p) => p.includes(expected)), `expected a problem containing ${JSON.stringify(expected)}, got:\n${problems.join('\n')}`);
    });
  }

  void it('accepts EventedPLEG and the node gates that act, on and off', async () => {
    for (const gate of ['EventedPLEG', 'PodHostIPs', 'PodReadyToStartContainersCondition', 'UserNamespacesStatelessPodsSupport', 'ContainerCheckpoint']) {
      for (const on of [true, false]) assert.ok((await resolveArgs([`--feature-gates=${gate}=${on}`])).gates.enabled(gate) === on, `${gate}=${on}`);
    }
  });

  void it('accepts the insecure cipher suites with a warning', async () => {
    const r = await resolveArgs(['--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256']);
    assert.ok(r.warnings.some((w) => w.includes('TLS_RSA_WITH_RC4_128_SHA is insecure')));
  });

  void it('accepts the allowed node labels and valid values of every kind', async () => {
    const r = await resolveArgs([
      '--node-labels=orch.io/hostname=n1,node.orch.io/role=web,a.nodeagent.orch.io/x=y,example.com/z=1,plain=',
      '--eviction-hard=memory.available<1Gi,nodefs.available<10%', '--eviction-soft=memory.available<2Gi',
      '--eviction-soft-grace-period=memory.available=1m30s', '--allowed-unsafe-sysctls=net.core.somaxconn,kernel.msg*',
      '--reserved-cpus=0-1,3', '--pod-cidr=10.244.0.0/24', '--node-ip=10.0.0.5,fd00::5', '--cluster-dns=10.96.0.10',
      '--register-with-taints=a=b:NoExecute', '--enforce-node-allocatable=none', '--cgroups-per-qos=false',
      '--feature-gates=QOSReserved=true,NodeSwap=true', '--qos-reserved=memory=50%',
      '--tls-min-version=VersionTLS12', '--hostname-override=Node-1',
    ]);
    assert.equal(r.options.nodeLabels['orch.io/hostname'], 'n1');
  });

  void it('reports every problem of one configuration together', async () => {
    const problems = await problemsOf(['--port=0', '--max-pods=-1', '--hairpin-mode=x', '--event-qps=-1']);
    assert.equal(problems.length, 4);
  });

  void it('names the flag that set a field, and the file for file fields', async () => {
    const dir = await tempFiles({ 'c.yaml': `${HEADER}maxPods: -3\nauthorization:\n  mode: AlwaysAllow\nauthentication:\n  webhook:\n    enabled: false\n` });
    const problems = await problemsOf(['--config=c.yaml', '--port=0'], { cwd: dir });
    assert.ok(problems.includes('port: must be from 1 to 65535, got 0 (set by flag --port)'), problems.join('\n'));
    assert.ok(problems.some((p) => /^maxPods: must not be negative, got -3 \(set by config file .*c\.yaml\)$/.test(p)), problems.join('\n'));
  });

  void it('checks the shutdown periods against each other and their gates', () => {
    const c: NodeagentConfiguration = { ...flagDefaults(), shutdownGracePeriod: 10e9, shutdownGracePeriodCriticalPods: 20e9 };
    const base = { options: defaultCommandLineOptions(), version: 'v0.1.0' };
    let r = validateConfiguration(c, { ...base, gates: resolveFeatureGates(null) });
    assert.ok(r.problems.some((p) => p.field === 'shutdownGracePeriodCriticalPods' && p.message.startsWith('must not exceed shutdownGracePeriod (10s)')));
    r = validateConfiguration(c, { ...base, gates: resolveFeatureGates({ GracefulNodeShutdown: false }) });
    assert.ok(r.problems.some((p) => p.field === 'shutdownGracePeriod' && p.message.includes('GracefulNodeShutdown')));
    const byPriority: NodeagentConfiguration = { ...c, shutdownGracePeriodByPodPriority: [{ priority: 1, shutdownGracePeriodSeconds: -1 }] };
    r = validateConfiguration(byPriority, { ...base, gates: resolveFeatureGates(null) });
    assert.ok(r.problems.some((p) => p.field === 'shutdownGracePeriodByPodPriority' && p.message.includes('must be empty')));
    assert.ok(r.problems.some((p) => p.field === 'shutdownGracePeriodByPodPriority[0].shutdownGracePeriodSeconds'));
  });

  void it('accepts kernelMemcgNotification: true (upstream\'s defaults test sets it) with one warning that thresholds are found by polling', () => {
    const base = { options: defaultCommandLineOptions(), version: 'v0.1.0', gates: resolveFeatureGates(null) };
    const r = validateConfiguration({ ...flagDefaults(), kernelMemcgNotification: true }, base);
    assert.deepEqual(r.problems, []);
    const memcg = r.warnings.filter((w) => w.includes('kernelMemcgNotification'));
    assert.equal(memcg.length, 1);
    assert.match(memcg[0] ?? '', /^kernelMemcgNotification is accepted but has no effect on this node \(memory thresholds are found by polling/);
    assert.equal(validateConfiguration(flagDefaults(), base).warnings.some((w) => w.includes('kernelMemcgNotification')), false);
  });

  void it('wants podLogsDir absolute and normalized', () => {
    const base = { options: defaultCommandLineOptions(), version: 'v0.1.0', gates: resolveFeatureGates(null) };
    const problems = (podLogsDir: string): string[] => validateConfiguration({ ...flagDefaults(), podLogsDir }, base).problems.map((p) => `${p.field}: ${p.message}`);
    assert.deepEqual(problems('/var/log/pods/'), ['podLogsDir: pod logs path "/var/log/pods/" must be normalized ("/var/log/pods")']);
    assert.deepEqual(problems('/var/log/../log/pods'), ['podLogsDir: pod logs path "/var/log/../log/pods" must be normalized ("/var/log/pods")']);
    assert.deepEqual(problems('/srv/pod-logs'), []);
    assert.equal(flagDefaults().podLogsDir, '/var/log/pods');
  });

  void it('checks the remaining file-only rules', () => {
    const base = { options: defaultCommandLineOptions(), version: 'v0.3.0', gates: resolveFeatureGates({ MemoryQoS: true, RotateNodeagentServerCertificate: false, NodeagentTracing: false }) };
    const c: NodeagentConfiguration = {
      ...flagDefaults(), nodeLeaseDurationSeconds: -1, maxParallelImagePulls: 3, memoryThrottlingFactor: 1.5,
      showHiddenMetricsForVersion: '0.1', serverTLSBootstrap: true, enableSystemLogQuery: true, enableSystemLogHandler: false,
      iptablesDropBit: 32, configMapAndSecretChangeDetectionStrategy: 'Poll', memorySwap: { swapBehavior: 'LimitedSwap' },
      tracing: { endpoint: 'not a host', samplingRatePerMillion: 2_000_000 },
      containerLogMaxWorkers: 0, containerLogMonitorInterval: 2e9, podLogsDir: 'var/log/pods',
    };
    const fields = validateConfiguration(c, base).problems.map((p) => `${p.field}: ${p.message}`);
    const expect = [
      'nodeLeaseDurationSeconds: must be greater than 0',
      'maxParallelImagePulls: cannot be set when serializeImagePulls is true',
      'memoryThrottlingFactor: must be greater than 0 and at most 1.0',
      'showHiddenMetricsForVersion: only the previous minor version (0.2) is allowed',
      'serverTLSBootstrap: needs the feature gate RotateNodeagentServerCertificate',
      'enableSystemLogQuery: needs the feature gate NodeLogQuery',
      'enableSystemLogQuery: needs enableSystemLogHandler to be true',
      'iptablesDropBit: must be from 0 to 31',
      'configMapAndSecretChangeDetectionStrategy: "Poll" is not allowed',
      'memorySwap.swapBehavior: needs the feature gate NodeSwap',
      'tracing: needs the feature gate NodeagentTracing',
      'tracing.samplingRatePerMillion: must be from 0 to 1000000',
      'tracing.endpoint: "not a host" is not host:port',
      'containerLogMaxWorkers: must be 1 or more, got 0',
      'containerLogMonitorInterval: must be 3s or more, got 2s',
      'podLogsDir: pod logs path "var/log/pods" must be an absolute path',
    ];
    for (const e of expect) assert.ok(fields.some((f) => f.startsWith(e)), `missing ${e} in:\n${fields.join('\n')}`);
  });
});
