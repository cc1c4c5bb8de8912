/**
 * The core v1 definitions of PersistentVolume (`pv`, cluster-scoped) and PersistentVolumeClaim
 * (`pvc`, namespaced), both with the status subresource the PV controller writes: upstream's
 * defaults (reclaim policy Retain, volume mode Filesystem, a new object's phase Pending), its
 * validation, the phase's lastPhaseTransitionTime, and kubectl's columns (v1.28's printers).
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { formatTime } from '../../../api/time.js';
import { accessModesText, claimClass, volumeClass } from '../../../api/storage/index.js';
import { AGE_COLUMN, metaOf, str, type ResourceDefinition, type StrategyContext, type WireObject } from '../../registry/index.js';
import { normalizeQuantities, rec } from '../common/index.js';
import { validateClaim, validateClaimUpdate } from './claim-validation.js';
import { quantityText } from './quantities.js';
import { persistentVolumeClaimSchema, persistentVolumeSchema } from './schema.js';
import { validatePersistentVolume, validatePersistentVolumeUpdate } from './volume-validation.js';

const deleting = (o: WireObject): boolean => str(metaOf(o).deletionTimestamp) !== '';
const volumeModeCell = (o: WireObject): string => str(rec(o.spec).volumeMode) || '<unset>';

function defaultVolume(pv: WireObject): void {
  const spec = rec(pv.spec);
  if (str(spec.persistentVolumeReclaimPolicy) === '') spec.persistentVolumeReclaimPolicy = 'Retain';
  spec.volumeMode ??= 'Filesystem';
  if (spec.hostPath !== undefined) rec(spec.hostPath).type ??= '';
  normalizeQuantities(spec.capacity);
  pv.spec = spec;
}

function defaultClaim(pvc: WireObject): void {
  const spec = rec(pvc.spec);
  spec.volumeMode ??= 'Filesystem';
  normalizeQuantities(rec(spec.resources).requests);
  normalizeQuantities(rec(spec.resources).limits);
  pvc.spec = spec;
}

/** Status writes: the phase's transition time follows the phase (upstream's PersistentVolumeLastPhaseTransitionTime). */
function stampPhase(object: WireObject, old: WireObject, ctx: StrategyContext): void {
  const status = rec(object.status);
  if (ctx.subresource === 'status' && str(status.phase) !== str(rec(old.status).phase)) {
    status.lastPhaseTransitionTime = formatTime(ctx.now.getTime());
    object.status = status;
  }
}

export const persistentVolumeDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  listKind: 'PersistentVolumeList',
  plural: 'persistentvolumes',
  singular: 'persistentvolume',
  shortNames: ['pv'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'persistentvolumes',
  schema: persistentVolumeSchema,
  statusSubresource: true,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    { name: 'Capacity', type: 'string', description: 'The volume\'s storage capacity.', priority: 0, cell: (o) => quantityText(rec(rec(o.spec).capacity).storage) },
    { name: 'Access Modes', type: 'string', description: 'The ways the volume can be mounted.', priority: 0, cell: (o) => accessModesText((o as PersistentVolume).spec?.accessModes) },
    { name: 'Reclaim Policy', type: 'string', description: 'What happens to the volume once its claim is released.', priority: 0, cell: (o) => str(rec(o.spec).persistentVolumeReclaimPolicy) },
    { name: 'Status', type: 'string', description: 'The phase of the volume.', priority: 0, cell: (o) => (deleting(o) ? 'Terminating' : str(rec(o.status).phase)) },
    {
      name: 'Claim', type: 'string', description: 'The claim the volume is bound to.', priority: 0,
      cell: (o) => {
        const ref = rec(o.spec).claimRef;
        return ref === undefined ? '' : `${str(rec(ref).namespace)}/${str(rec(ref).name)}`;
      },
    },
    { name: 'StorageClass', type: 'string', description: 'StorageClass of the pv', priority: 0, cell: (o) => volumeClass(o) },
    { name: 'Reason', type: 'string', description: 'Why the volume is in its phase.', priority: 0, cell: (o) => str(rec(o.status).reason) },
    AGE_COLUMN,
    { name: 'VolumeMode', type: 'string', description: 'Filesystem or Block.', priority: 1, cell: volumeModeCell },
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    prepareForCreate: (pv, ctx) => {
      defaultVolume(pv);
      pv.status = { phase: 'Pending', lastPhaseTransitionTime: formatTime(ctx.now.getTime()) };
    },
    validateCreate: (pv, errors) => {
      validatePersistentVolume(pv, errors);
    },
    prepareForUpdate: (pv, old, ctx) => {
      defaultVolume(pv);
      stampPhase(pv, old, ctx);
    },
    validateUpdate: (pv, old, errors) => {
      validatePersistentVolumeUpdate(pv, old, errors);
    },
  },
};

export const persistentVolumeClaimDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  listKind: 'PersistentVolumeClaimList',
  plural: 'persistentvolumeclaims',
  singular: 'persistentvolumeclaim',
  shortNames: ['pvc'],
  categories: [],
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  storage: 'persistentvolumeclaims',
  schema: persistentVolumeClaimSchema,
  statusSubresource: true,
  fieldLabels: [],
  fields: () => ({}),
  columns: [
    { name: 'Status', type: 'string', description: 'The phase of the claim.', priority: 0, cell: (o) => (deleting(o) ? 'Terminating' : str(rec(o.status).phase)) },
    { name: 'Volume', type: 'string', description: 'The volume the claim is bound to.', priority: 0, cell: (o) => str(rec(o.spec).volumeName) },
    {
      name: 'Capacity', type: 'string', description: 'The capacity of the bound volume.', priority: 0,
      cell: (o) => (str(rec(o.spec).volumeName) === '' ? '' : quantityText(rec(rec(o.status).capacity).storage)),
    },
    {
      name: 'Access Modes', type: 'string', description: 'The access modes of the bound volume.', priority: 0,
      cell: (o) => (str(rec(o.spec).volumeName) === '' ? '' : accessModesText((o as PersistentVolumeClaim).status?.accessModes)),
    },
    { name: 'StorageClass', type: 'string', description: 'StorageClass of the pvc', priority: 0, cell: (o) => claimClass(o) },
    AGE_COLUMN,
    { name: 'VolumeMode', type: 'string', description: 'Filesystem or Block.', priority: 1, cell: volumeModeCell },
  ],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  strategy: {
    prepareForCreate: (pvc) => {
      defaultClaim(pvc);
      pvc.status = { phase: 'Pending' };
    },
    validateCreate: (pvc, errors) => {
      validateClaim(pvc, errors);
    },
    prepareForUpdate: (pvc) => {
      defaultClaim(pvc);
    },
    validateUpdate: (pvc, old, errors) => {
      validateClaimUpdate(pvc, old, errors);
    },
  },
};
