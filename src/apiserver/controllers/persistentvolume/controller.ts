/**
 * persistentvolume-binder-controller (upstream's PersistentVolumeController): claims and volumes
 * from their informers into the controller's store (its own writes win over older watch
 * events), one work queue of both (`claim:<ns>/<name>`, `volume:<name>`: one sync at a time, as
 * upstream's single worker per queue, so two syncs never bind one volume twice), and a resync of
 * everything every `resyncPeriodMs` (upstream's --pvclaimbinder-sync-period, 15 s). A deleted
 * volume queues its claim (which becomes Lost); a deleted claim queues its volume (Released); a
 * new StorageClass queues the claims still unbound.
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec } from '../../resources/common/index.js';
import { WorkQueue, type EventRecorder, type Informer, type Log, type ResourceClient } from '../client/index.js';
import { VersionedStore } from './store.js';
import { syncClaim, syncVolume, type SyncContext } from './sync.js';
import { ClaimVolumeWriter } from './writer.js';

export interface PersistentVolumeControllerOptions {
  readonly volumes: Informer;
  readonly claims: Informer;
  readonly classes: Informer;
  readonly pods: Informer;
  readonly volumesClient: ResourceClient;
  readonly claimsClient: ResourceClient;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly log: Log;
  /** Default 15 s. */
  readonly resyncPeriodMs?: number;
}

const claimKey = (o: WireObject): string => `${namespaceOf(o)}/${nameOf(o)}`;

export class PersistentVolumeController {
  private readonly options: PersistentVolumeControllerOptions;
  private readonly volumes = new VersionedStore(nameOf);
  private readonly claims = new VersionedStore(claimKey);
  private readonly queue: WorkQueue;
  private readonly ctx: SyncContext;
  private resync: Timer | undefined;
  private closed = false;

  constructor(options: PersistentVolumeControllerOptions) {
    this.options = options;
    this.queue = new WorkQueue({ clock: options.clock, log: options.log, what: 'persistentvolume-binder-controller', process: (key) => this.process(key) });
    this.ctx = {
      volumes: this.volumes, claims: this.claims, classes: options.classes, pods: options.pods, claimsClient: options.claimsClient, recorder: options.recorder,
      writer: new ClaimVolumeWriter({ volumesClient: options.volumesClient, claimsClient: options.claimsClient, volumes: this.volumes, claims: this.claims, recorder: options.recorder }),
      enqueueClaim: (key) => { this.queue.add(`claim:${key}`); },
    };
    options.volumes.addHandler({
      added: (v) => { this.volumeChanged(v); },
      updated: (_old, v) => { this.volumeChanged(v); },
      deleted: (v) => {
        this.volumes.delete(nameOf(v));
        const ref = rec(rec(v.spec).claimRef);
        if (str(ref.name) !== '') this.queue.add(`claim:${str(ref.namespace)}/${str(ref.name)}`);
      },
    });
    options.claims.addHandler({
      added: (c) => { this.claimChanged(c); },
      updated: (_old, c) => { this.claimChanged(c); },
      deleted: (c) => {
        this.claims.delete(claimKey(c));
        const volume = str(rec(c.spec).volumeName);
        if (volume !== '') this.queue.add(`volume:${volume}`);
      },
    });
    options.classes.addHandler({
      added: () => { this.enqueueUnbound(); },
      updated: () => { this.enqueueUnbound(); },
    });
  }

  /** Starts the periodic resync (call once the informers listed). */
  start(): void {
    this.resyncAll();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.resync?.cancel();
    await this.queue.close();
  }

  private volumeChanged(volume: WireObject): void {
    if (this.volumes.update(volume)) this.queue.add(`volume:${nameOf(volume)}`);
  }

  private claimChanged(claim: WireObject): void {
    if (this.claims.update(claim)) this.queue.add(`claim:${claimKey(claim)}`);
  }

  private enqueueUnbound(): void {
    for (const c of this.claims.list()) if (str(rec(c.status).phase) !== 'Bound') this.queue.add(`claim:${claimKey(c)}`);
  }

  private resyncAll(): void {
    if (this.closed) return;
    for (const c of this.claims.list()) this.queue.add(`claim:${claimKey(c)}`);
    for (const v of this.volumes.list()) this.queue.add(`volume:${nameOf(v)}`);
    this.resync = this.options.clock.setTimer(this.options.resyncPeriodMs ?? 15_000, () => { this.resyncAll(); });
  }

  private async process(key: string): Promise<void> {
    if (key.startsWith('claim:')) {
      const claim = this.claims.get(key.slice('claim:'.length));
      if (claim !== undefined) await syncClaim(this.ctx, claim);
    } else {
      const volume = this.volumes.get(key.slice('volume:'.length));
      if (volume !== undefined) await syncVolume(this.ctx, volume);
    }
  }
}
