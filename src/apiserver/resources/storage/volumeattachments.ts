/**
 * storage.orch.io/v1 VolumeAttachment (cluster-scoped, with the status subresource the external
 * attacher writes): the attach/detach controller's request to attach a CSI volume to a node.
 * Upstream's v1 validation: attacher a CSI driver name, exactly one source (a PersistentVolume's
 * name, or an inline CSI volume spec), the node a node name, attachment metadata at most 256 KiB
 * and error messages at most 1024 characters; the spec never changes. Columns NAME ATTACHER PV
 * NODE ATTACHED AGE.
 */
import { validateDNS1123Subdomain } from '../../../api/labels.js';
import { validateCsiDriverName } from '../../../api/storage/index.js';
import { AGE_COLUMN, str, type ResourceDefinition, type WireObject } from '../../registry/index.js';
import type { FieldErrors } from '../../status/index.js';
import { immutable, rec } from '../common/index.js';
import { volumeAttachmentSchema } from './schema.js';

const MAX_METADATA_BYTES = 256 * 1024;
const MAX_ERROR_MESSAGE = 1024;

function validateInlineSpec(errors: FieldErrors, path: string, spec: WireObject): void {
  for (const field of ['claimRef', 'capacity', 'nodeAffinity', 'storageClassName']) {
    if (spec[field] !== undefined) errors.forbidden(`${path}.${field}`, 'may not be specified in the context of inline volumes');
  }
  if (spec.csi === undefined) errors.required(`${path}.csi`, 'has to be specified in the context of inline volumes');
  else {
    validateCsiDriverName(errors, `${path}.csi.driver`, str(rec(spec.csi).driver));
    if (str(rec(spec.csi).volumeHandle) === '') errors.required(`${path}.csi.volumeHandle`);
  }
  const policy = str(spec.persistentVolumeReclaimPolicy);
  if (policy !== '' && policy !== 'Retain') errors.forbidden(`${path}.persistentVolumeReclaimPolicy`, 'may only be Retain in the context of inline volumes');
}

function validate(va: WireObject, errors: FieldErrors): void {
  const spec = rec(va.spec);
  validateCsiDriverName(errors, 'spec.attacher', str(spec.attacher));
  const source = rec(spec.source);
  const pv = source.persistentVolumeName;
  const inline = source.inlineVolumeSpec;
  if (pv === undefined && inline === undefined) errors.required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName');
  else if (pv !== undefined && inline !== undefined) errors.forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName');
  else if (pv !== undefined) {
    if (str(pv) === '') errors.required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName');
    else errors.invalidEach('spec.source.persistentVolumeName', pv, validateDNS1123Subdomain(str(pv)));
  } else {
    validateInlineSpec(errors, 'spec.source.inlineVolumeSpec', rec(inline));
  }
  const node = str(spec.nodeName);
  if (node === '') errors.required('spec.nodeName');
  else errors.invalidEach('spec.nodeName', node, validateDNS1123Subdomain(node));
  const status = rec(va.status);
  let size = 0;
  for (const [k, v] of Object.entries(rec(status.attachmentMetadata))) size += Buffer.byteLength(k) + Buffer.byteLength(str(v));
  if (size > MAX_METADATA_BYTES) errors.tooLong('status.attachmentMetadata', MAX_METADATA_BYTES, 'bytes');
  for (const field of ['attachError', 'detachError']) {
    if (str(rec(status[field]).message).length > MAX_ERROR_MESSAGE) errors.tooLong(`status.${field}.message`, MAX_ERROR_MESSAGE);
  }
}

/** Go always writes `attached`, even false (the field has no omitempty). */
function withAttached(va: WireObject): void {
  const status = rec(va.status);
  status.attached ??= false;
  va.status = status;
}

export const volumeAttachmentDefinition: ResourceDefinition = {
  group: 'storage.orch.io',
  version: 'v1',
  kind: 'VolumeAttachment',
  listKind: 'VolumeAttachmentList',
  plural: 'volumeattachments',
  singular: 'volumeattachment',
  shortNames: [],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'volumeattachments',
  schema: volumeAttachmentSchema,
  statusSubresource: true,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    { name: 'Attacher', type: 'string', format: 'name', description: 'The CSI driver that attaches the volume.', priority: 0, cell: (o) => str(rec(o.spec).attacher) },
    { name: 'PV', type: 'string', description: 'The PersistentVolume attached.', priority: 0, cell: (o) => str(rec(rec(rec(o.spec).source)).persistentVolumeName) },
    { name: 'Node', type: 'string', description: 'The node the volume is attached to.', priority: 0, cell: (o) => str(rec(o.spec).nodeName) },
    { name: 'Attached', type: 'boolean', description: 'The volume is attached.', priority: 0, cell: (o) => rec(o.status).attached === true },
    AGE_COLUMN,
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    prepareForCreate: (va) => {
      va.status = { attached: false };
    },
    validateCreate: (va, errors) => {
      validate(va, errors);
    },
    prepareForUpdate: withAttached,
    validateUpdate: (va, old, errors) => {
      validate(va, errors);
      immutable(errors, 'spec', va.spec, old.spec);
    },
  },
};
