/**
 * The storage objects as both binaries see them (core/v1 PersistentVolume and
 * PersistentVolumeClaim, storage.orch.io/v1 CSI objects): upstream's annotations, finalizers and
 * plugin names with the naming rule applied, the rules that say which volume satisfies which
 * claim and where a volume may be used, the claims a pod uses, the names of CSI attachments, and
 * the validation of claim specs and claim templates shared by the API server and pod validation.
 *
 * Owns: the rules of those objects, independent of who holds them. Must not: do I/O, keep state,
 * or know the API server's registry or the node agent's volume manager.
 */
export * from './names.js';
export {
  accessModesSatisfied, accessModesText, claimClass, claimOfVolume, csiAttachmentName, csiUniqueVolumeName, ephemeralClaimName,
  ephemeralClaimOwnerProblem, isDefaultStorageClass, isVolumeBoundToClaim, podClaimNames, volumeClass, volumeModeMismatch, volumeNodeAffinityMatches,
} from './volumes.js';
export { validateAccessModes, validateClaimSpec, validateClaimTemplate, validateClassName, validateCsiDriverName } from './validation.js';
