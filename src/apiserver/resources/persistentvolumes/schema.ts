/**
 * The wire schemas of core v1 PersistentVolume and PersistentVolumeClaim, upstream's shapes: the
 * volume sources this system mounts (hostPath, local, csi, flexVolume, nfs) in full, the cloud
 * and legacy in-tree sources kept as given (they are counted as sources and validated by
 * presence only); the claim spec shared with the claim template of generic ephemeral volumes.
 */
import { any, array, bool, object, objectMeta, objectReference, str, stringMap, time, type ObjectSchema, type Schema } from '../../schema/index.js';
import { quantities } from '../nodes/index.js';

export const labelSelectorSchema: ObjectSchema = object(
  {
    matchLabels: stringMap('Labels that must all be present with these values.'),
    matchExpressions: array(
      object({ key: str(), operator: str('In, NotIn, Exists or DoesNotExist.'), values: array(str()) }, { name: 'io.orch.apimachinery.meta.v1.LabelSelectorRequirement', required: ['key', 'operator'] }),
    ),
  },
  { name: 'io.orch.apimachinery.meta.v1.LabelSelector', mapType: 'atomic', description: 'A label query over a set of resources (matchLabels and matchExpressions are ANDed).' },
);

const requirement = object(
  { key: str(), operator: str('In, NotIn, Exists, DoesNotExist, Gt or Lt.'), values: array(str()) },
  { name: 'io.orch.api.core.v1.NodeSelectorRequirement', required: ['key', 'operator'] },
);

export const nodeSelectorSchema: ObjectSchema = object(
  {
    nodeSelectorTerms: array(
      object({ matchExpressions: array(requirement), matchFields: array(requirement) }, { name: 'io.orch.api.core.v1.NodeSelectorTerm', mapType: 'atomic' }),
      { description: 'The terms are ORed.' },
    ),
  },
  { name: 'io.orch.api.core.v1.NodeSelector', required: ['nodeSelectorTerms'], mapType: 'atomic' },
);

const secretReference = object({ name: str(), namespace: str() }, { name: 'io.orch.api.core.v1.SecretReference', mapType: 'atomic' });
const localObjectReference = object({ name: str() }, { name: 'io.orch.api.core.v1.LocalObjectReference', mapType: 'atomic' });

export const csiVolumeSourceSchema = object(
  {
    driver: str('The name of the CSI driver that handles this volume.'),
    readOnly: bool(),
    fsType: str(),
    volumeAttributes: stringMap('Driver-specific properties passed to the driver (NodePublishVolume volume_context).'),
    nodePublishSecretRef: localObjectReference,
  },
  { name: 'io.orch.api.core.v1.CSIVolumeSource', required: ['driver'] },
);

export const flexVolumeSourceSchema = object(
  { driver: str('The FlexVolume driver, <vendor>~<driver>.'), fsType: str(), secretRef: localObjectReference, readOnly: bool(), options: stringMap('Extra options passed to the driver.') },
  { name: 'io.orch.api.core.v1.FlexVolumeSource', required: ['driver'] },
);

const typedLocalRef = object({ apiGroup: str(), kind: str(), name: str() }, { name: 'io.orch.api.core.v1.TypedLocalObjectReference', required: ['kind', 'name'], mapType: 'atomic' });
const typedRef = object({ apiGroup: str(), kind: str(), name: str(), namespace: str() }, { name: 'io.orch.api.core.v1.TypedObjectReference', required: ['kind', 'name'] });

export const claimSpecSchema: ObjectSchema = object(
  {
    accessModes: array(str(), { description: 'ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.' }),
    selector: labelSelectorSchema,
    resources: object({ limits: quantities, requests: quantities }, { name: 'io.orch.api.core.v1.VolumeResourceRequirements' }),
    volumeName: str('The PersistentVolume the claim is bound to.'),
    storageClassName: str('The StorageClass the claim asks for; "" asks for volumes without a class.'),
    volumeMode: str('Filesystem (default) or Block.'),
    dataSource: typedLocalRef,
    dataSourceRef: typedRef,
    volumeAttributesClassName: str(),
  },
  { name: 'io.orch.api.core.v1.PersistentVolumeClaimSpec' },
);

export const claimTemplateSchema: ObjectSchema = object(
  { metadata: objectMeta, spec: claimSpecSchema },
  { name: 'io.orch.api.core.v1.PersistentVolumeClaimTemplate', required: ['spec'] },
);

export const ephemeralVolumeSourceSchema: ObjectSchema = object(
  { volumeClaimTemplate: claimTemplateSchema },
  { name: 'io.orch.api.core.v1.EphemeralVolumeSource' },
);

/** The in-tree sources of clouds and legacy storage systems: stored as given. */
const LEGACY_PV_SOURCES = [
  'gcePersistentDisk', 'awsElasticBlockStore', 'glusterfs', 'rbd', 'iscsi', 'cinder', 'cephfs', 'fc', 'flocker', 'azureFile',
  'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
] as const;

/** Every source a PersistentVolume may have (exactly one is set). */
export const PV_SOURCES: readonly string[] = ['hostPath', 'local', 'csi', 'flexVolume', 'nfs', ...LEGACY_PV_SOURCES];

const pvSources: Record<string, Schema> = {
  hostPath: object({ path: str(), type: str() }, { name: 'io.orch.api.core.v1.HostPathVolumeSource', required: ['path'] }),
  local: object({ path: str('The full path to the volume on the node (a directory or a block device).'), fsType: str() }, { name: 'io.orch.api.core.v1.LocalVolumeSource', required: ['path'] }),
  csi: object(
    {
      driver: str('The name of the CSI driver.'),
      volumeHandle: str('The volume\'s id as the driver knows it.'),
      readOnly: bool(),
      fsType: str(),
      volumeAttributes: stringMap(),
      controllerPublishSecretRef: secretReference,
      nodeStageSecretRef: secretReference,
      nodePublishSecretRef: secretReference,
      controllerExpandSecretRef: secretReference,
      nodeExpandSecretRef: secretReference,
    },
    { name: 'io.orch.api.core.v1.CSIPersistentVolumeSource', required: ['driver', 'volumeHandle'] },
  ),
  flexVolume: object(
    { driver: str(), fsType: str(), secretRef: secretReference, readOnly: bool(), options: stringMap() },
    { name: 'io.orch.api.core.v1.FlexPersistentVolumeSource', required: ['driver'] },
  ),
  nfs: object({ server: str(), path: str(), readOnly: bool() }, { name: 'io.orch.api.core.v1.NFSVolumeSource', required: ['server', 'path'] }),
  ...Object.fromEntries(LEGACY_PV_SOURCES.map((s) => [s, any('An in-tree volume source of a cloud or legacy storage system (stored as given).')])),
};

const pvSpec = object(
  {
    capacity: quantities,
    ...pvSources,
    accessModes: array(str(), { description: 'ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.' }),
    // An ObjectReference is atomic elsewhere; the claim reference is granular (upstream's
    // +structType=granular): the PV controller and an administrator each set parts of it.
    claimRef: object({ ...objectReference.properties }, { description: 'The claim the volume is bound to (set by the PV controller when it binds).' }),
    persistentVolumeReclaimPolicy: str('Retain (default), Delete or Recycle.'),
    storageClassName: str(),
    mountOptions: array(str()),
    volumeMode: str('Filesystem (default) or Block.'),
    nodeAffinity: object({ required: nodeSelectorSchema }, { name: 'io.orch.api.core.v1.VolumeNodeAffinity' }),
    volumeAttributesClassName: str(),
  },
  { name: 'io.orch.api.core.v1.PersistentVolumeSpec' },
);

export const persistentVolumeSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: PersistentVolume.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    spec: pvSpec,
    status: object(
      { phase: str('Pending, Available, Bound, Released or Failed.'), message: str(), reason: str(), lastPhaseTransitionTime: time() },
      { name: 'io.orch.api.core.v1.PersistentVolumeStatus' },
    ),
  },
  { name: 'io.orch.api.core.v1.PersistentVolume', gvk: [{ group: '', version: 'v1', kind: 'PersistentVolume' }], description: 'PersistentVolume is a storage resource provisioned by an administrator or a provisioner.' },
);

const claimCondition = object(
  { type: str(), status: str(), lastProbeTime: time(), lastTransitionTime: time(), reason: str(), message: str() },
  { name: 'io.orch.api.core.v1.PersistentVolumeClaimCondition', required: ['type', 'status'] },
);

export const persistentVolumeClaimSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: PersistentVolumeClaim.'),
    apiVersion: str('Versioned schema of the object: v1.'),
    metadata: objectMeta,
    spec: claimSpecSchema,
    status: object(
      {
        phase: str('Pending, Bound or Lost.'),
        accessModes: array(str()),
        capacity: quantities,
        conditions: array(claimCondition, { mergeKey: 'type', patchStrategy: 'merge' }),
        allocatedResources: quantities,
        allocatedResourceStatuses: stringMap(),
        currentVolumeAttributesClassName: str(),
        modifyVolumeStatus: object({ targetVolumeAttributesClassName: str(), status: str() }, { name: 'io.orch.api.core.v1.ModifyVolumeStatus', required: ['status'] }),
      },
      { name: 'io.orch.api.core.v1.PersistentVolumeClaimStatus' },
    ),
  },
  { name: 'io.orch.api.core.v1.PersistentVolumeClaim', gvk: [{ group: '', version: 'v1', kind: 'PersistentVolumeClaim' }], description: 'PersistentVolumeClaim is a user\'s request for and claim to a persistent volume.' },
);

