/**
 * The storage admission plugins (upstream's, enabled by default):
 *
 * - StorageObjectInUseProtection: a new PersistentVolumeClaim gets the finalizer
 *   `orch.io/pvc-protection` and a new PersistentVolume `orch.io/pv-protection`; the protection
 *   controllers remove them once nothing uses the object, so a claim in use by a pod, or a volume
 *   bound to a claim, outlives its deletion until then.
 * - DefaultStorageClass: a new claim that names no class (spec.storageClassName absent and no
 *   beta class annotation) gets the default StorageClass (`storageclass.orch.io/is-default-class:
 *   "true"`; the newest when several are); an explicit "" stays.
 *
 * Updates are left alone, as upstream.
 */
import { ANN_BETA_STORAGE_CLASS, PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../../api/storage/index.js';
import { finalizersOf, metaOf, nameOf, type ResourceDefinition, type WireObject } from '../registry/index.js';
import { rec } from '../resources/common/index.js';
import { defaultStorageClass } from '../resources/storage/index.js';

function addFinalizer(object: WireObject, finalizer: string): void {
  const finalizers = finalizersOf(object);
  if (!finalizers.includes(finalizer)) metaOf(object).finalizers = [...finalizers, finalizer];
}

/** The definition with a protection finalizer added to every new object before its own defaults. */
export function withInUseProtection(def: ResourceDefinition): ResourceDefinition {
  const finalizer = def.plural === 'persistentvolumes' ? PV_PROTECTION_FINALIZER : PVC_PROTECTION_FINALIZER;
  const base = def.strategy;
  return {
    ...def,
    strategy: {
      ...base,
      prepareForCreate: (object, ctx) => {
        addFinalizer(object, finalizer);
        base.prepareForCreate?.(object, ctx);
      },
    },
  };
}

export interface DefaultStorageClassOptions {
  /** The StorageClasses as they are now (wire form). */
  readonly storageClasses: () => Promise<readonly WireObject[]>;
}

/** Sets the default class on a new claim that names none (in place). */
export async function admitDefaultStorageClass(options: DefaultStorageClassOptions, claim: WireObject): Promise<void> {
  const spec = rec(claim.spec);
  if (spec.storageClassName !== undefined || rec(metaOf(claim).annotations)[ANN_BETA_STORAGE_CLASS] !== undefined) return;
  const chosen = defaultStorageClass(await options.storageClasses());
  if (chosen === undefined) return;
  spec.storageClassName = nameOf(chosen);
  claim.spec = spec;
}

/** The claims definition with DefaultStorageClass as its admit step (after any it had). */
export function withDefaultStorageClass(def: ResourceDefinition, options: DefaultStorageClassOptions): ResourceDefinition {
  const base = def.strategy;
  return {
    ...def,
    strategy: {
      ...base,
      admit: async (object, ctx, namespace) => {
        await base.admit?.(object, ctx, namespace);
        await admitDefaultStorageClass(options, object);
      },
    },
  };
}
