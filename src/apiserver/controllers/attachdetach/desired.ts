/**
 * The attach/detach controller's desired state of one node (upstream's desired state of world,
 * for CSI volumes): the volumes of the pods bound to the node that still run (not terminated) —
 * through a claim (persistentVolumeClaim or generic ephemeral volume) bound to a PersistentVolume
 * with a CSI source — whose driver needs attaching (its CSIDriver says attachRequired, or there is
 * no CSIDriver). Each is one VolumeAttachment, named as upstream's CSI attacher names it.
 */
import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import { claimOfVolume, csiAttachmentName, csiUniqueVolumeName } from '../../../api/storage/index.js';
import { metaOf, nameOf, namespaceOf, str, type WireObject } from '../../registry/index.js';
import { rec, recs } from '../../resources/common/index.js';

export interface Attachment {
  /** The VolumeAttachment's name. */
  readonly name: string;
  readonly driver: string;
  readonly volumeHandle: string;
  readonly persistentVolume: string;
  readonly node: string;
  /** The volume as node status names it (`orch.io/csi/<driver>^<handle>`). */
  readonly uniqueName: string;
}

export interface DesiredSources {
  claim(namespace: string, name: string): WireObject | undefined;
  volume(name: string): WireObject | undefined;
  csiDriver(name: string): WireObject | undefined;
}

/** No container runs any more (upstream's notRunning: every status terminated or waiting). */
function noneRunning(statuses: readonly WireObject[]): boolean {
  return statuses.every((s) => rec(s.state).terminated !== undefined || rec(s.state).waiting !== undefined);
}

/** Upstream's IsPodTerminated: Failed or Succeeded, or deleting with nothing running. */
export function podTerminated(pod: WireObject): boolean {
  const status = rec(pod.status);
  const phase = str(status.phase);
  if (phase === 'Failed' || phase === 'Succeeded') return true;
  return str(metaOf(pod).deletionTimestamp) !== ''
    && noneRunning(recs(status.initContainerStatuses)) && noneRunning(recs(status.containerStatuses)) && noneRunning(recs(status.ephemeralContainerStatuses));
}

/** The attachment a PersistentVolume needs on a node, or undefined (no CSI source, or a driver that does not attach). */
export function attachmentOf(volume: WireObject, node: string, sources: Pick<DesiredSources, 'csiDriver'>): Attachment | undefined {
  const csi = (volume as PersistentVolume).spec?.csi;
  if (csi === undefined || csi.driver === '' || csi.volumeHandle === '') return undefined;
  const driver = sources.csiDriver(csi.driver);
  if (driver !== undefined && rec(driver.spec).attachRequired === false) return undefined;
  return {
    name: csiAttachmentName(csi.volumeHandle, csi.driver, node), driver: csi.driver, volumeHandle: csi.volumeHandle,
    persistentVolume: nameOf(volume), node, uniqueName: csiUniqueVolumeName(csi.driver, csi.volumeHandle),
  };
}

/** The attachments the pods want on `node`, by VolumeAttachment name. */
export function desiredAttachments(node: string, pods: readonly WireObject[], sources: DesiredSources): Map<string, Attachment> {
  const out = new Map<string, Attachment>();
  for (const pod of pods) {
    if (str(rec(pod.spec).nodeName) !== node || podTerminated(pod)) continue;
    for (const v of (pod as Pod).spec?.volumes ?? []) {
      const ref = claimOfVolume(nameOf(pod), v);
      if (ref === undefined) continue;
      const claim = sources.claim(namespaceOf(pod), ref.name);
      const volumeName = str(rec(claim?.spec).volumeName);
      if (claim === undefined || volumeName === '') continue;
      const volume = sources.volume(volumeName);
      if (volume === undefined) continue;
      const attachment = attachmentOf(volume, node, sources);
      if (attachment !== undefined) out.set(attachment.name, attachment);
    }
  }
  return out;
}
