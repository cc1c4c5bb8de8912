/**
 * ephemeral-volume-controller (upstream's, v1.28): each generic ephemeral volume of a pod that is
 * not being deleted gets its claim `<pod>-<volume>`, made from the volume's claim template (its
 * labels, annotations and spec) with the pod as controlling owner (ownerReferences with
 * controller and blockOwnerDeletion true). A claim of that name that the pod does not own is a
 * conflict: a FailedBinding Warning event on the pod (`ephemeral volume <volume>: PVC <ns>/<name>
 * was not created for pod <ns>/<pod> (pod is not owner)`), tried again later.
 *
 * This server has no garbage collector, so the loop also does its part for these claims: a claim
 * whose controlling owner is a pod that no longer exists (another uid, or none) is deleted.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../../api/clock.js';
import { isAlreadyExists, isNotFound, messageOf } from '../../../api/errors.js';
import { ephemeralClaimName, ephemeralClaimOwnerProblem } from '../../../api/storage/index.js';
import { cloneJson } from '../../patch/index.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';
import { WorkQueue, type EventRecorder, type Informer, type Log, type ResourceClient } from '../client/index.js';

export interface EphemeralVolumeOptions {
  readonly pods: Informer;
  readonly claims: Informer;
  readonly claimsClient: ResourceClient;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly log: Log;
}

const hasEphemeral = (pod: WireObject): boolean => ((pod as Pod).spec?.volumes ?? []).some((v) => v.ephemeral !== undefined);

/** The pod's uid and name of a claim's controlling Pod owner, if any. */
function controllingPod(claim: WireObject): WireObject | undefined {
  return recs(metaOf(claim).ownerReferences).find((o) => o.controller === true && o.kind === 'Pod' && str(o.apiVersion) === 'v1');
}

export class EphemeralVolumeController {
  private readonly o: EphemeralVolumeOptions;
  private readonly queue: WorkQueue;

  constructor(options: EphemeralVolumeOptions) {
    this.o = options;
    this.queue = new WorkQueue({ clock: options.clock, log: options.log, what: 'ephemeral-volume-controller', process: (key) => this.process(key) });
    const podChanged = (p: WireObject): void => {
      if (hasEphemeral(p) && str(metaOf(p).deletionTimestamp) === '') this.queue.add(`pod:${namespaceOf(p)}/${nameOf(p)}`);
    };
    options.pods.addHandler({
      added: podChanged,
      updated: (_old, p) => { podChanged(p); },
      deleted: (p) => {
        if (!hasEphemeral(p)) return;
        for (const c of options.claims.list()) if (namespaceOf(c) === namespaceOf(p) && str(controllingPod(c)?.uid) === str(metaOf(p).uid)) this.queue.add(`claim:${namespaceOf(c)}/${nameOf(c)}`);
      },
    });
    options.claims.addHandler({
      // A claim that went away may be needed again; one that appeared may be an orphan.
      added: (c) => { if (controllingPod(c) !== undefined) this.queue.add(`claim:${namespaceOf(c)}/${nameOf(c)}`); },
      deleted: (c) => {
        const owner = controllingPod(c);
        if (owner !== undefined) this.queue.add(`pod:${namespaceOf(c)}/${str(owner.name)}`);
      },
    });
  }

  start(): void {
    for (const p of this.o.pods.list()) if (hasEphemeral(p)) this.queue.add(`pod:${namespaceOf(p)}/${nameOf(p)}`);
    for (const c of this.o.claims.list()) if (controllingPod(c) !== undefined) this.queue.add(`claim:${namespaceOf(c)}/${nameOf(c)}`);
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private async process(key: string): Promise<void> {
    const [kind, ref = ''] = key.split(':');
    const slash = ref.indexOf('/');
    const [namespace, name] = [ref.slice(0, slash), ref.slice(slash + 1)];
    if (kind === 'pod') await this.syncPod(namespace, name);
    else await this.syncClaim(namespace, name);
  }

  private async syncPod(namespace: string, name: string): Promise<void> {
    const pod = this.o.pods.get(namespace, name);
    if (pod === undefined || str(metaOf(pod).deletionTimestamp) !== '') return;
    for (const volume of (pod as Pod).spec?.volumes ?? []) {
      if (volume.ephemeral === undefined) continue;
      try {
        await this.ensureClaim(pod, volume.name, rec(volume.ephemeral.volumeClaimTemplate));
      } catch (err) {
        this.o.recorder.record(pod, 'Warning', 'FailedBinding', 'CreateClaim', `ephemeral volume ${volume.name}: ${messageOf(err)}`);
        throw new Error(`pod ${namespace}/${name}: ${messageOf(err)}`, { cause: err });
      }
    }
  }

  private async ensureClaim(pod: WireObject, volume: string, template: WireObject): Promise<void> {
    const claimName = ephemeralClaimName(nameOf(pod), volume);
    const existing = this.o.claims.get(namespaceOf(pod), claimName);
    if (existing !== undefined) {
      const problem = ephemeralClaimOwnerProblem(pod, existing);
      if (problem !== undefined) throw new Error(problem);
      return;
    }
    const meta = rec(template.metadata);
    const claim: WireObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName,
        namespace: namespaceOf(pod),
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: nameOf(pod), uid: str(metaOf(pod).uid), controller: true, blockOwnerDeletion: true }],
        ...(meta.labels === undefined ? {} : { labels: cloneJson(meta.labels) }),
        ...(meta.annotations === undefined ? {} : { annotations: cloneJson(meta.annotations) }),
      },
      spec: cloneJson(rec(template.spec)),
    };
    try {
      await this.o.claimsClient.create(namespaceOf(pod), claim);
    } catch (err) {
      // Made meanwhile (our own watch not delivered yet): the next sync checks its owner.
      if (isAlreadyExists(err)) throw new Error(`create PVC ${claimName}: it exists already`, { cause: err });
      throw new Error(`create PVC ${claimName}: ${messageOf(err)}`, { cause: err });
    }
  }

  /** Deletes a claim whose controlling pod is gone (the garbage collector's part). */
  private async syncClaim(namespace: string, name: string): Promise<void> {
    const claim = this.o.claims.get(namespace, name);
    const owner = claim === undefined ? undefined : controllingPod(claim);
    if (claim === undefined || owner === undefined || str(metaOf(claim).deletionTimestamp) !== '') return;
    const pod = this.o.pods.get(namespace, str(owner.name));
    if (pod !== undefined && str(metaOf(pod).uid) === str(owner.uid)) return;
    try {
      await this.o.claimsClient.delete(namespace, name, { uid: str(metaOf(claim).uid) });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
