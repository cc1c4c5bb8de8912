/**
 * The CSI volume plugin's mounter (upstream: pkg/volume/csi's csiAttacher.MountDevice and
 * csiMountMgr.SetUpAt/TearDownAt): a PersistentVolume's csi source or a pod's inline `csi`
 * volume, set up for one pod and torn down from what vol_data.json says.
 *
 * | step          | persistent (a PV)                             | inline (Ephemeral)                 |
 * |---------------|-----------------------------------------------|------------------------------------|
 * | lifecycle     | the CSIDriver (if any) lists Persistent       | the CSIDriver lists Ephemeral      |
 * | in use        | listed in the Node's volumesInUse first (attachRequired) | never                   |
 * | attach        | VolumeAttachment attached (attachRequired)    | never                              |
 * | secrets       | nodeStageSecretRef, nodePublishSecretRef      | nodePublishSecretRef (pod's ns)    |
 * | stage         | once per node, if STAGE_UNSTAGE_VOLUME        | never                              |
 * | publish       | per pod, at `<pod dir>/<pv>/mount`            | per pod, at `<pod dir>/<name>/mount` |
 * | fsGroup       | by the CSIDriver's fsGroupPolicy (plan.ts)    | the same                           |
 * | expand        | NodeExpandVolume when the PV outgrew the claim (expand.ts) | never                 |
 * | unstage       | after the last pod on the node                | -                                  |
 *
 * Operations on one volume (driver and handle) run one at a time, across pods, as upstream's
 * pending operations: two pods of one volume never stage it twice, and an unstage never races
 * a publish. A target already mounted is not published again (the agent restarted, or an
 * earlier sync did it). When a call fails for good (any gRPC code but the "maybe still running"
 * ones upstream lists: Canceled, DeadlineExceeded, Unavailable, ResourceExhausted, Aborted),
 * the volume's directory goes; otherwise it stays with its vol_data.json, so the retry, or the
 * teardown when the pod goes, finishes or undoes what the driver may have done.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PersistentVolume, PersistentVolumeClaim, Secret } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';

import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import { csiAttachmentName, csiUniqueVolumeName } from '../../api/storage/index.js';
import type { Logger } from '../logging/index.js';
import { MOUNTINFO_PATH, readMountInfoBelow, setVolumeOwnership, type CsiVolumePlugin, type CsiVolumeSource } from '../volumes/index.js';
import { csiErrorText, isFinalCsiError, type CsiNodeClient } from './client.js';
import type { CsiDrivers } from './drivers.js';
import { expandVolume, expansionSize, type CsiEventSink } from './expand.js';
import { VolumesInUse } from './in-use.js';
import { appliesFsGroup, capabilityOf, checkLifecycleMode, planOf, type Plan } from './plan.js';
import { csiSecrets } from './secrets.js';
import { CSI_DRIVER_NOT_REGISTERED, CSI_MOUNT_FAILED, CSI_UNMOUNT_FAILED } from './errors.js';
import {
  KeyedQueue, podCsiDirs, podVolumeDir, readVolData, stagingPath, usedElsewhere, writeVolData, type VolData,
} from './vol-data.js';

const STAGE_CAPABILITY = 'STAGE_UNSTAGE_VOLUME';
const STATS_CAPABILITY = 'GET_VOLUME_STATS';
const MOUNT_GROUP_CAPABILITY = 'VOLUME_MOUNT_GROUP';
/** How long a mount waits for the Node's status to list its attachable volume before it fails (and the pod sync retries). */
const REPORTED_IN_USE_WAIT_MS = 10_000;

/** One volume's NodeGetVolumeStats answer as the summary API's volume stats. */
export interface CsiPodVolumeStats {
  /** The pod's volume name. */
  readonly name: string;
  readonly usedBytes?: number;
  readonly capacityBytes?: number;
  readonly availableBytes?: number;
  readonly inodes?: number;
  readonly inodesFree?: number;
  readonly inodesUsed?: number;
}

/** The mounter: the volume manager's CSI plugin, and the pods' CSI volume stats for the summary API. */
export interface CsiMounter extends CsiVolumePlugin {
  /**
   * NodeGetVolumeStats of each CSI volume the pod has published (as this agent set it up) whose
   * driver is registered and has GET_VOLUME_STATS; a volume whose call fails is left out (logged).
   */
  podVolumeStats(podUID: string): Promise<CsiPodVolumeStats[]>;
  /** The Node's status.volumesInUse as the status controller last read or wrote it: attachable volumes wait to be listed there before they are mounted. */
  markVolumesReportedInUse(names: readonly string[]): void;
  /** The node's status.volumesInUse (in-use.ts): sorted unique names of the attachable volumes wanted or still mounted. */
  volumesInUse(): Promise<string[]>;
  /** Calls `listener` when volumesInUse may have changed; returns the unsubscribe. */
  onVolumesInUseChange(listener: () => void): () => void;
}

/** What the node reads from the API server for CSI volumes. */
export interface CsiApi {
  csiDriver(name: string): Promise<CSIDriver | undefined>;
  volumeAttachment(name: string): Promise<VolumeAttachment | undefined>;
  /** A Secret a volume's secret reference names (undefined: not found). */
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /** A merge patch of a claim's status (after a node expansion: its capacity and conditions). */
  patchClaimStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<void>;
}

export interface CsiMounterOptions {
  readonly rootDir: string;
  readonly nodeName: string;
  readonly drivers: CsiDrivers;
  readonly api: CsiApi;
  readonly logger: Logger;
  readonly mountInfoPath?: string;
  /** Records the expansion's events on the pod and the claim (none when absent). */
  readonly events?: CsiEventSink;
  /** The wait for the Node's status to list an attachable volume before it is mounted. */
  readonly clock: Clock;
  /** Feature gate CSINodeExpandSecret (default true): pass the PV's nodeExpandSecretRef secret to NodeExpandVolume. */
  readonly expandSecrets?: boolean;
}

export function createCsiMounter(o: CsiMounterOptions): CsiMounter {
  const mountInfoPath = o.mountInfoPath ?? MOUNTINFO_PATH;
  const queue = new KeyedQueue();
  /** Pod UID → volume name → what NodeGetVolumeStats needs; set by each setUp, dropped by tearDown. */
  const published = new Map<string, Map<string, { driver: string; handle: string; target: string; staging: string }>>();
  /** The volumes (`<driver>^<handle>`) this agent staged (drivers need not mount at the staging path). */
  const staged = new Set<string>();
  const readSecret = (namespace: string, name: string): Promise<Secret | undefined> => o.api.secret(namespace, name);
  const inUse = new VolumesInUse(o.rootDir, (name) => o.api.csiDriver(name));
  /** Published targets whose fsGroup is still to be applied (it failed, or the publish just happened). */
  const ownershipPending = new Map<string, () => Promise<void>>();
  /** Read-only volumes warned about (per PV and size): a resize is not tried on them. */
  const resizeWarned = new Set<string>();
  const isMounted = async (path: string): Promise<boolean> => (await readMountInfoBelow(path, mountInfoPath)).some((m) => m.mountPoint === path);
  const failed = (volume: string, what: string, err?: unknown): OrchError =>
    new OrchError(CSI_MOUNT_FAILED, 'unavailable', `volume "${volume}": ${what}${err === undefined ? '' : `: ${csiErrorText(err)}`}`, { subject: volume, ...(err === undefined ? {} : { cause: err }) });

  /** The driver's client; a driver that is not registered (yet, or any more) is named with the volume. */
  const clientOf = (driver: string, volume: string): CsiNodeClient => {
    try {
      return o.drivers.client(driver);
    } catch (err) {
      throw new OrchError(CSI_DRIVER_NOT_REGISTERED, 'unavailable', `volume "${volume}": ${messageOf(err)}`, { subject: volume, cause: err });
    }
  };

  /** After a failed stage or publish: the directory goes unless the driver may still be working on it. */
  async function abandon(dir: string, target: string, err: unknown, volume: string): Promise<void> {
    if (isFinalCsiError(err) && !(await isMounted(target))) {
      await rm(dir, { recursive: true, force: true });
      return;
    }
    o.logger.info('CSI call may still be in progress; keeping the volume directory for the retry or the teardown', { volume, dir, err: csiErrorText(err) });
  }

  async function mount(pod: NodePod, uid: string, volumeName: string, plan: Plan, dir: string, target: string): Promise<string> {
    if (await isMounted(target)) return target;
    const { driver, handle } = plan;
    const csiDriver = await o.api.csiDriver(driver).catch((err: unknown) => {
      throw failed(volumeName, `cannot read csidriver ${driver}: ${messageOf(err)}`);
    });
    // Before the driver is looked up, as upstream's NewMounter: a refused mode is the message, registered or not.
    checkLifecycleMode(volumeName, driver, csiDriver, plan.mode);
    inUse.learn(driver, csiDriver);
    const client = clientOf(driver, volumeName);
    const attachID = csiAttachmentName(handle, driver, o.nodeName);
    let publishContext: Record<string, string> = {};
    if (plan.mode === 'Persistent' && (csiDriver?.spec.attachRequired ?? true)) {
      const unique = csiUniqueVolumeName(driver, handle);
      if (!(await inUse.waitReported(unique, o.clock, REPORTED_IN_USE_WAIT_MS))) {
        throw failed(volumeName, `volume ${unique} has not been added to the list of VolumesInUse in the node's volume status yet`);
      }
      const va = await o.api.volumeAttachment(attachID).catch((err: unknown) => {
        throw failed(volumeName, `cannot read volumeattachment ${attachID}: ${messageOf(err)}`);
      });
      if (va?.status?.attached !== true) {
        const why = va === undefined ? 'does not exist yet' : `is not attached yet${va.status?.attachError?.message === undefined ? '' : ` (attach error: ${va.status.attachError.message})`}`;
        throw failed(volumeName, `volumeattachment ${attachID} of ${plan.what} ${why}`);
      }
      publishContext = va.status.attachmentMetadata ?? {};
    }
    let capabilities: string[];
    try {
      capabilities = await client.nodeGetCapabilities();
    } catch (err) {
      throw failed(volumeName, `CSI driver ${driver}: NodeGetCapabilities failed`, err);
    }
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    // A driver with VOLUME_MOUNT_GROUP applies the fsGroup itself (upstream's DelegateFSGroupToCSIDriver).
    const delegateFsGroup = capabilities.includes(MOUNT_GROUP_CAPABILITY) && fsGroup !== undefined;
    const volumeCapability = capabilityOf(plan, delegateFsGroup ? fsGroup : undefined);
    const volumeContext: Record<string, string> = { ...plan.attributes };
    if (csiDriver?.spec.podInfoOnMount === true) {
      Object.assign(volumeContext, {
        'csi.storage.orch.io/pod.name': pod.metadata.name,
        'csi.storage.orch.io/pod.namespace': pod.metadata.namespace,
        'csi.storage.orch.io/pod.uid': uid,
        'csi.storage.orch.io/serviceAccount.name': pod.spec?.serviceAccountName ?? 'default',
        'csi.storage.orch.io/ephemeral': String(plan.mode === 'Ephemeral'),
      });
    }
    const base = { volumeId: handle, volumeCapability, publishContext, volumeContext };
    // Staged once per node (as upstream's device mount): known here, or mounted at the global path after a restart.
    const staging = plan.mode === 'Persistent' && capabilities.includes(STAGE_CAPABILITY) ? stagingPath(o.rootDir, driver, handle) : '';
    const key = `${driver}^${handle}`;
    const stage = staging !== '' && !staged.has(key) && !(await isMounted(staging));
    // Read before anything is written: a missing secret leaves no directory (the stage secret only when the volume is staged now).
    const stageSecrets = stage ? await csiSecrets(readSecret, volumeName, plan.stageSecretRef) : {};
    const publishSecrets = await csiSecrets(readSecret, volumeName, plan.publishSecretRef);
    // Written before any call (as upstream's mounter does), so that teardown finds whatever the driver did.
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const data: VolData = { specVolID: plan.specVolID, volumeHandle: handle, driverName: driver, nodeName: o.nodeName, attachmentID: attachID, volumeLifecycleMode: plan.mode };
    await writeVolData(dir, data);
    if (stage) {
      await mkdir(join(staging, '..'), { recursive: true, mode: 0o750 });
      try {
        await client.nodeStageVolume({ ...base, stagingTargetPath: staging, secrets: stageSecrets });
      } catch (err) {
        await abandon(dir, target, err, volumeName);
        throw failed(volumeName, `CSI driver ${driver}: NodeStageVolume of ${handle} failed`, err);
      }
    }
    if (staging !== '') staged.add(key);
    try {
      await client.nodePublishVolume({ ...base, stagingTargetPath: staging, targetPath: target, readonly: plan.readOnly, secrets: publishSecrets });
    } catch (err) {
      await abandon(dir, target, err, volumeName);
      throw failed(volumeName, `CSI driver ${driver}: NodePublishVolume of ${handle} failed`, err);
    }
    o.logger.v(2, 'published CSI volume', { podUID: uid, volume: volumeName, driver, handle, target, mode: plan.mode });
    if (!delegateFsGroup && appliesFsGroup(plan, csiDriver?.spec.fsGroupPolicy, fsGroup)) {
      // Kept until it succeeds: the target is mounted, so the retry does only this (upstream's uncertain mount).
      ownershipPending.set(target, () => applyOwnership(volumeName, target, plan, fsGroup ?? 0, pod.spec?.securityContext?.fsGroupChangePolicy));
    }
    return target;
  }

  async function applyOwnership(volumeName: string, target: string, plan: Plan, fsGroup: number, changePolicy: string | undefined): Promise<void> {
    try {
      await setVolumeOwnership(target, {
        fsGroup, readOnly: plan.readOnly, ...(changePolicy === undefined ? {} : { changePolicy }),
        onError: (path, err) => { o.logger.warn('cannot apply the fsGroup to a file of a CSI volume', { volume: volumeName, path, err }); },
      });
    } catch (err) {
      throw failed(volumeName, `applying fsGroup ${fsGroup} to ${target} failed: ${messageOf(err)}`);
    }
  }

  /** A mounted volume whose PV grew beyond its claim's capacity: NodeExpandVolume (expand.ts); a failure is an event, retried at the next sync. */
  async function expand(pod: NodePod, volumeName: string, plan: Plan, pv: PersistentVolume, claim: PersistentVolumeClaim, size: string, target: string): Promise<void> {
    let capabilities: string[];
    const client = clientOf(plan.driver, volumeName);
    try {
      capabilities = await client.nodeGetCapabilities();
    } catch (err) {
      o.logger.warn('NodeGetCapabilities failed; the volume is expanded at a later sync', { volume: volumeName, driver: plan.driver, err: csiErrorText(err) });
      return;
    }
    const staging = capabilities.includes(STAGE_CAPABILITY) ? stagingPath(o.rootDir, plan.driver, plan.handle) : '';
    const { name, namespace, uid } = pod.metadata;
    try {
      const result = await expandVolume({
        client, capabilities, nodeName: o.nodeName, volumeName, pod: { name, namespace, uid }, pv, claim, size, readOnly: plan.readOnly, target, staging,
        volumeCapability: capabilityOf(plan, undefined), readSecret, expandSecrets: o.expandSecrets ?? true,
        patchClaimStatus: (ns, name, status) => o.api.patchClaimStatus(ns, name, status), event: o.events ?? (() => undefined), warned: resizeWarned,
      });
      o.logger.v(result === 'expanded' ? 2 : 4, 'CSI volume expansion', { volume: volumeName, pv: pv.metadata?.name, size, result });
    } catch (err) {
      o.logger.warn('cannot finish a CSI volume expansion; tried again at the next sync', { volume: volumeName, pv: pv.metadata?.name, err: messageOf(err) });
    }
  }

  async function unmount(uid: string, dir: string, data: VolData): Promise<void> {
    const target = join(dir, 'mount');
    const unmountFailed = (what: string, err: unknown): OrchError =>
      new OrchError(CSI_UNMOUNT_FAILED, 'unavailable', `volume ${data.specVolID} of pod ${uid}: CSI driver ${data.driverName}: ${what}: ${csiErrorText(err)}`, { subject: data.specVolID, cause: err });
    let client: CsiNodeClient;
    try {
      client = o.drivers.client(data.driverName);
    } catch (err) {
      throw unmountFailed('cannot unpublish', err);
    }
    try {
      await client.nodeUnpublishVolume(data.volumeHandle, target);
    } catch (err) {
      throw unmountFailed(`NodeUnpublishVolume of ${data.volumeHandle} failed`, err);
    }
    if (await isMounted(target)) throw unmountFailed('NodeUnpublishVolume left a mount', new Error(target));
    o.logger.v(2, 'unpublished CSI volume', { podUID: uid, driver: data.driverName, handle: data.volumeHandle });
    // Unstaged before the directory goes: a failed unstage keeps vol_data.json, so the next cleanup retries it.
    if (data.volumeLifecycleMode !== 'Ephemeral' && !(await usedElsewhere(o.rootDir, uid, data.driverName, data.volumeHandle))) {
      let capabilities: string[];
      try {
        capabilities = await client.nodeGetCapabilities();
      } catch (err) {
        throw unmountFailed('NodeGetCapabilities failed', err);
      }
      if (capabilities.includes(STAGE_CAPABILITY)) {
        const staging = stagingPath(o.rootDir, data.driverName, data.volumeHandle);
        try {
          await client.nodeUnstageVolume(data.volumeHandle, staging);
        } catch (err) {
          throw unmountFailed(`NodeUnstageVolume of ${data.volumeHandle} failed`, err);
        }
        staged.delete(`${data.driverName}^${data.volumeHandle}`);
        await rm(join(staging, '..'), { recursive: true, force: true });
        o.logger.v(2, 'unstaged CSI volume', { driver: data.driverName, handle: data.volumeHandle });
      }
    }
    await rm(dir, { recursive: true, force: true });
  }

  return {
    async setUp(pod: NodePod, uid: string, volumeName: string, source: CsiVolumeSource): Promise<string> {
      const plan = planOf(pod, uid, volumeName, source);
      const dir = podVolumeDir(o.rootDir, uid, plan.specVolID);
      const target = join(dir, 'mount');
      const staging = plan.mode === 'Persistent' ? stagingPath(o.rootDir, plan.driver, plan.handle) : '';
      if (source.kind === 'persistent') await inUse.want(uid, volumeName, plan.driver, plan.handle);
      const key = `${plan.driver}^${plan.handle}`;
      // Published already (an earlier sync, or before the agent restarted): nothing to call, the driver need not be registered yet.
      if (!(await isMounted(target))) await queue.run(key, () => mount(pod, uid, volumeName, plan, dir, target));
      const ownership = ownershipPending.get(target);
      if (ownership !== undefined) {
        await ownership();
        ownershipPending.delete(target);
      }
      if (source.kind === 'persistent' && source.claim !== undefined) {
        const size = expansionSize(source.volume, source.claim);
        if (size !== undefined) await queue.run(key, () => expand(pod, volumeName, plan, source.volume, source.claim ?? {}, size, target));
      }
      const volumes = published.get(uid) ?? new Map<string, { driver: string; handle: string; target: string; staging: string }>();
      volumes.set(volumeName, { driver: plan.driver, handle: plan.handle, target, staging });
      published.set(uid, volumes);
      return target;
    },

    async podVolumeStats(uid: string): Promise<CsiPodVolumeStats[]> {
      const result: CsiPodVolumeStats[] = [];
      for (const [name, v] of published.get(uid) ?? []) {
        try {
          const client = o.drivers.client(v.driver);
          const capabilities = await client.nodeGetCapabilities();
          if (!capabilities.includes(STATS_CAPABILITY)) continue;
          const stats = await client.nodeGetVolumeStats(v.handle, v.target, capabilities.includes(STAGE_CAPABILITY) && (await isMounted(v.staging)) ? v.staging : '');
          result.push({
            name,
            ...(stats.bytes === undefined ? {} : { usedBytes: stats.bytes.used, capacityBytes: stats.bytes.total, availableBytes: stats.bytes.available }),
            ...(stats.inodes === undefined ? {} : { inodes: stats.inodes.total, inodesFree: stats.inodes.available, inodesUsed: stats.inodes.used }),
          });
        } catch (err) {
          o.logger.v(4, 'NodeGetVolumeStats failed; the volume has no stats this time', { podUID: uid, volume: name, driver: v.driver, err: csiErrorText(err) });
        }
      }
      return result;
    },

    async tearDown(uid: string): Promise<void> {
      published.delete(uid);
      const dirs = await podCsiDirs(o.rootDir, uid);
      for (const dir of dirs) {
        ownershipPending.delete(join(dir, 'mount'));
        const data = await readVolData(dir);
        if (data === undefined) continue;
        await queue.run(`${data.driverName}^${data.volumeHandle}`, () => unmount(uid, dir, data));
      }
      inUse.forget(uid, dirs.length > 0);
    },

    volumesInUse: () => inUse.list(),
    markVolumesReportedInUse: (names) => { inUse.markReported(names); },
    onVolumesInUseChange: (listener) => inUse.subscribe(listener),
  };
}
