/**
 * Mounting a CSI volume for a pod, as upstream's csiMountMgr and csiAttacher (pkg/volume/csi):
 *
 * 1. attach: when the CSIDriver says attachRequired (or there is no CSIDriver), the
 *    VolumeAttachment `csi-<sha256(handle+driver+node)>` must have `status.attached` (its
 *    attachment metadata is the publish context); until then a retried error;
 * 2. stage (drivers with STAGE_UNSTAGE_VOLUME): NodeStageVolume at
 *    `<root-dir>/plugins/orch.io/csi/<driver>/<sha256(volumeHandle)>/globalmount` (idempotent);
 * 3. publish: `vol_data.json` written beside `<root-dir>/pods/<uid>/volumes/orch.io~csi/<pv>/mount`,
 *    then NodePublishVolume there (skipped when the target is a mount point already: no double
 *    mount after a restart), with the pod's info in the volume context when the CSIDriver asks.
 *
 * A failed publish leaves no directory behind (the volume's directory is removed when nothing is
 * mounted there). Teardown reads each `vol_data.json` of the pod (so it works after a restart),
 * unpublishes, removes the directory, and unstages once no other pod directory on the node
 * holds the same driver and handle.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';

import { OrchError, messageOf } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import { csiAttachmentName } from '../../api/storage/index.js';
import type { Logger } from '../logging/index.js';
import { MOUNTINFO_PATH, readMountInfo, type CsiVolumePlugin } from '../volumes/index.js';
import { csiErrorText, type VolumeCapability } from './client.js';
import type { CsiDrivers } from './drivers.js';
import { CSI_MOUNT_FAILED, CSI_UNMOUNT_FAILED } from './errors.js';

export const CSI_POD_DIR = 'orch.io~csi';
export const VOL_DATA_FILE = 'vol_data.json';
const STAGE_CAPABILITY = 'STAGE_UNSTAGE_VOLUME';

/** What the node reads from the API server for CSI volumes. */
export interface CsiApi {
  csiDriver(name: string): Promise<CSIDriver | undefined>;
  volumeAttachment(name: string): Promise<VolumeAttachment | undefined>;
}

export interface CsiMounterOptions {
  readonly rootDir: string;
  readonly nodeName: string;
  readonly drivers: CsiDrivers;
  readonly api: CsiApi;
  readonly logger: Logger;
  readonly mountInfoPath?: string;
}

/** The file beside each published volume's mount directory (upstream's keys). */
interface VolData {
  readonly specVolID: string;
  readonly volumeHandle: string;
  readonly driverName: string;
  readonly nodeName: string;
  readonly attachmentID: string;
  readonly volumeLifecycleMode: 'Persistent' | 'Ephemeral';
}

export function stagingPath(rootDir: string, driver: string, volumeHandle: string): string {
  return join(rootDir, 'plugins', 'orch.io', 'csi', driver, createHash('sha256').update(volumeHandle).digest('hex'), 'globalmount');
}

function accessMode(modes: readonly string[], readOnly: boolean): VolumeCapability['accessMode']['mode'] {
  if (modes.includes('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (modes.includes('ReadOnlyMany') && (readOnly || modes.length === 1)) return 'MULTI_NODE_READER_ONLY';
  return 'SINGLE_NODE_WRITER';
}

export function createCsiMounter(o: CsiMounterOptions): CsiVolumePlugin {
  const mountInfoPath = o.mountInfoPath ?? MOUNTINFO_PATH;
  /** The volumes (`<driver>^<handle>`) this agent staged. */
  const staged = new Set<string>();
  const isMounted = async (path: string): Promise<boolean> => (await readMountInfo(mountInfoPath)).some((m) => m.mountPoint === path);
  const failed = (volume: string, what: string, err?: unknown): OrchError =>
    new OrchError(CSI_MOUNT_FAILED, 'unavailable', `volume "${volume}": ${what}${err === undefined ? '' : `: ${csiErrorText(err)}`}`, { subject: volume, ...(err === undefined ? {} : { cause: err }) });

  async function readVolData(dir: string): Promise<VolData | undefined> {
    try {
      return JSON.parse(await readFile(join(dir, VOL_DATA_FILE), 'utf8')) as VolData;
    } catch {
      return undefined;
    }
  }

  async function podCsiDirs(uid: string): Promise<string[]> {
    const base = join(o.rootDir, 'pods', uid, 'volumes', CSI_POD_DIR);
    try {
      return (await readdir(base)).map((name) => join(base, name));
    } catch {
      return [];
    }
  }

  /** True when a pod other than `uid` has a volume of `driver` with `handle` on this node. */
  async function usedElsewhere(uid: string, driver: string, handle: string): Promise<boolean> {
    let pods: string[] = [];
    try {
      pods = await readdir(join(o.rootDir, 'pods'));
    } catch {
      return false;
    }
    for (const other of pods.filter((p) => p !== uid)) {
      for (const dir of await podCsiDirs(other)) {
        const data = await readVolData(dir);
        if (data?.driverName === driver && data.volumeHandle === handle) return true;
      }
    }
    return false;
  }

  return {
    async setUp(pod: NodePod, uid: string, volumeName: string, pv: PersistentVolume, readOnly: boolean): Promise<string> {
      const source = pv.spec?.csi;
      const pvName = pv.metadata?.name ?? '';
      if (source === undefined) throw failed(volumeName, `persistentvolume ${pvName} has no csi source`);
      const driver = source.driver;
      const dir = join(o.rootDir, 'pods', uid, 'volumes', CSI_POD_DIR, pvName);
      const target = join(dir, 'mount');
      // Published already (an earlier sync, or before the agent restarted): nothing to call.
      if (await isMounted(target)) return target;
      const client = o.drivers.client(driver);
      const csiDriver = await o.api.csiDriver(driver).catch((err: unknown) => {
        throw failed(volumeName, `cannot read csidriver ${driver}: ${messageOf(err)}`);
      });
      const attachID = csiAttachmentName(source.volumeHandle, driver, o.nodeName);
      let publishContext: Record<string, string> = {};
      if (csiDriver?.spec.attachRequired ?? true) {
        const va = await o.api.volumeAttachment(attachID).catch((err: unknown) => {
          throw failed(volumeName, `cannot read volumeattachment ${attachID}: ${messageOf(err)}`);
        });
        if (va?.status?.attached !== true) {
          const why = va === undefined ? 'does not exist yet' : `is not attached yet${va.status?.attachError?.message === undefined ? '' : ` (attach error: ${va.status.attachError.message})`}`;
          throw failed(volumeName, `volumeattachment ${attachID} of persistentvolume ${pvName} ${why}`);
        }
        publishContext = va.status.attachmentMetadata ?? {};
      }
      const volumeCapability: VolumeCapability = {
        mount: { fsType: source.fsType ?? '', mountFlags: pv.spec?.mountOptions ?? [] },
        accessMode: { mode: accessMode(pv.spec?.accessModes ?? [], readOnly) },
      };
      const volumeContext: Record<string, string> = { ...(source.volumeAttributes ?? {}) };
      if (csiDriver?.spec.podInfoOnMount === true) {
        Object.assign(volumeContext, {
          'csi.storage.orch.io/pod.name': pod.metadata.name,
          'csi.storage.orch.io/pod.namespace': pod.metadata.namespace,
          'csi.storage.orch.io/pod.uid': uid,
          'csi.storage.orch.io/serviceAccount.name': pod.spec?.serviceAccountName ?? 'default',
          'csi.storage.orch.io/ephemeral': 'false',
        });
      }
      const base = { volumeId: source.volumeHandle, volumeCapability, publishContext, volumeContext };
      let capabilities: string[];
      try {
        capabilities = await client.nodeGetCapabilities();
      } catch (err) {
        throw failed(volumeName, `CSI driver ${driver}: NodeGetCapabilities failed`, err);
      }
      let staging = '';
      if (capabilities.includes(STAGE_CAPABILITY)) {
        staging = stagingPath(o.rootDir, driver, source.volumeHandle);
        const key = `${driver}^${source.volumeHandle}`;
        // Staged once per node (as upstream's device mount): known here, or mounted at the global path after a restart.
        if (!staged.has(key) && !(await isMounted(staging))) {
          await mkdir(join(staging, '..'), { recursive: true, mode: 0o750 });
          try {
            await client.nodeStageVolume({ ...base, stagingTargetPath: staging });
          } catch (err) {
            throw failed(volumeName, `CSI driver ${driver}: NodeStageVolume of ${source.volumeHandle} failed`, err);
          }
        }
        staged.add(key);
      }
      await mkdir(dir, { recursive: true, mode: 0o750 });
      const data: VolData = { specVolID: pvName, volumeHandle: source.volumeHandle, driverName: driver, nodeName: o.nodeName, attachmentID: attachID, volumeLifecycleMode: 'Persistent' };
      await writeFile(join(dir, VOL_DATA_FILE), JSON.stringify(data));
      try {
        await client.nodePublishVolume({ ...base, stagingTargetPath: staging, targetPath: target, readonly: readOnly });
      } catch (err) {
        if (!(await isMounted(target))) await rm(dir, { recursive: true, force: true });
        throw failed(volumeName, `CSI driver ${driver}: NodePublishVolume of ${source.volumeHandle} failed`, err);
      }
      o.logger.v(2, 'published CSI volume', { podUID: uid, volume: volumeName, driver, handle: source.volumeHandle, target });
      return target;
    },

    async tearDown(uid: string): Promise<void> {
      for (const dir of await podCsiDirs(uid)) {
        const data = await readVolData(dir);
        if (data === undefined) continue;
        const target = join(dir, 'mount');
        const unmountFailed = (what: string, err: unknown): OrchError =>
          new OrchError(CSI_UNMOUNT_FAILED, 'unavailable', `volume ${data.specVolID} of pod ${uid}: CSI driver ${data.driverName}: ${what}: ${csiErrorText(err)}`, { subject: data.specVolID, cause: err });
        let client;
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
        if (!(await usedElsewhere(uid, data.driverName, data.volumeHandle))) {
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
    },
  };
}
