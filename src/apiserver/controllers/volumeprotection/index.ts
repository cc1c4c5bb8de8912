/**
 * controllers/volumeprotection: persistentvolumeclaim-protection-controller and
 * persistentvolume-protection-controller: the StorageObjectInUseProtection finalizers
 * (`orch.io/pvc-protection`, `orch.io/pv-protection`) leave a deleted claim in place while a pod
 * uses it, and a deleted volume while it is bound; these loops remove them once that is over (and
 * add them to objects that lack them).
 *
 * Must not: touch the store, or change anything of the objects but those finalizers.
 */
export { ClaimProtectionController, podUsesClaim, VolumeProtectionController, type ClaimProtectionOptions, type VolumeProtectionOptions } from './protection.js';
