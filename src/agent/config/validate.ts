/**
 * Validation of the effective configuration: the kubelet's flag checks and its configuration
 * validation (ValidateKubeletConfiguration), with the stricter rules docs/configuration.md
 * lists. It returns every problem at once, each naming the field; the caller adds the flag or
 * file that set it. Pure: reads nothing.
 */
import { formatDuration } from '../../api/duration.js';
import { messageOf } from '../../api/errors.js';
import { parseByteSize, parseQuantity } from '../../api/quantity.js';
import { validateDNS1123Subdomain } from '../../api/labels.js';
import { unknownGates, type FeatureGates } from './feature-gates.js';
import { ineffectiveSettings } from './ineffective.js';
import type { CommandLineOptions } from './flags/table.js';
import { MILLISECOND, SECOND } from './schema.js';
import type { NodeagentConfiguration } from './types.js';
import { validateMaps } from './validate-maps.js';
import {
  INSECURE_CIPHER_SUITES, SECURE_CIPHER_SUITES, TLS_VERSIONS, cidrProblem, cpuSetProblem, endpointProblem,
  ipProblem, nodeLabelProblems, podLogsDirProblems, taintProblems, urlProblem,
} from './validate-values.js';
import { quoteValue } from '../../api/quote.js';

export interface Problem {
  /** Dotted field path, e.g. `authentication.webhook.cacheTTL`, or `--flag` for command-line-only options. */
  readonly field: string;
  readonly message: string;
}

export interface ValidationResult {
  readonly problems: readonly Problem[];
  readonly warnings: readonly string[];
}

export interface ValidateOptions {
  readonly gates: FeatureGates;
  readonly options: CommandLineOptions;
  /** The agent's own version, for showHiddenMetricsForVersion. */
  readonly version: string;
}

type Add = (field: string, message: string) => void;

function oneOf(add: Add, field: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) add(field, `${quoteValue(value)} is not allowed; use one of ${allowed.join(', ')}`);
}
function range(add: Add, field: string, value: number, min: number, max: number): void {
  if (value < min || value > max) add(field, `must be from ${min} to ${max}, got ${value}`);
}
function nonNegative(add: Add, field: string, value: number): void {
  if (value < 0) add(field, `must not be negative, got ${value}`);
}
function positiveDuration(add: Add, field: string, ns: number): void {
  if (ns <= 0) add(field, `must be a positive duration, got ${formatDuration(ns)}`);
}
function nonNegativeDuration(add: Add, field: string, ns: number): void {
  if (ns < 0) add(field, `must not be negative, got ${formatDuration(ns)}`);
}
/** Zero (off), or a whole second at least (upstream's graceful shutdown periods). */
function zeroOrAtLeastASecond(add: Add, field: string, ns: number): void {
  if (ns < 0 || (ns > 0 && ns < SECOND)) add(field, `must be zero or at least 1s, got ${formatDuration(ns)}`);
}
function port(add: Add, field: string, value: number, zeroAllowed: boolean): void {
  if (zeroAllowed && value === 0) return;
  range(add, field, value, 1, 65535);
}
function needsGate(add: Add, gates: FeatureGates, field: string, gate: string, inUse: boolean): void {
  if (inUse && !gates.enabled(gate)) add(field, `needs the feature gate ${gate}, which is off (featureGates: {${gate}: true} or --feature-gates=${gate}=true)`);
}

/** Gates refused when on: the feature is not in this agent. */
export const REFUSED_ON: ReadonlyMap<string, string> = new Map([
  ['LocalStorageCapacityIsolationFSQuotaMonitoring', 'project quotas are not used: local ephemeral storage is measured by walking the volumes every volumeStatsAggPeriod'],
  ['NodeagentInUserNamespace', 'running the agent inside a user namespace is not supported'],
  ['DynamicResourceAllocation', 'dynamic resource allocation (resource claims, DRA drivers) is not implemented by this node agent'],
  ['NodeagentPodResourcesDynamicResources', 'dynamic resource allocation is not implemented, so the pod resources API has no dynamic resources to report'],
  ['CSIVolumeHealth', 'CSI volume health (the volume conditions of NodeGetVolumeStats) is not reported by this node agent'],
  ['RecoverVolumeExpansionFailure', 'the node expands volumes as with the gate off (the claim\'s allocatedResourceStatuses are not kept)'],
  ['NodeagentCgroupDriverFromCRI', 'the cgroup driver is not taken from the runtime (containerd 1.6 does not report it); set cgroupDriver'],
]);

/** Gates refused when off: this agent always acts as with the gate on. */
export const REFUSED_OFF: ReadonlyMap<string, string> = new Map([
  ['SizeMemoryBackedVolumes', 'memory-backed emptyDir volumes are always sized by their sizeLimit here'],
  ['PodDisruptionConditions', 'the agent always sets the DisruptionTarget condition on the pods it evicts or shuts down'],
]);

/** Validates `c`. Never throws. */
export function validateConfiguration(c: NodeagentConfiguration, v: ValidateOptions): ValidationResult {
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const add: Add = (field, message) => problems.push({ field, message });
  const g = v.gates;

  for (const name of unknownGates(c.featureGates)) add('featureGates', `unrecognized feature gate: ${name}`);
  // Gates whose feature this agent does not have (refused when on), or has always (refused when
  // off), rather than accepted and inert (docs/configuration.md lists every gate).
  for (const [gate, why] of REFUSED_ON) if (g.enabled(gate)) add('featureGates', `${gate} cannot be enabled: ${why}`);
  for (const [gate, why] of REFUSED_OFF) if (!g.enabled(gate)) add('featureGates', `${gate} cannot be disabled: ${why}`);

  // Ports, addresses, rates.
  port(add, 'port', c.port, false);
  port(add, 'readOnlyPort', c.readOnlyPort, true);
  port(add, 'healthzPort', c.healthzPort, true);
  for (const [field, value] of [['address', c.address], ['healthzBindAddress', c.healthzBindAddress]] as const) {
    const p = ipProblem(value);
    if (p !== undefined) add(field, p);
  }
  c.clusterDNS.forEach((ip, i) => {
    const p = ipProblem(ip);
    if (p !== undefined) add(`clusterDNS[${i}]`, p);
  });
  for (const field of ['registryPullQPS', 'registryBurst', 'eventRecordQPS', 'eventBurst', 'orchAPIQPS', 'orchAPIBurst',
    'maxPods', 'podsPerCore', 'maxOpenFiles'] as const) {
    nonNegative(add, field, c[field]);
  }
  if (c.podsPerCore > 0 && c.maxPods > 0 && c.podsPerCore > c.maxPods) {
    add('podsPerCore', `must not exceed maxPods (${c.maxPods}), got ${c.podsPerCore}`);
  }
  range(add, 'oomScoreAdj', c.oomScoreAdj, -1000, 1000);
  range(add, 'imageGCHighThresholdPercent', c.imageGCHighThresholdPercent, 0, 100);
  range(add, 'imageGCLowThresholdPercent', c.imageGCLowThresholdPercent, 0, 100);
  if (c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent) {
    add('imageGCLowThresholdPercent', `must be below imageGCHighThresholdPercent (${c.imageGCHighThresholdPercent}), got ${c.imageGCLowThresholdPercent}`);
  }
  range(add, 'iptablesMasqueradeBit', c.iptablesMasqueradeBit, 0, 31);
  range(add, 'iptablesDropBit', c.iptablesDropBit, 0, 31);
  if (c.nodeLeaseDurationSeconds <= 0) add('nodeLeaseDurationSeconds', `must be greater than 0, got ${c.nodeLeaseDurationSeconds}`);
  if (c.nodeStatusMaxImages < -1) add('nodeStatusMaxImages', `must be -1 (no cap) or more, got ${c.nodeStatusMaxImages}`);
  if (c.containerLogMaxFiles < 2) add('containerLogMaxFiles', `must be 2 or more, got ${c.containerLogMaxFiles}`);
  if (c.containerLogMaxWorkers < 1) add('containerLogMaxWorkers', `must be 1 or more, got ${c.containerLogMaxWorkers}`);
  if (c.containerLogMonitorInterval < 3 * SECOND) {
    add('containerLogMonitorInterval', `must be 3s or more, got ${formatDuration(c.containerLogMonitorInterval)}`);
  }
  podLogsDirProblems(c.podLogsDir).forEach((p) => { add('podLogsDir', p); });
  if (c.podPidsLimit < -1) add('podPidsLimit', `must be -1 (node allocatable PID capacity) or more, got ${c.podPidsLimit}`);
  try {
    const q = parseQuantity(c.containerLogMaxSize);
    if (q.mantissa <= 0n) add('containerLogMaxSize', `must be a positive quantity such as 10Mi, got ${quoteValue(c.containerLogMaxSize)}`);
  } catch (err) {
    add('containerLogMaxSize', messageOf(err));
  }

  // Durations.
  for (const field of ['syncFrequency', 'fileCheckFrequency', 'httpCheckFrequency', 'nodeStatusUpdateFrequency',
    'nodeStatusReportFrequency', 'runtimeRequestTimeout', 'cpuManagerReconcilePeriod'] as const) {
    positiveDuration(add, field, c[field]);
  }
  for (const field of ['streamingConnectionIdleTimeout', 'imageMinimumGCAge', 'volumeStatsAggPeriod',
    'evictionPressureTransitionPeriod'] as const) {
    nonNegativeDuration(add, field, c[field]);
  }
  zeroOrAtLeastASecond(add, 'shutdownGracePeriod', c.shutdownGracePeriod);
  zeroOrAtLeastASecond(add, 'shutdownGracePeriodCriticalPods', c.shutdownGracePeriodCriticalPods);
  positiveDuration(add, 'authentication.webhook.cacheTTL', c.authentication.webhook.cacheTTL);
  positiveDuration(add, 'authorization.webhook.cacheAuthorizedTTL', c.authorization.webhook.cacheAuthorizedTTL);
  positiveDuration(add, 'authorization.webhook.cacheUnauthorizedTTL', c.authorization.webhook.cacheUnauthorizedTTL);
  if (c.cpuCFSQuotaPeriod < MILLISECOND || c.cpuCFSQuotaPeriod > SECOND) {
    add('cpuCFSQuotaPeriod', `must be from 1ms to 1s, got ${formatDuration(c.cpuCFSQuotaPeriod)}`);
  }
  needsGate(add, g, 'cpuCFSQuotaPeriod', 'CustomCPUCFSQuotaPeriod', c.cpuCFSQuotaPeriod !== 100 * MILLISECOND);

  // Enumerations.
  oneOf(add, 'authorization.mode', c.authorization.mode, ['AlwaysAllow', 'Webhook']);
  oneOf(add, 'cgroupDriver', c.cgroupDriver, ['cgroupfs', 'systemd']);
  oneOf(add, 'cpuManagerPolicy', c.cpuManagerPolicy, ['none', 'static']);
  oneOf(add, 'memoryManagerPolicy', c.memoryManagerPolicy, ['None', 'Static']);
  needsGate(add, g, 'memoryManagerPolicy', 'MemoryManager', c.memoryManagerPolicy === 'Static');
  oneOf(add, 'topologyManagerPolicy', c.topologyManagerPolicy, ['none', 'best-effort', 'restricted', 'single-numa-node']);
  oneOf(add, 'topologyManagerScope', c.topologyManagerScope, ['container', 'pod']);
  oneOf(add, 'hairpinMode', c.hairpinMode, ['promiscuous-bridge', 'hairpin-veth', 'none']);
  oneOf(add, 'configMapAndSecretChangeDetectionStrategy', c.configMapAndSecretChangeDetectionStrategy, ['Get', 'Cache', 'Watch']);
  oneOf(add, 'memorySwap.swapBehavior', c.memorySwap.swapBehavior, ['', 'LimitedSwap', 'UnlimitedSwap']);
  needsGate(add, g, 'memorySwap.swapBehavior', 'NodeSwap', c.memorySwap.swapBehavior !== '');

  // TLS.
  if (c.tlsMinVersion !== '') oneOf(add, 'tlsMinVersion', c.tlsMinVersion, TLS_VERSIONS);
  for (const suite of c.tlsCipherSuites) {
    if (INSECURE_CIPHER_SUITES.has(suite)) warnings.push(`tlsCipherSuites: ${suite} is insecure; prefer one of the secure suites`);
    else if (!SECURE_CIPHER_SUITES.has(suite)) {
      add('tlsCipherSuites', `unknown cipher suite ${quoteValue(suite)}; allowed: ${[...SECURE_CIPHER_SUITES.keys(), ...INSECURE_CIPHER_SUITES.keys()].join(', ')}`);
    }
  }
  if (c.tlsMinVersion === 'VersionTLS13' && c.tlsCipherSuites.length > 0) {
    add('tlsCipherSuites', 'cannot be set when tlsMinVersion is VersionTLS13 (TLS 1.3 cipher suites are not configurable)');
  }
  if ((c.tlsCertFile === '') !== (c.tlsPrivateKeyFile === '')) {
    add(c.tlsCertFile === '' ? 'tlsCertFile' : 'tlsPrivateKeyFile', 'tlsCertFile and tlsPrivateKeyFile must be given together (or neither, for a self-signed pair in --cert-dir)');
  }
  needsGate(add, g, 'serverTLSBootstrap', 'RotateNodeagentServerCertificate', c.serverTLSBootstrap);

  // Exclusive and dependent options.
  if (c.runOnce && c.enableServer) add('runOnce', 'cannot be combined with enableServer; set enableServer: false (--enable-server=false) with runOnce (--runonce)');
  if (c.maxParallelImagePulls !== null) {
    if (c.maxParallelImagePulls < 1) add('maxParallelImagePulls', `must be 1 or more, got ${c.maxParallelImagePulls}`);
    else if (c.serializeImagePulls && c.maxParallelImagePulls !== 1) {
      add('maxParallelImagePulls', 'cannot be set when serializeImagePulls is true; set serializeImagePulls: false (--serialize-image-pulls=false)');
    }
  }
  if (c.systemCgroups !== '' && c.cgroupRoot === '') add('systemCgroups', 'needs cgroupRoot (--cgroup-root) to be set');
  for (const field of ['nodeagentCgroups', 'systemCgroups', 'systemReservedCgroup', 'orchReservedCgroup'] as const) {
    if (c[field] !== '' && !c[field].startsWith('/')) add(field, `must be an absolute cgroup name starting with /, got ${quoteValue(c[field])}`);
  }
  validateEnforceNodeAllocatable(c, add);
  if (c.reservedSystemCPUs !== '') {
    const p = cpuSetProblem(c.reservedSystemCPUs);
    if (p !== undefined) add('reservedSystemCPUs', p);
    if (c.systemReservedCgroup !== '' || c.orchReservedCgroup !== '') {
      add('reservedSystemCPUs', 'cannot be used together with systemReservedCgroup or orchReservedCgroup');
    }
  }
  if (c.shutdownGracePeriodCriticalPods > c.shutdownGracePeriod) {
    add('shutdownGracePeriodCriticalPods', `must not exceed shutdownGracePeriod (${formatDuration(c.shutdownGracePeriod)}), got ${formatDuration(c.shutdownGracePeriodCriticalPods)}`);
  }
  needsGate(add, g, 'shutdownGracePeriod', 'GracefulNodeShutdown', c.shutdownGracePeriod > 0);
  const byPriority = c.shutdownGracePeriodByPodPriority;
  if (byPriority.length > 0) {
    needsGate(add, g, 'shutdownGracePeriodByPodPriority', 'GracefulNodeShutdownBasedOnPodPriority', true);
    if (c.shutdownGracePeriod > 0 || c.shutdownGracePeriodCriticalPods > 0) {
      add('shutdownGracePeriodByPodPriority', 'must be empty when shutdownGracePeriod or shutdownGracePeriodCriticalPods is set');
    }
    byPriority.forEach((e, i) => {
      if (e.shutdownGracePeriodSeconds < 0) add(`shutdownGracePeriodByPodPriority[${i}].shutdownGracePeriodSeconds`, `must not be negative, got ${e.shutdownGracePeriodSeconds}`);
    });
  }
  if (c.enableSystemLogQuery) {
    needsGate(add, g, 'enableSystemLogQuery', 'NodeLogQuery', true);
    if (!c.enableSystemLogHandler) add('enableSystemLogQuery', 'needs enableSystemLogHandler to be true');
  }
  if (c.enableContentionProfiling && !c.enableDebuggingHandlers) {
    warnings.push('enableContentionProfiling has no effect unless enableDebuggingHandlers is true');
  }
  if (!(c.memoryThrottlingFactor > 0 && c.memoryThrottlingFactor <= 1)) {
    add('memoryThrottlingFactor', `must be greater than 0 and at most 1.0, got ${c.memoryThrottlingFactor}`);
  }
  validateMaps(c, g, add);

  // Strings with a syntax.
  if (c.podCIDR !== '') {
    const p = cidrProblem(c.podCIDR);
    if (p !== undefined) add('podCIDR', p);
  }
  if (c.staticPodURL !== '') {
    const p = urlProblem(c.staticPodURL);
    if (p !== undefined) add('staticPodURL', p);
  }
  for (const field of ['containerRuntimeEndpoint', 'imageServiceEndpoint'] as const) {
    if (field === 'imageServiceEndpoint' && c[field] === '') continue;
    const p = endpointProblem(c[field]);
    if (p !== undefined) add(field, p);
  }
  for (const p of taintProblems(c.registerWithTaints)) add('registerWithTaints', p);
  c.registerWithTaints.forEach((t, i) => {
    if (t.timeAdded !== null) add(`registerWithTaints[${i}].timeAdded`, 'must not be set: the time a taint was added is the API server\'s to record');
  });
  validateShowHidden(c, v.version, add);
  validateLoggingAndTracing(c, g, add);
  validateCommandLineOptions(c, v.options, add);
  warnings.push(...ineffectiveSettings(c));
  return { problems, warnings };
}

function validateEnforceNodeAllocatable(c: NodeagentConfiguration, add: Add): void {
  const levels = c.enforceNodeAllocatable;
  for (const level of levels) oneOf(add, 'enforceNodeAllocatable', level, ['none', 'pods', 'system-reserved', 'orch-reserved']);
  if (levels.includes('none') && levels.length > 1) add('enforceNodeAllocatable', '"none" cannot be combined with other options');
  if (levels.includes('system-reserved') && c.systemReservedCgroup === '') {
    add('enforceNodeAllocatable', '"system-reserved" needs systemReservedCgroup (--system-reserved-cgroup)');
  }
  if (levels.includes('orch-reserved') && c.orchReservedCgroup === '') {
    add('enforceNodeAllocatable', '"orch-reserved" needs orchReservedCgroup (--orch-reserved-cgroup)');
  }
  if (!c.cgroupsPerQOS && levels.some((l) => l !== 'none')) {
    add('enforceNodeAllocatable', 'is not supported unless cgroupsPerQOS (--cgroups-per-qos) is true; set it to [] or none');
  }
}

function validateShowHidden(c: NodeagentConfiguration, version: string, add: Add): void {
  if (c.showHiddenMetricsForVersion === '') return;
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  const previous = m === null ? undefined : `${m[1]}.${Number(m[2]) - 1}`;
  if (c.showHiddenMetricsForVersion !== previous) {
    add('showHiddenMetricsForVersion', `only the previous minor version (${previous ?? 'none'}) is allowed, got ${quoteValue(c.showHiddenMetricsForVersion)}`);
  }
}

function validateLoggingAndTracing(c: NodeagentConfiguration, g: FeatureGates, add: Add): void {
  const l = c.logging;
  oneOf(add, 'logging.format', l.format, ['text', 'json']);
  needsGate(add, g, 'logging.format', 'LoggingBetaOptions', l.format === 'json');
  if (l.format !== 'text' && l.vmodule.length > 0) add('logging.vmodule', 'is only supported with the text format');
  positiveDuration(add, 'logging.flushFrequency', l.flushFrequency);
  needsGate(add, g, 'logging.options.json.splitStream', 'LoggingAlphaOptions', l.options.json.splitStream);
  try {
    needsGate(add, g, 'logging.options.json.infoBufferSize', 'LoggingAlphaOptions', parseByteSize(l.options.json.infoBufferSize) !== 0);
  } catch (err) {
    add('logging.options.json.infoBufferSize', messageOf(err));
  }
  l.vmodule.forEach((m, i) => {
    if (m.filePattern === '') add(`logging.vmodule[${i}].filePattern`, 'must not be empty');
  });
  if (c.tracing !== null) {
    needsGate(add, g, 'tracing', 'NodeagentTracing', true);
    const rate = c.tracing.samplingRatePerMillion;
    if (rate !== null) range(add, 'tracing.samplingRatePerMillion', rate, 0, 1_000_000);
    if (c.tracing.endpoint !== '' && !/^[A-Za-z0-9.-]+:\d+$|^\[[0-9a-fA-F:]+\]:\d+$/.test(c.tracing.endpoint) && urlProblem(c.tracing.endpoint) !== undefined) {
      add('tracing.endpoint', `${quoteValue(c.tracing.endpoint)} is not host:port or an http(s) URL`);
    }
  }
}

function validateCommandLineOptions(c: NodeagentConfiguration, o: CommandLineOptions, add: Add): void {
  for (const p of nodeLabelProblems(o.nodeLabels)) add('--node-labels', p);
  if (o.nodeIP !== '') {
    const ips = o.nodeIP.split(',').map((s) => s.trim());
    ips.forEach((ip) => {
      const p = ipProblem(ip);
      if (p !== undefined) add('--node-ip', p);
    });
    if (ips.length > 2 || (ips.length === 2 && ips[0]?.includes(':') === ips[1]?.includes(':'))) {
      add('--node-ip', 'give one address, or two of different families (dual-stack, e.g. 10.0.0.5,fd00::5)');
    }
  }
  if (o.hostnameOverride !== '') {
    for (const p of validateDNS1123Subdomain(o.hostnameOverride.trim().toLowerCase())) add('--hostname-override', p);
  }
  if (o.imageCredentialProviderConfig !== '' && o.imageCredentialProviderBinDir === '') {
    add('--image-credential-provider-bin-dir', 'is required with --image-credential-provider-config');
  }
  const standalone = o.orchconfig === '' && o.bootstrapOrchconfig === '';
  if (standalone && c.enableServer && c.authentication.webhook.enabled) {
    add('authentication.webhook.enabled', 'webhook token authentication needs the API server (--orchconfig); disable it in standalone mode (--authentication-token-webhook=false)');
  }
  if (standalone && c.enableServer && c.serverTLSBootstrap && c.tlsCertFile === '' && c.tlsPrivateKeyFile === '') {
    add('serverTLSBootstrap', 'the serving certificate is requested from the API server (--orchconfig); in standalone mode give tlsCertFile and tlsPrivateKeyFile or turn serverTLSBootstrap off');
  }
  if (standalone && c.enableServer && c.authorization.mode === 'Webhook') {
    add('authorization.mode', 'Webhook authorization needs the API server (--orchconfig); use AlwaysAllow in standalone mode (--authorization-mode=AlwaysAllow)');
  }
}
