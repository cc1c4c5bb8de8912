/**
 * The PV controller's decisions (upstream's syncClaim and syncVolume, v1.28), one object at a
 * time. Claims:
 *
 * | claim | volume | action |
 * |---|---|---|
 * | not bound yet, no volumeName | best match found | bind both |
 * | not bound yet, no volumeName | none, class binds on first use, no node chosen | event WaitForFirstConsumer / WaitForPodScheduled, Pending |
 * | not bound yet, no volumeName | none, a class (or a node chosen) | provision: external provisioner annotated, ExternalProvisioning; an in-tree name: ProvisioningFailed |
 * | not bound yet, no volumeName | none, no class | the default class given if there is one, else FailedBinding, Pending |
 * | not bound yet, volumeName set | missing | Pending |
 * | not bound yet, volumeName set | free and fitting / pre-bound to it | bind |
 * | not bound yet, volumeName set | free, not fitting | VolumeMismatch, Pending |
 * | not bound yet, volumeName set | bound elsewhere | FailedBinding, Pending |
 * | bound | gone, or volumeName cleared | Lost (ClaimLost) |
 * | bound | bound to another claim | Lost (ClaimMisbound) |
 * | bound | fine | (re)bind, idempotent |
 *
 * Volumes: no claimRef or a uid-less (pre-bound) one: Available; claim gone (or another claim of
 * that name): Released, then the reclaim policy (Retain: nothing; Delete: an external
 * provisioner's volume is left to it, any other is Failed "Error getting deleter volume plugin";
 * Recycle: Failed, no recycler); claim not bound yet: its sync is queued; claim bound to it: Bound;
 * claim bound elsewhere: the controller's binding undone.
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { isNotFound } from '../../../api/errors.js';
import {
  accessModesSatisfied, ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER, claimClass, IN_TREE_PLUGIN_PREFIX, isVolumeBoundToClaim, podClaimNames, volumeClass, volumeModeMismatch,
} from '../../../api/storage/index.js';
import { compareQuantities, parseQuantity } from '../../../api/quantity.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec } from '../../resources/common/index.js';
import { defaultStorageClass } from '../../resources/storage/index.js';
import type { EventRecorder, Informer, ResourceClient } from '../client/index.js';
import { findBestMatchForClaim } from './matching.js';
import type { VersionedStore } from './store.js';
import { hasAnnotation, type ClaimVolumeWriter } from './writer.js';

export interface SyncContext {
  readonly volumes: VersionedStore;
  readonly claims: VersionedStore;
  readonly classes: Informer;
  readonly pods: Informer;
  readonly claimsClient: ResourceClient;
  readonly writer: ClaimVolumeWriter;
  readonly recorder: EventRecorder;
  /** Queues a claim's sync (`namespace/name`). */
  readonly enqueueClaim: (key: string) => void;
}

const key = (o: WireObject): string => `${namespaceOf(o)}/${nameOf(o)}`;
const phaseOf = (o: WireObject): string => str(rec(o.status).phase);

/** The claim's class exists and binds on first use (upstream's IsDelayBindingMode). */
export function isDelayBinding(classes: Informer, claim: WireObject): boolean {
  const name = claimClass(claim);
  if (name === '') return false;
  return str(classes.get('', name)?.volumeBindingMode) === 'WaitForFirstConsumer';
}

/** Why the requested volume cannot take the claim (upstream's checkVolumeSatisfyClaim), or undefined. */
function volumeUnfit(volume: WireObject, claim: WireObject): string | undefined {
  const pv = volume as PersistentVolume;
  const pvc = claim as PersistentVolumeClaim;
  if (str(metaOf(volume).deletionTimestamp) !== '') return `the volume is marked for deletion "${nameOf(volume)}"`;
  try {
    if (compareQuantities(parseQuantity(pv.spec?.capacity?.storage ?? '0'), parseQuantity(pvc.spec?.resources?.requests?.storage ?? '0')) < 0) return 'requested PV is too small';
  } catch {
    return 'requested PV is too small';
  }
  if (volumeClass(pv) !== claimClass(pvc)) return 'storageClassName does not match';
  if (volumeModeMismatch(pvc, pv)) return 'incompatible volumeMode';
  if (!accessModesSatisfied(pvc, pv)) return 'incompatible accessMode';
  return undefined;
}

async function waitingForConsumer(ctx: SyncContext, claim: WireObject): Promise<void> {
  const waiting = ctx.pods.list()
    .filter((p) => namespaceOf(p) === namespaceOf(claim) && str(rec(p.spec).nodeName) === '' && !['Succeeded', 'Failed'].includes(phaseOf(p)))
    .filter((p) => podClaimNames(p).includes(nameOf(claim)))
    .map(nameOf);
  if (waiting.length === 0) ctx.recorder.record(claim, 'Normal', 'WaitForFirstConsumer', 'Binding', 'waiting for first consumer to be created before binding');
  else ctx.recorder.record(claim, 'Normal', 'WaitForPodScheduled', 'Binding', `waiting for ${waiting.length > 1 ? 'pods' : 'pod'} ${waiting.join(',')} to be scheduled`);
  await ctx.writer.updateClaimStatus(claim, 'Pending', undefined);
}

/** Upstream's provisionClaim: only external provisioners make volumes here; the claim is annotated for them. */
async function provisionClaim(ctx: SyncContext, claim: WireObject): Promise<void> {
  const className = claimClass(claim);
  const sc = ctx.classes.get('', className);
  if (sc === undefined) {
    ctx.recorder.record(claim, 'Warning', 'ProvisioningFailed', 'Provisioning', `storageclass.storage.orch.io "${className}" not found`);
    return;
  }
  const provisioner = str(sc.provisioner);
  if (provisioner.startsWith(IN_TREE_PLUGIN_PREFIX)) {
    ctx.recorder.record(claim, 'Warning', 'ProvisioningFailed', 'Provisioning', `no volume plugin matched name: ${provisioner}`);
    return;
  }
  const annotated = await ctx.writer.annotateClaim(claim, { [ANN_STORAGE_PROVISIONER]: provisioner, [ANN_BETA_STORAGE_PROVISIONER]: provisioner });
  ctx.recorder.record(annotated, 'Normal', 'ExternalProvisioning', 'Provisioning',
    `waiting for a volume to be created, either by external provisioner "${provisioner}" or manually created by system administrator`);
}

async function syncUnboundClaim(ctx: SyncContext, claim: WireObject): Promise<void> {
  const requested = str(rec(claim.spec).volumeName);
  if (requested === '') {
    const delay = isDelayBinding(ctx.classes, claim);
    const volume = findBestMatchForClaim(claim, ctx.volumes.list(), delay);
    if (volume !== undefined) {
      await ctx.writer.bind(volume as WireObject, claim);
      return;
    }
    if (rec(claim.spec).storageClassName === undefined) {
      const fallback = defaultStorageClass(ctx.classes.list());
      if (fallback !== undefined) {
        await ctx.writer.setClaimClass(claim, nameOf(fallback));
        return;
      }
    }
    if (delay && !hasAnnotation(claim, ANN_SELECTED_NODE)) {
      await waitingForConsumer(ctx, claim);
      return;
    }
    if (claimClass(claim) !== '') {
      await provisionClaim(ctx, claim);
      return;
    }
    ctx.recorder.record(claim, 'Normal', 'FailedBinding', 'Binding', 'no persistent volumes available for this claim and no storage class is set');
    await ctx.writer.updateClaimStatus(claim, 'Pending', undefined);
    return;
  }
  const volume = ctx.volumes.get(requested);
  if (volume === undefined) {
    await ctx.writer.updateClaimStatus(claim, 'Pending', undefined);
    return;
  }
  const pv = volume as PersistentVolume;
  if (pv.spec?.claimRef === undefined) {
    const unfit = volumeUnfit(volume, claim);
    if (unfit === undefined) {
      await ctx.writer.bind(volume, claim);
      return;
    }
    ctx.recorder.record(claim, 'Warning', 'VolumeMismatch', 'Binding', `Cannot bind to requested volume "${requested}": ${unfit}`);
    await ctx.writer.updateClaimStatus(claim, 'Pending', undefined);
    return;
  }
  if (isVolumeBoundToClaim(pv, claim)) {
    await ctx.writer.bind(volume, claim);
    return;
  }
  ctx.recorder.record(claim, 'Warning', 'FailedBinding', 'Binding', `volume "${requested}" already bound to a different claim.`);
  if (hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER)) {
    throw new Error(`Invalid binding of claim "${key(claim)}" to volume "${requested}": volume already claimed by "${str(pv.spec.claimRef.namespace)}/${str(pv.spec.claimRef.name)}"`);
  }
  await ctx.writer.updateClaimStatus(claim, 'Pending', undefined);
}

async function syncBoundClaim(ctx: SyncContext, claim: WireObject): Promise<void> {
  const name = str(rec(claim.spec).volumeName);
  if (name === '') {
    await ctx.writer.updateClaimStatusWithEvent(claim, 'Lost', 'Warning', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
    return;
  }
  const volume = ctx.volumes.get(name);
  if (volume === undefined) {
    await ctx.writer.updateClaimStatusWithEvent(claim, 'Lost', 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
    return;
  }
  const ref = (volume as PersistentVolume).spec?.claimRef;
  if (ref === undefined || ref.uid === str(metaOf(claim).uid)) {
    await ctx.writer.bind(volume, claim);
    return;
  }
  await ctx.writer.updateClaimStatusWithEvent(claim, 'Lost', 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
}

export async function syncClaim(ctx: SyncContext, claim: WireObject): Promise<void> {
  if (!hasAnnotation(claim, ANN_BIND_COMPLETED)) await syncUnboundClaim(ctx, claim);
  else await syncBoundClaim(ctx, claim);
}

/** The claim a volume's claimRef names, looked for in the API when the controller has not seen it (it may be new). */
async function claimOfVolume(ctx: SyncContext, volume: WireObject): Promise<WireObject | undefined> {
  const ref = rec(rec(volume.spec).claimRef);
  const ns = str(ref.namespace);
  const name = str(ref.name);
  const cached = ctx.claims.get(`${ns}/${name}`);
  if (cached !== undefined || ['Released', 'Failed'].includes(phaseOf(volume))) return cached;
  try {
    return await ctx.claimsClient.get(ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function reclaimVolume(ctx: SyncContext, volume: WireObject): Promise<void> {
  const policy = str(rec(volume.spec).persistentVolumeReclaimPolicy);
  switch (policy) {
    case 'Retain':
      return;
    case 'Recycle':
      await ctx.writer.updateVolumePhaseWithEvent(volume, 'Failed', 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
      return;
    case 'Delete': {
      if (str(metaOf(volume).deletionTimestamp) !== '') return;
      const provisioner = str(rec(metaOf(volume).annotations)[ANN_DYNAMICALLY_PROVISIONED]);
      // An external provisioner deletes the volumes it made; this controller has no deleter of its own.
      if (provisioner !== '' && !provisioner.startsWith(IN_TREE_PLUGIN_PREFIX)) return;
      const message = `Error getting deleter volume plugin for volume "${nameOf(volume)}": no deletable volume plugin matched`;
      await ctx.writer.updateVolumePhaseWithEvent(volume, 'Failed', 'Warning', 'VolumeFailedDelete', message);
      return;
    }
    default:
      await ctx.writer.updateVolumePhaseWithEvent(volume, 'Failed', 'Warning', 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy');
  }
}

export async function syncVolume(ctx: SyncContext, volume: WireObject): Promise<void> {
  const ref = (volume as PersistentVolume).spec?.claimRef;
  if (ref === undefined || (ref.uid ?? '') === '') {
    await ctx.writer.updateVolumePhase(volume, 'Available', '');
    return;
  }
  let claim = await claimOfVolume(ctx, volume);
  if (claim !== undefined && str(metaOf(claim).uid) !== ref.uid) claim = undefined;
  if (claim === undefined) {
    let current = volume;
    if (!['Released', 'Failed'].includes(phaseOf(volume))) current = await ctx.writer.updateVolumePhase(volume, 'Released', '');
    await reclaimVolume(ctx, current);
    return;
  }
  const claimVolume = str(rec(claim.spec).volumeName);
  if (claimVolume === '') {
    if (volumeModeMismatch(claim, volume)) {
      ctx.recorder.record(volume, 'Warning', 'VolumeMismatch', 'Binding', `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${nameOf(claim)}" due to incompatible volumeMode.`);
      ctx.recorder.record(claim, 'Warning', 'VolumeMismatch', 'Binding', `Cannot bind PersistentVolume "${nameOf(volume)}" to requested PersistentVolumeClaim due to incompatible volumeMode.`);
      return;
    }
    // The binding is the claim's sync to finish.
    ctx.enqueueClaim(key(claim));
    return;
  }
  if (claimVolume === nameOf(volume)) {
    await ctx.writer.updateVolumePhase(volume, 'Bound', '');
    return;
  }
  // The claim is bound to another volume.
  const dynamic = hasAnnotation(volume, ANN_DYNAMICALLY_PROVISIONED) && str(rec(volume.spec).persistentVolumeReclaimPolicy) === 'Delete';
  if (dynamic) {
    let current = volume;
    if (!['Released', 'Failed'].includes(phaseOf(volume))) current = await ctx.writer.updateVolumePhase(volume, 'Released', '');
    await reclaimVolume(ctx, current);
    return;
  }
  await ctx.writer.unbindVolume(volume);
}
