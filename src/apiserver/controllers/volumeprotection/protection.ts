/**
 * The protection controllers (upstream's pvcprotection and pvprotection, v1.28):
 *
 * - persistentvolumeclaim-protection-controller: a claim being deleted keeps
 *   `orch.io/pvc-protection` while a pod scheduled to a node uses it (a persistentVolumeClaim
 *   volume naming it, even when the pod finished: the claim goes once the pod is deleted; or the
 *   generic ephemeral volume whose claim it is, until the pod is shut down); the informer is asked
 *   first, then a live list of pods, so that a pod not yet seen does not lose its claim. Claims
 *   that lack the finalizer and are not being deleted get it.
 * - persistentvolume-protection-controller: a volume being deleted keeps `orch.io/pv-protection`
 *   while it is Bound; volumes that lack it get it.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../../api/clock.js';
import { ephemeralClaimName, ephemeralClaimOwnerProblem, PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../../../api/storage/index.js';
import { finalizersOf, metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec } from '../../resources/common/index.js';
import { updateObject, WorkQueue, type Informer, type Log, type ResourceClient } from '../client/index.js';

const deleting = (o: WireObject): boolean => str(metaOf(o).deletionTimestamp) !== '';
const needsFinalizer = (o: WireObject, f: string): boolean => !deleting(o) && !finalizersOf(o).includes(f);
const deletionCandidate = (o: WireObject, f: string): boolean => deleting(o) && finalizersOf(o).includes(f);

/** Adds or removes the finalizer with a read-change-write (others write these objects too). */
async function setFinalizer(client: ResourceClient, object: WireObject, finalizer: string, present: boolean): Promise<void> {
  await updateObject(client, namespaceOf(object), nameOf(object), (o) => {
    const list = finalizersOf(o);
    if (list.includes(finalizer) === present) return false;
    metaOf(o).finalizers = present ? [...list, finalizer] : list.filter((f) => f !== finalizer);
    return true;
  }, { current: object });
}

/** A pod that the node agent is done with, or that was force-deleted (upstream's podIsShutDown). */
function podIsShutDown(pod: WireObject): boolean {
  return deleting(pod) && metaOf(pod).deletionGracePeriodSeconds === 0;
}

/** Upstream's podUsesPVC. */
export function podUsesClaim(pod: WireObject, claim: WireObject): boolean {
  if (namespaceOf(pod) !== namespaceOf(claim) || str(rec(pod.spec).nodeName) === '') return false;
  return ((pod as Pod).spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === nameOf(claim)
    || (v.ephemeral !== undefined && !podIsShutDown(pod) && ephemeralClaimName(nameOf(pod), v.name) === nameOf(claim)
      && ephemeralClaimOwnerProblem(pod, claim) === undefined));
}

export interface ClaimProtectionOptions {
  readonly claims: Informer;
  readonly pods: Informer;
  readonly claimsClient: ResourceClient;
  /** For the live list of pods. */
  readonly podsClient: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
}

export class ClaimProtectionController {
  private readonly o: ClaimProtectionOptions;
  private readonly queue: WorkQueue;

  constructor(options: ClaimProtectionOptions) {
    this.o = options;
    this.queue = new WorkQueue({ clock: options.clock, log: options.log, what: 'persistentvolumeclaim-protection-controller', process: (key) => this.process(key) });
    const claimChanged = (c: WireObject): void => {
      if (needsFinalizer(c, PVC_PROTECTION_FINALIZER) || deletionCandidate(c, PVC_PROTECTION_FINALIZER)) this.queue.add(`${namespaceOf(c)}/${nameOf(c)}`);
    };
    options.claims.addHandler({ added: claimChanged, updated: (_old, c) => { claimChanged(c); } });
    options.pods.addHandler({
      deleted: (p) => { this.enqueueClaimsOf(p); },
      updated: (old, p) => {
        if (str(metaOf(old).uid) !== str(metaOf(p).uid)) this.enqueueClaimsOf(old);
        if (podIsShutDown(p) || str(rec(p.spec).nodeName) === '' || ['Succeeded', 'Failed'].includes(str(rec(p.status).phase))) this.enqueueClaimsOf(p);
      },
    });
  }

  start(): void {
    for (const c of this.o.claims.list()) if (needsFinalizer(c, PVC_PROTECTION_FINALIZER) || deletionCandidate(c, PVC_PROTECTION_FINALIZER)) this.queue.add(`${namespaceOf(c)}/${nameOf(c)}`);
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private enqueueClaimsOf(pod: WireObject): void {
    for (const v of (pod as Pod).spec?.volumes ?? []) {
      if (v.persistentVolumeClaim !== undefined) this.queue.add(`${namespaceOf(pod)}/${v.persistentVolumeClaim.claimName}`);
      else if (v.ephemeral !== undefined) this.queue.add(`${namespaceOf(pod)}/${ephemeralClaimName(nameOf(pod), v.name)}`);
    }
  }

  private async inUse(claim: WireObject): Promise<boolean> {
    if (this.o.pods.list().some((p) => podUsesClaim(p, claim))) return true;
    // A pod may be written but not seen yet: the API has the last word before the finalizer goes.
    return (await this.o.podsClient.list()).items.some((p) => podUsesClaim(p, claim));
  }

  private async process(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const claim = this.o.claims.get(key.slice(0, slash), key.slice(slash + 1));
    if (claim === undefined) return;
    if (deletionCandidate(claim, PVC_PROTECTION_FINALIZER)) {
      if (await this.inUse(claim)) return;
      await setFinalizer(this.o.claimsClient, claim, PVC_PROTECTION_FINALIZER, false);
      return;
    }
    if (needsFinalizer(claim, PVC_PROTECTION_FINALIZER)) await setFinalizer(this.o.claimsClient, claim, PVC_PROTECTION_FINALIZER, true);
  }
}

export interface VolumeProtectionOptions {
  readonly volumes: Informer;
  readonly volumesClient: ResourceClient;
  readonly clock: Clock;
  readonly log: Log;
}

export class VolumeProtectionController {
  private readonly o: VolumeProtectionOptions;
  private readonly queue: WorkQueue;

  constructor(options: VolumeProtectionOptions) {
    this.o = options;
    this.queue = new WorkQueue({ clock: options.clock, log: options.log, what: 'persistentvolume-protection-controller', process: (key) => this.process(key) });
    const changed = (v: WireObject): void => {
      if (needsFinalizer(v, PV_PROTECTION_FINALIZER) || deletionCandidate(v, PV_PROTECTION_FINALIZER)) this.queue.add(nameOf(v));
    };
    options.volumes.addHandler({ added: changed, updated: (_old, v) => { changed(v); } });
  }

  start(): void {
    for (const v of this.o.volumes.list()) if (needsFinalizer(v, PV_PROTECTION_FINALIZER) || deletionCandidate(v, PV_PROTECTION_FINALIZER)) this.queue.add(nameOf(v));
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async process(name: string): Promise<void> {
    const volume = this.o.volumes.get('', name);
    if (volume === undefined) return;
    if (deletionCandidate(volume, PV_PROTECTION_FINALIZER)) {
      if (str(rec(volume.status).phase) === 'Bound') return;
      await setFinalizer(this.o.volumesClient, volume, PV_PROTECTION_FINALIZER, false);
      return;
    }
    if (needsFinalizer(volume, PV_PROTECTION_FINALIZER)) await setFinalizer(this.o.volumesClient, volume, PV_PROTECTION_FINALIZER, true);
  }
}
