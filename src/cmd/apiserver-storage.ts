/**
 * Part of orch-apiserver's composition root: the storage resources (core v1 PersistentVolumes and
 * PersistentVolumeClaims, storage.orch.io/v1 StorageClasses, CSIDrivers, CSINodes and
 * VolumeAttachments) with their admission plugins (StorageObjectInUseProtection,
 * DefaultStorageClass reading the StorageClasses' registry), and the clients of those resources
 * that the storage control loops (and the scheduler) read and write through.
 */
import { realClock } from '../api/clock.js';
import { withDefaultStorageClass, withInUseProtection } from '../apiserver/admission/index.js';
import { registryClient } from '../apiserver/controllers/index.js';
import type { ResourceDefinition, ResourceRegistry } from '../apiserver/registry/index.js';
import { persistentVolumeClaimDefinition, persistentVolumeDefinition } from '../apiserver/resources/persistentvolumes/index.js';
import { STORAGE_DEFINITIONS } from '../apiserver/resources/storage/index.js';

export function storageDefinitions(registryOf: (group: string, plural: string) => ResourceRegistry): ResourceDefinition[] {
  const storageClasses = async (): Promise<readonly Record<string, unknown>[]> =>
    (await registryClient({ registry: registryOf('storage.orch.io', 'storageclasses'), clock: realClock }).list()).items;
  return [
    withInUseProtection(persistentVolumeDefinition),
    withDefaultStorageClass(withInUseProtection(persistentVolumeClaimDefinition), { storageClasses }),
    ...STORAGE_DEFINITIONS,
  ];
}

/** The storage clients of the controller manager, from its client maker. */
export function storageClients<C>(client: (group: string, plural: string) => C): Record<
  'persistentVolumes' | 'persistentVolumeClaims' | 'storageClasses' | 'csiDrivers' | 'csiNodes' | 'volumeAttachments', C
> {
  return {
    persistentVolumes: client('', 'persistentvolumes'),
    persistentVolumeClaims: client('', 'persistentvolumeclaims'),
    storageClasses: client('storage.orch.io', 'storageclasses'),
    csiDrivers: client('storage.orch.io', 'csidrivers'),
    csiNodes: client('storage.orch.io', 'csinodes'),
    volumeAttachments: client('storage.orch.io', 'volumeattachments'),
  };
}
