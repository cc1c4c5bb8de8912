/**
 * resources/persistentvolumes: core v1 PersistentVolume (`pv`) and PersistentVolumeClaim (`pvc`)
 * with upstream's defaults, validation (every problem a 422 cause naming its field), status
 * subresources and kubectl columns; and the schemas of the claim spec and the csi, flexVolume and
 * ephemeral volume sources that the pod schema embeds.
 *
 * Must not: know HTTP, the store, or who binds claims to volumes (controllers/persistentvolume).
 */
export { persistentVolumeClaimDefinition, persistentVolumeDefinition } from './definitions.js';
export {
  claimSpecSchema, claimTemplateSchema, csiVolumeSourceSchema, ephemeralVolumeSourceSchema, flexVolumeSourceSchema, labelSelectorSchema,
  nodeSelectorSchema, persistentVolumeClaimSchema, persistentVolumeSchema, PV_SOURCES,
} from './schema.js';
export { quantityText } from './quantities.js';
