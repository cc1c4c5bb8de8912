/**
 * The PV controller's writes (upstream's updateClaimStatus, updateVolumePhase, bind, unbind),
 * each kept in the controller's store once it succeeded. A write that would change nothing is not
 * made; every method throws what the client throws (the sync is tried again).
 */
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, isVolumeBoundToClaim } from '../../../api/storage/index.js';
import { cloneJson, jsonEqual } from '../../patch/index.js';
import { metaOf, nameOf, namespaceOf, resourceVersionOf, str, type WireObject } from '../../registry/index.js';
import { rec } from '../../resources/common/index.js';
import type { EventRecorder, EventType, ResourceClient } from '../client/index.js';
import type { VersionedStore } from './store.js';

export interface WriterOptions {
  readonly volumesClient: ResourceClient;
  readonly claimsClient: ResourceClient;
  readonly volumes: VersionedStore;
  readonly claims: VersionedStore;
  readonly recorder: EventRecorder;
}

export const hasAnnotation = (o: WireObject, key: string): boolean => rec(metaOf(o).annotations)[key] !== undefined;

function setAnnotation(o: WireObject, key: string, value: string): void {
  const meta = metaOf(o);
  meta.annotations = { ...rec(meta.annotations), [key]: value };
}

/** The claimRef a volume bound to `claim` carries (client-go's GetReference). */
export function claimReference(claim: WireObject): WireObject {
  const meta = metaOf(claim);
  return { kind: 'PersistentVolumeClaim', namespace: namespaceOf(claim), name: nameOf(claim), uid: str(meta.uid), apiVersion: 'v1', resourceVersion: resourceVersionOf(claim) };
}

export class ClaimVolumeWriter {
  private readonly o: WriterOptions;

  constructor(options: WriterOptions) {
    this.o = options;
  }

  private async saveVolume(volume: WireObject, subresource?: 'status'): Promise<WireObject> {
    const saved = await this.o.volumesClient.update('', nameOf(volume), volume, subresource);
    this.o.volumes.update(saved);
    return saved;
  }

  private async saveClaim(claim: WireObject, subresource?: 'status'): Promise<WireObject> {
    const saved = await this.o.claimsClient.update(namespaceOf(claim), nameOf(claim), claim, subresource);
    this.o.claims.update(saved);
    return saved;
  }

  /** Sets the claim's phase; with a volume, its access modes (and its capacity when the phase changes); without, clears both. */
  async updateClaimStatus(claim: WireObject, phase: string, volume: WireObject | undefined): Promise<WireObject> {
    const next = cloneJson(claim);
    const status = rec(next.status);
    const was = str(rec(claim.status).phase);
    status.phase = phase;
    if (volume === undefined) {
      delete status.accessModes;
      delete status.capacity;
    } else {
      const pv = volume as PersistentVolume;
      status.accessModes = [...(pv.spec?.accessModes ?? [])];
      const storage = pv.spec?.capacity?.storage;
      if (was !== phase && storage !== undefined && rec(status.capacity).storage !== storage) status.capacity = { ...pv.spec?.capacity };
    }
    next.status = status;
    if (jsonEqual(next.status, claim.status ?? {})) return claim;
    return this.saveClaim(next, 'status');
  }

  /** As updateClaimStatus, with an event, when the phase changes. */
  async updateClaimStatusWithEvent(claim: WireObject, phase: string, type: EventType, reason: string, message: string): Promise<WireObject> {
    if (str(rec(claim.status).phase) === phase) return claim;
    const saved = await this.updateClaimStatus(claim, phase, undefined);
    this.o.recorder.record(saved, type, reason, 'Sync', message);
    return saved;
  }

  async updateVolumePhase(volume: WireObject, phase: string, message: string): Promise<WireObject> {
    if (str(rec(volume.status).phase) === phase) return volume;
    const next = cloneJson(volume);
    next.status = { ...rec(next.status), phase, ...(message === '' ? {} : { message }) };
    if (message === '') delete (next.status as WireObject).message;
    return this.saveVolume(next, 'status');
  }

  async updateVolumePhaseWithEvent(volume: WireObject, phase: string, type: EventType, reason: string, message: string): Promise<WireObject> {
    if (str(rec(volume.status).phase) === phase) return volume;
    const saved = await this.updateVolumePhase(volume, phase, message);
    this.o.recorder.record(saved, type, reason, 'Sync', message);
    return saved;
  }

  /** The volume's claimRef names the claim (uid included); bound-by-controller when the controller made the binding. */
  async bindVolumeToClaim(volume: WireObject, claim: WireObject): Promise<WireObject> {
    const pv = volume as PersistentVolume;
    const byController = !isVolumeBoundToClaim(pv, claim);
    const next = cloneJson(volume);
    let dirty = false;
    const ref = pv.spec?.claimRef;
    if (ref?.name !== nameOf(claim) || ref.namespace !== namespaceOf(claim) || ref.uid !== str(metaOf(claim).uid)) {
      next.spec = { ...rec(next.spec), claimRef: claimReference(claim) };
      dirty = true;
    }
    if (byController && !hasAnnotation(next, ANN_BOUND_BY_CONTROLLER)) {
      setAnnotation(next, ANN_BOUND_BY_CONTROLLER, 'yes');
      dirty = true;
    }
    return dirty ? this.saveVolume(next) : volume;
  }

  /** The claim's volumeName names the volume, with the bind-completed (and bound-by-controller) annotations. */
  async bindClaimToVolume(claim: WireObject, volume: WireObject): Promise<WireObject> {
    const next = cloneJson(claim);
    let dirty = false;
    if (str(rec(next.spec).volumeName) !== nameOf(volume)) {
      next.spec = { ...rec(next.spec), volumeName: nameOf(volume) };
      if (!hasAnnotation(next, ANN_BOUND_BY_CONTROLLER)) setAnnotation(next, ANN_BOUND_BY_CONTROLLER, 'yes');
      dirty = true;
    }
    if (!hasAnnotation(next, ANN_BIND_COMPLETED)) {
      setAnnotation(next, ANN_BIND_COMPLETED, 'yes');
      dirty = true;
    }
    return dirty ? this.saveClaim(next) : claim;
  }

  /** Both halves of a binding and both phases, the volume first (upstream's order). */
  async bind(volume: WireObject, claim: WireObject): Promise<void> {
    let pv = await this.bindVolumeToClaim(volume, claim);
    pv = await this.updateVolumePhase(pv, 'Bound', '');
    const pvc = await this.bindClaimToVolume(claim, pv);
    await this.updateClaimStatus(pvc, 'Bound', pv);
  }

  /** Undoes the controller's binding of a volume (or only its uid, when a user pre-bound it), then Available. */
  async unbindVolume(volume: WireObject): Promise<void> {
    const next = cloneJson(volume);
    const spec = rec(next.spec);
    if (hasAnnotation(volume, ANN_BOUND_BY_CONTROLLER)) {
      delete spec.claimRef;
      const { [ANN_BOUND_BY_CONTROLLER]: _dropped, ...annotations } = rec(metaOf(next).annotations);
      if (Object.keys(annotations).length === 0) delete metaOf(next).annotations;
      else metaOf(next).annotations = annotations;
    } else {
      spec.claimRef = { ...rec(spec.claimRef), uid: '' };
      delete (spec.claimRef as WireObject).uid;
    }
    next.spec = spec;
    const saved = await this.saveVolume(next);
    await this.updateVolumePhase(saved, 'Available', '');
  }

  /** Sets annotations of a claim (the provisioner's), when they differ. */
  async annotateClaim(claim: WireObject, annotations: Record<string, string>): Promise<WireObject> {
    const current = rec(metaOf(claim).annotations);
    if (Object.entries(annotations).every(([k, v]) => current[k] === v)) return claim;
    const next = cloneJson(claim);
    for (const [k, v] of Object.entries(annotations)) setAnnotation(next, k, v);
    return this.saveClaim(next);
  }

  /** Gives a claim without class the default one (the retroactive default StorageClass). */
  async setClaimClass(claim: WireObject, className: string): Promise<WireObject> {
    const next = cloneJson(claim);
    next.spec = { ...rec(next.spec), storageClassName: className };
    return this.saveClaim(next);
  }
}
