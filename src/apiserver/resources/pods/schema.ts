/**
 * The wire schema of core v1 Pod: spec (containers, volumes, scheduling and DNS fields,
 * tolerations...) and status (phase, conditions, container statuses, IPs), upstream's shape.
 * Strategic merge keys as upstream (containers, volumes, imagePullSecrets... by name,
 * conditions by type, podIPs by ip). The sources of storage drivers and claims (csi, flexVolume,
 * ephemeral) have their schemas; the other in-tree sources, affinity and security contexts are
 * kept as given (`any`); the pod validation of src/api/pod checks them.
 */
import { any, array, bool, int32, int64, object, objectMeta, str, stringMap, time, type ObjectSchema } from '../../schema/index.js';
import { quantities } from '../nodes/index.js';
import { csiVolumeSourceSchema, ephemeralVolumeSourceSchema, flexVolumeSourceSchema } from '../persistentvolumes/index.js';
import { containerSchema, downwardItems, ephemeralContainerSchema, keyToPaths } from './schema-container.js';

const LEGACY_SOURCES = [
  'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'cinder', 'cephfs',
  'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO',
  'storageos', 'image',
];

const volume = object(
  {
    name: str('Name of the volume, a DNS label unique within the pod.'),
    hostPath: object({ path: str(), type: str() }, { name: 'io.orch.api.core.v1.HostPathVolumeSource', required: ['path'] }),
    emptyDir: object({ medium: str(), sizeLimit: { type: 'int-or-string' } }, { name: 'io.orch.api.core.v1.EmptyDirVolumeSource' }),
    secret: object({ secretName: str(), items: keyToPaths, defaultMode: int32(), optional: bool() }, { name: 'io.orch.api.core.v1.SecretVolumeSource' }),
    configMap: object({ name: str(), items: keyToPaths, defaultMode: int32(), optional: bool() }, { name: 'io.orch.api.core.v1.ConfigMapVolumeSource' }),
    downwardAPI: object({ items: downwardItems, defaultMode: int32() }, { name: 'io.orch.api.core.v1.DownwardAPIVolumeSource' }),
    projected: object({ sources: array(any()), defaultMode: int32() }, { name: 'io.orch.api.core.v1.ProjectedVolumeSource' }),
    persistentVolumeClaim: object({ claimName: str(), readOnly: bool() }, { name: 'io.orch.api.core.v1.PersistentVolumeClaimVolumeSource', required: ['claimName'] }),
    csi: csiVolumeSourceSchema,
    flexVolume: flexVolumeSourceSchema,
    ephemeral: ephemeralVolumeSourceSchema,
    ...Object.fromEntries(LEGACY_SOURCES.map((s) => [s, any()])),
  },
  { name: 'io.orch.api.core.v1.Volume', required: ['name'] },
);

const toleration = object(
  {
    key: str('The taint key that the toleration applies to; empty matches all keys (with Exists).'),
    operator: str('Exists or Equal (default Equal).'),
    value: str('The taint value the toleration matches to.'),
    effect: str('The taint effect to match; empty matches all effects.'),
    tolerationSeconds: int64('For NoExecute: how long the pod stays bound after the taint appears.'),
  },
  { name: 'io.orch.api.core.v1.Toleration' },
);

const spec = object(
  {
    volumes: array(volume, { mergeKey: 'name', patchStrategy: 'merge' }),
    initContainers: array(containerSchema, { mergeKey: 'name', patchStrategy: 'merge' }),
    containers: array(containerSchema, { mergeKey: 'name', patchStrategy: 'merge' }),
    ephemeralContainers: array(ephemeralContainerSchema, { mergeKey: 'name', patchStrategy: 'merge' }),
    restartPolicy: str('Always, OnFailure or Never (default Always).'),
    terminationGracePeriodSeconds: int64('Seconds the pod needs to terminate gracefully (default 30).'),
    activeDeadlineSeconds: int64('Seconds the pod may be active before the node agent fails it.'),
    dnsPolicy: str('ClusterFirst, ClusterFirstWithHostNet, Default or None.'),
    nodeSelector: stringMap('Labels a node must have for the pod to fit on it.', { mapType: 'atomic' }),
    serviceAccountName: str('The service account the pod runs as.'),
    serviceAccount: str('Deprecated alias of serviceAccountName.'),
    automountServiceAccountToken: bool(),
    nodeName: str('The node the pod is bound to; the node agent of that node runs it.'),
    hostNetwork: bool(), hostPID: bool(), hostIPC: bool(), shareProcessNamespace: bool(),
    securityContext: any('Pod-level security attributes (PodSecurityContext).'),
    imagePullSecrets: array(object({ name: str() }, { name: 'io.orch.api.core.v1.LocalObjectReference', mapType: 'atomic' }), { mergeKey: 'name', patchStrategy: 'merge' }),
    hostname: str(), subdomain: str(),
    affinity: any('Scheduling constraints (Affinity).'),
    schedulerName: str(),
    tolerations: array(toleration),
    hostAliases: array(object({ ip: str(), hostnames: array(str()) }, { name: 'io.orch.api.core.v1.HostAlias', required: ['ip'] }), { mergeKey: 'ip', patchStrategy: 'merge' }),
    priorityClassName: str(), priority: int32(),
    dnsConfig: object(
      { nameservers: array(str()), searches: array(str()), options: array(object({ name: str(), value: str() }, { name: 'io.orch.api.core.v1.PodDNSConfigOption' })) },
      { name: 'io.orch.api.core.v1.PodDNSConfig' },
    ),
    readinessGates: array(object({ conditionType: str() }, { name: 'io.orch.api.core.v1.PodReadinessGate', required: ['conditionType'] })),
    runtimeClassName: str(),
    enableServiceLinks: bool(),
    preemptionPolicy: str(),
    overhead: quantities,
    topologySpreadConstraints: array(any(), { mergeKey: 'topologyKey', patchStrategy: 'merge', listMapKeys: ['topologyKey', 'whenUnsatisfiable'] }),
    setHostnameAsFQDN: bool(),
    os: object({ name: str('linux or windows.') }, { name: 'io.orch.api.core.v1.PodOS', required: ['name'] }),
    hostUsers: bool(),
    schedulingGates: array(object({ name: str() }, { name: 'io.orch.api.core.v1.PodSchedulingGate', required: ['name'] }), { mergeKey: 'name', patchStrategy: 'merge' }),
    resourceClaims: array(any(), { mergeKey: 'name', patchStrategy: 'merge' }),
  },
  { name: 'io.orch.api.core.v1.PodSpec', required: ['containers'] },
);

const state = object(
  {
    waiting: object({ reason: str(), message: str() }, { name: 'io.orch.api.core.v1.ContainerStateWaiting' }),
    running: object({ startedAt: time() }, { name: 'io.orch.api.core.v1.ContainerStateRunning' }),
    terminated: object(
      { exitCode: int32(), signal: int32(), reason: str(), message: str(), startedAt: time(), finishedAt: time(), containerID: str() },
      { name: 'io.orch.api.core.v1.ContainerStateTerminated', required: ['exitCode'] },
    ),
  },
  { name: 'io.orch.api.core.v1.ContainerState' },
);

const containerStatus = object(
  {
    name: str(), state, lastState: state, ready: bool(), restartCount: int32(), image: str(), imageID: str(), containerID: str(), started: bool(),
    allocatedResources: quantities, resources: any(), volumeMounts: array(any()), user: any(), allocatedResourcesStatus: array(any()),
  },
  { name: 'io.orch.api.core.v1.ContainerStatus', required: ['name', 'ready', 'restartCount', 'image', 'imageID'] },
);

// Server-side apply follows the same keys; tolerations, readiness gates and container statuses
// are atomic (no merge strategy), and hostIPs, merged by ip in patches, are applied whole.
const ips = (name: string, listType?: 'atomic'): ReturnType<typeof array> =>
  array(object({ ip: str() }, { name }), { mergeKey: 'ip', patchStrategy: 'merge', ...(listType === undefined ? {} : { listType }) });

const status = object(
  {
    phase: str('Pending, Running, Succeeded, Failed or Unknown.'),
    conditions: array(
      object(
        { type: str(), status: str(), lastProbeTime: time(), lastTransitionTime: time(), reason: str(), message: str() },
        { name: 'io.orch.api.core.v1.PodCondition', required: ['type', 'status'] },
      ),
      { mergeKey: 'type', patchStrategy: 'merge' },
    ),
    message: str(), reason: str(), nominatedNodeName: str(),
    hostIP: str(), hostIPs: ips('io.orch.api.core.v1.HostIP', 'atomic'),
    podIP: str(), podIPs: ips('io.orch.api.core.v1.PodIP'),
    startTime: time(),
    initContainerStatuses: array(containerStatus),
    containerStatuses: array(containerStatus),
    ephemeralContainerStatuses: array(containerStatus),
    qosClass: str('Guaranteed, Burstable or BestEffort.'),
    resize: str(),
    resourceClaimStatuses: array(any(), { mergeKey: 'name', patchStrategy: 'merge' }),
  },
  { name: 'io.orch.api.core.v1.PodStatus' },
);

export const podSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: Pod.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    spec,
    status,
  },
  { name: 'io.orch.api.core.v1.Pod', gvk: [{ group: '', version: 'v1', kind: 'Pod' }], description: 'Pod is a collection of containers that run on one node.' },
);
