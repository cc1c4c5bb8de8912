/**
 * The node's `status.volumesInUse` (upstream: the volume manager's GetVolumesInUse): the unique
 * names `orch.io/csi/<driver>^<handle>` of the attachable volumes the node wants or may still
 * have mounted, sorted, without duplicates. A volume counts from the moment a pod's sync decides
 * to set it up (before it is attached, so that the attach/detach controller never detaches it
 * under the node) until its pod's teardown removed its directory; after a restart the volumes
 * are found from the pods' `vol_data.json` files. Attachable, as upstream's CSI plugin's
 * CanAttach: a PersistentVolume's volume (never an inline one) whose driver has no CSIDriver or
 * one with `attachRequired: true` (immutable, so it is remembered per driver). As upstream's
 * VerifyControllerAttachedVolume, such a volume is mounted only once the Node's status has listed
 * it (what the status controller last read or wrote is told here): the attach/detach controller
 * then knows the node uses it before anything is mounted.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';

import type { Clock } from '../../api/clock.js';
import { csiUniqueVolumeName } from '../../api/storage/index.js';
import { podCsiDirs, readVolData } from './vol-data.js';

export class VolumesInUse {
  /** Pod UID → pod volume name → unique volume name, of the attachable volumes pods want. */
  private readonly desired = new Map<string, Map<string, string>>();
  private readonly attachRequired = new Map<string, boolean>();
  private readonly listeners = new Set<() => void>();
  /** What the Node's status last said (upstream's reportedInUse), and who waits for a name to appear there. */
  private reportedNames = new Set<string>();
  private readonly reportWaiters = new Set<() => void>();

  constructor(private readonly rootDir: string, private readonly csiDriver: (name: string) => Promise<CSIDriver | undefined>) {}

  /** Remembers a driver's attachRequired from its CSIDriver as read by a mount. */
  learn(driver: string, object: CSIDriver | undefined): void {
    this.attachRequired.set(driver, object?.spec.attachRequired ?? true);
  }

  /** Whether the driver's volumes are attached; a CSIDriver that cannot be read counts as attaching (the safe side). */
  async attachable(driver: string): Promise<boolean> {
    const known = this.attachRequired.get(driver);
    if (known !== undefined) return known;
    try {
      this.learn(driver, await this.csiDriver(driver));
    } catch {
      return true;
    }
    return this.attachRequired.get(driver) ?? true;
  }

  /** A pod wants a PersistentVolume's CSI volume. */
  async want(podUID: string, volumeName: string, driver: string, handle: string): Promise<void> {
    if (!(await this.attachable(driver))) return;
    const name = csiUniqueVolumeName(driver, handle);
    const volumes = this.desired.get(podUID) ?? new Map<string, string>();
    const added = volumes.get(volumeName) !== name && !this.desiredNames().has(name);
    volumes.set(volumeName, name);
    this.desired.set(podUID, volumes);
    if (added) this.notify();
  }

  /** The pod's volumes are torn down (their directories gone); `removedDirs`: the pod had volume directories (maybe from before a restart). */
  forget(podUID: string, removedDirs: boolean): void {
    if (this.desired.delete(podUID) || removedDirs) this.notify();
  }

  /** Tells `listener` when the list may have changed; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  /** The Node's status.volumesInUse as last read or written (upstream's MarkVolumesAsReportedInUse). */
  markReported(names: readonly string[]): void {
    this.reportedNames = new Set(names);
    for (const w of [...this.reportWaiters]) w();
  }

  /** Resolves true once the Node's status lists `name` (at once when it does), false after `timeoutMs` on `clock`. */
  async waitReported(name: string, clock: Pick<Clock, 'sleep'>, timeoutMs: number): Promise<boolean> {
    if (this.reportedNames.has(name)) return true;
    let waiter: (() => void) | undefined;
    const reported = new Promise<boolean>((resolve) => {
      waiter = () => { if (this.reportedNames.has(name)) resolve(true); };
      this.reportWaiters.add(waiter);
    });
    const stop = new AbortController();
    try {
      return await Promise.race([reported, clock.sleep(timeoutMs, stop.signal).then(() => false, () => false)]);
    } finally {
      stop.abort();
      if (waiter !== undefined) this.reportWaiters.delete(waiter);
    }
  }

  /** What the node reports: wanted volumes and those the pods' directories still hold. */
  async list(): Promise<string[]> {
    const names = this.desiredNames();
    let pods: string[] = [];
    try {
      pods = await readdir(join(this.rootDir, 'pods'));
    } catch {
      pods = [];
    }
    for (const uid of pods) {
      for (const dir of await podCsiDirs(this.rootDir, uid)) {
        const data = await readVolData(dir);
        if (data === undefined || data.volumeLifecycleMode !== 'Persistent') continue;
        if (await this.attachable(data.driverName)) names.add(csiUniqueVolumeName(data.driverName, data.volumeHandle));
      }
    }
    return [...names].sort();
  }

  private desiredNames(): Set<string> {
    return new Set([...this.desired.values()].flatMap((m) => [...m.values()]));
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }
}
