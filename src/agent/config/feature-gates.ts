/**
 * The kubelet's feature gates as of Kubernetes 1.28 (with the naming rule applied; the list a
 * test checks them against is testdata/feature-gates.txt), with their stage and default, the
 * AllAlpha/AllBeta group switches, and the resolution of a gate map given by the file and
 * the --feature-gates flag (flag entries override file entries one by one).
 */
import { compareKeys } from '../../api/order.js';

export type GateStage = 'alpha' | 'beta';

export interface GateSpec {
  readonly stage: GateStage;
  readonly default: boolean;
}

const betaOn = [
  'APIListChunking', 'APIPriorityAndFairness', 'APIResponseCompression', 'APIServerIdentity',
  'APIServerTracing', 'AdmissionWebhookMatchConditions', 'AggregatedDiscoveryEndpoint',
  'AnyVolumeDataSource', 'AppArmor', 'CPUManagerPolicyBetaOptions', 'CPUManagerPolicyOptions',
  'CSINodeExpandSecret', 'ComponentSLIs', 'CronJobsScheduledAnnotation',
  'CustomResourceValidationExpressions', 'ElasticIndexedJob', 'GracefulNodeShutdown',
  'GracefulNodeShutdownBasedOnPodPriority', 'HPAContainerMetrics', 'JobPodFailurePolicy',
  'JobReadyPods', 'KMSv2', 'NodeagentTracing', 'LogarithmicScaleDown', 'LoggingBetaOptions',
  'MatchLabelKeysInPodTopologySpread', 'MemoryManager', 'MinDomainsInPodTopologySpread',
  'NewVolumeManagerReconstruction', 'NodeInclusionPolicyInPodTopologySpread', 'OpenAPIEnums',
  'PDBUnhealthyPodEvictionPolicy', 'PodDeletionCost', 'PodDisruptionConditions', 'PodIndexLabel',
  'PodSchedulingReadiness', 'ReadWriteOncePod', 'RemainingItemCount',
  'RotateNodeagentServerCertificate', 'SELinuxMountReadWriteOncePod', 'SchedulerQueueingHints',
  'ServiceNodePortStaticSubrange', 'SizeMemoryBackedVolumes', 'StableLoadBalancerNodeSet',
  'StatefulSetAutoDeletePVC', 'StatefulSetStartOrdinal', 'StorageVersionHash',
  'TopologyAwareHints', 'TopologyManagerPolicyOptions', 'WinOverlay',
] as const;

// The spec names "CSIMigration<Provider> (one provider)": upstream's is Portworx.
const betaOff = [
  'CSIMigrationPortworx', 'EventedPLEG', 'KMSv2KDF', 'NodeSwap', 'TopologyManagerPolicyBetaOptions',
  'ValidatingAdmissionPolicy',
] as const;

const alphaOn = ['WinHostNetwork'] as const;

// "seven gates named InTreePlugin<Provider>Unregister (one per provider)".
const inTreeUnregister = ['AWS', 'AzureDisk', 'AzureFile', 'GCE', 'OpenStack', 'Portworx', 'vSphere'].map(
  (p) => `InTreePlugin${p}Unregister`,
);

const alphaOff = [
  'CPUManagerPolicyAlphaOptions', 'CRDValidationRatcheting', 'CSIVolumeHealth',
  'CloudControllerManagerWebhook', 'CloudDualStackNodeIPs', 'ClusterTrustBundle',
  'ConsistentListFromCache', 'ContainerCheckpoint', 'ContextualLogging',
  'CrossNamespaceVolumeDataSource', 'CustomCPUCFSQuotaPeriod', 'DevicePluginCDIDevices',
  'DisableCloudProviders', 'DisableNodeagentCloudCredentialProviders', 'DynamicResourceAllocation',
  'HPAScaleToZero', 'HonorPVReclaimPolicy', 'InPlacePodVerticalScaling', ...inTreeUnregister,
  'JobBackoffLimitPerIndex', 'JobPodReplacementPolicy', 'OrchProxyDrainingTerminatingNodes',
  'NodeagentCgroupDriverFromCRI', 'NodeagentInUserNamespace', 'NodeagentPodResourcesDynamicResources',
  'NodeagentPodResourcesGet', 'LegacyServiceAccountTokenCleanUp',
  'LocalStorageCapacityIsolationFSQuotaMonitoring', 'LoggingAlphaOptions', 'MaxUnavailableStatefulSet',
  'MemoryQoS', 'MultiCIDRRangeAllocator', 'MultiCIDRServiceAllocator', 'NodeLogQuery',
  'PersistentVolumeLastPhaseTransitionTime', 'PodAndContainerStatsFromCRI', 'PodHostIPs',
  'PodReadyToStartContainersCondition', 'ProcMountType', 'QOSReserved', 'RecoverVolumeExpansionFailure',
  'SecurityContextDeny', 'SidecarContainers', 'SkipReadOnlyValidationGCE', 'StorageVersionAPI',
  'TopologyManagerPolicyAlphaOptions', 'UnknownVersionInteroperabilityProxy',
  'UserNamespacesStatelessPodsSupport', 'VolumeCapacityPriority', 'WatchList', 'WinDSR',
];

function table(): ReadonlyMap<string, GateSpec> {
  const m = new Map<string, GateSpec>();
  for (const n of betaOn) m.set(n, { stage: 'beta', default: true });
  for (const n of betaOff) m.set(n, { stage: 'beta', default: false });
  for (const n of alphaOn) m.set(n, { stage: 'alpha', default: true });
  for (const n of alphaOff) m.set(n, { stage: 'alpha', default: false });
  return m;
}

/** Every known gate, by name. */
export const FEATURE_GATES: ReadonlyMap<string, GateSpec> = table();

export const ALL_ALPHA = 'AllAlpha';
export const ALL_BETA = 'AllBeta';

/** The resolved gates: `enabled(name)` for any known gate. */
export interface FeatureGates {
  enabled(name: string): boolean;
  /** Every known gate with its resolved value, sorted by name. */
  all(): ReadonlyMap<string, boolean>;
}

/**
 * Names in `requested` that are neither a known gate nor AllAlpha/AllBeta.
 * (Validation turns each into an error naming the gate.)
 */
export function unknownGates(requested: Readonly<Record<string, boolean>> | null): string[] {
  if (requested === null) return [];
  return Object.keys(requested).filter((n) => n !== ALL_ALPHA && n !== ALL_BETA && !FEATURE_GATES.has(n));
}

/**
 * Resolves the gates from an explicit map: an explicit entry wins; otherwise AllAlpha/AllBeta
 * turn on (or off) every gate of their stage; otherwise the gate's default. Unknown names are
 * ignored here (validation reports them).
 */
export function resolveFeatureGates(requested: Readonly<Record<string, boolean>> | null): FeatureGates {
  const explicit = requested ?? {};
  const allAlpha = explicit[ALL_ALPHA];
  const allBeta = explicit[ALL_BETA];
  const values = new Map<string, boolean>();
  for (const [name, spec] of [...FEATURE_GATES].sort(compareKeys)) {
    let v = explicit[name];
    if (v === undefined) {
      const group = spec.stage === 'alpha' ? allAlpha : allBeta;
      v = group ?? spec.default;
    }
    values.set(name, v);
  }
  return {
    enabled: (name) => values.get(name) ?? false,
    all: () => values,
  };
}

/** Help text for --feature-gates: one line a gate, as upstream prints them. */
export function featureGateHelp(): string {
  const lines = [`${ALL_ALPHA}=true|false (ALPHA - default=false)`, `${ALL_BETA}=true|false (BETA - default=false)`];
  for (const [name, spec] of [...FEATURE_GATES].sort(compareKeys)) {
    lines.push(`${name}=true|false (${spec.stage.toUpperCase()} - default=${spec.default})`);
  }
  return lines.join('\n');
}
