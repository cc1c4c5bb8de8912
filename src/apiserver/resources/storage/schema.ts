/**
 * The wire schemas of storage.orch.io/v1 (upstream's storage.k8s.io/v1): StorageClass, CSIDriver,
 * CSINode and VolumeAttachment.
 */
import { array, bool, int32, int64, object, objectMeta, str, stringMap, time, type ObjectSchema } from '../../schema/index.js';
import { persistentVolumeSchema } from '../persistentvolumes/index.js';

const GROUP = 'storage.orch.io';
const gvk = (kind: string): { gvk: { group: string; version: string; kind: string }[] } => ({ gvk: [{ group: GROUP, version: 'v1', kind }] });

const topologyTerm = object(
  {
    matchLabelExpressions: array(
      object({ key: str('The label key that the selector applies to.'), values: array(str()) }, { name: 'io.orch.api.core.v1.TopologySelectorLabelRequirement', required: ['key', 'values'] }),
    ),
  },
  { name: 'io.orch.api.core.v1.TopologySelectorTerm', mapType: 'atomic' },
);

export const storageClassSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: StorageClass.'),
    apiVersion: str('Versioned schema of the object: storage.orch.io/v1.'),
    metadata: objectMeta,
    provisioner: str('The provisioner of the class\'s volumes (a CSI driver\'s name, or orch.io/no-provisioner).'),
    parameters: stringMap('Parameters for the provisioner.'),
    reclaimPolicy: str('Delete (default) or Retain: the reclaim policy of the volumes provisioned for the class.'),
    mountOptions: array(str()),
    allowVolumeExpansion: bool(),
    volumeBindingMode: str('Immediate (default) or WaitForFirstConsumer.'),
    allowedTopologies: array(topologyTerm),
  },
  { name: 'io.orch.api.storage.v1.StorageClass', ...gvk('StorageClass'), required: ['provisioner'], description: 'StorageClass describes a class of storage for which PersistentVolumes can be provisioned.' },
);

export const csiDriverSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: CSIDriver.'),
    apiVersion: str('Versioned schema of the object: storage.orch.io/v1.'),
    metadata: objectMeta,
    spec: object(
      {
        attachRequired: bool('The driver needs an attach (ControllerPublishVolume): the attach/detach controller makes VolumeAttachments. Default true.'),
        podInfoOnMount: bool('The node agent passes the pod\'s name, namespace and uid on NodePublishVolume. Default false.'),
        volumeLifecycleModes: array(str(), { listType: 'set', description: 'Persistent (default) and/or Ephemeral (inline csi volumes).' }),
        storageCapacity: bool(),
        fsGroupPolicy: str('ReadWriteOnceWithFSType (default), File or None.'),
        tokenRequests: array(object({ audience: str(), expirationSeconds: int64() }, { name: 'io.orch.api.storage.v1.TokenRequest', required: ['audience'] })),
        requiresRepublish: bool(),
        seLinuxMount: bool(),
      },
      { name: 'io.orch.api.storage.v1.CSIDriverSpec' },
    ),
  },
  { name: 'io.orch.api.storage.v1.CSIDriver', ...gvk('CSIDriver'), required: ['spec'], description: 'CSIDriver captures information about a CSI volume driver deployed on the cluster.' },
);

export const csiNodeSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: CSINode.'),
    apiVersion: str('Versioned schema of the object: storage.orch.io/v1.'),
    metadata: objectMeta,
    spec: object(
      {
        drivers: array(
          object(
            {
              name: str('The CSI driver\'s name.'),
              nodeID: str('The node as the driver knows it (NodeGetInfo).'),
              topologyKeys: array(str()),
              allocatable: object({ count: int32('The most volumes of the driver the node may use.') }, { name: 'io.orch.api.storage.v1.VolumeNodeResources' }),
            },
            { name: 'io.orch.api.storage.v1.CSINodeDriver', required: ['name', 'nodeID'] },
          ),
          { mergeKey: 'name', patchStrategy: 'merge' },
        ),
      },
      { name: 'io.orch.api.storage.v1.CSINodeSpec', required: ['drivers'] },
    ),
  },
  { name: 'io.orch.api.storage.v1.CSINode', ...gvk('CSINode'), required: ['spec'], description: 'CSINode holds information about the CSI drivers installed on a node (same name as the node).' },
);

const volumeError = object({ time: time(), message: str() }, { name: 'io.orch.api.storage.v1.VolumeError' });

export const volumeAttachmentSchema: ObjectSchema = object(
  {
    kind: str('Kind of the object: VolumeAttachment.'),
    apiVersion: str('Versioned schema of the object: storage.orch.io/v1.'),
    metadata: objectMeta,
    spec: object(
      {
        attacher: str('The CSI driver that attaches the volume.'),
        source: object(
          { persistentVolumeName: str(), inlineVolumeSpec: persistentVolumeSchema.properties.spec ?? object({}) },
          { name: 'io.orch.api.storage.v1.VolumeAttachmentSource' },
        ),
        nodeName: str('The node the volume is attached to.'),
      },
      { name: 'io.orch.api.storage.v1.VolumeAttachmentSpec', required: ['attacher', 'source', 'nodeName'] },
    ),
    status: object(
      { attached: bool('Set by the external attacher once the volume is attached.'), attachmentMetadata: stringMap(), attachError: volumeError, detachError: volumeError },
      { name: 'io.orch.api.storage.v1.VolumeAttachmentStatus', required: ['attached'] },
    ),
  },
  { name: 'io.orch.api.storage.v1.VolumeAttachment', ...gvk('VolumeAttachment'), required: ['spec'], description: 'VolumeAttachment captures the intent to attach or detach a volume to or from a node.' },
);
