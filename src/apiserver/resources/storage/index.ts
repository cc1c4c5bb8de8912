/**
 * resources/storage: the storage.orch.io/v1 group (upstream's storage.k8s.io/v1): StorageClass
 * (`sc`), CSIDriver, CSINode and VolumeAttachment, with upstream's defaults, validation (every
 * problem a 422 cause naming its field) and kubectl columns; and the choice of the default
 * StorageClass that admission and the PV controller share.
 *
 * Must not: know HTTP, the store, or what the control loops do with these objects.
 */
import type { ResourceDefinition } from '../../registry/index.js';
import { csiDriverDefinition, csiNodeDefinition } from './csi.js';
import { storageClassDefinition } from './storageclasses.js';
import { volumeAttachmentDefinition } from './volumeattachments.js';

export { csiDriverDefinition, csiNodeDefinition, storageClassDefinition, volumeAttachmentDefinition };
export { defaultStorageClass } from './storageclasses.js';
export { csiDriverSchema, csiNodeSchema, storageClassSchema, volumeAttachmentSchema } from './schema.js';

/** Every definition of the group, in discovery's order. */
export const STORAGE_DEFINITIONS: readonly ResourceDefinition[] = [storageClassDefinition, csiDriverDefinition, csiNodeDefinition, volumeAttachmentDefinition];
