/**
 * What the CSI mounter sets up for one pod's volume, whatever its source (a PersistentVolume's
 * `csi` or an inline `csi` volume): driver, handle, lifecycle mode, capability, context and secret
 * references; and upstream's lifecycle-mode check (supportsVolumeLifecycleMode).
 */
import type { CSIVolumeSource, PersistentVolume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';

import { OrchError } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import type { CsiVolumeSource } from '../volumes/index.js';
import type { VolumeCapability } from './client.js';
import { CSI_MOUNT_FAILED, CSI_VOLUME_MODE_UNSUPPORTED } from './errors.js';
import { secretRefOf, type CsiSecretRef } from './secrets.js';
import { inlineVolumeHandle, type VolumeLifecycleMode } from './vol-data.js';

/** One volume to set up, whatever its source. */
export interface Plan {
  readonly driver: string;
  readonly handle: string;
  readonly specVolID: string;
  readonly mode: VolumeLifecycleMode;
  readonly readOnly: boolean;
  readonly fsType: string;
  readonly mountFlags: readonly string[];
  readonly accessModes: readonly string[];
  readonly attributes: Readonly<Record<string, string>>;
  /** For messages: `persistentvolume <name>` or `inline volume`. */
  readonly what: string;
  readonly stageSecretRef?: CsiSecretRef;
  readonly publishSecretRef?: CsiSecretRef;
}

export function accessMode(modes: readonly string[], readOnly: boolean): VolumeCapability['accessMode']['mode'] {
  if (modes.includes('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (modes.includes('ReadOnlyMany') && (readOnly || modes.length === 1)) return 'MULTI_NODE_READER_ONLY';
  return 'SINGLE_NODE_WRITER';
}

/** Adds the optional fields that are set. */
function withRefs(plan: Plan, refs: { stageSecretRef?: CsiSecretRef | undefined; publishSecretRef?: CsiSecretRef | undefined }): Plan {
  return {
    ...plan,
    ...(refs.stageSecretRef === undefined ? {} : { stageSecretRef: refs.stageSecretRef }),
    ...(refs.publishSecretRef === undefined ? {} : { publishSecretRef: refs.publishSecretRef }),
  };
}

export function planOf(pod: NodePod, podUID: string, volumeName: string, source: CsiVolumeSource): Plan {
  if (source.kind === 'inline') {
    const csi: CSIVolumeSource = source.source;
    const plan: Plan = {
      driver: csi.driver, handle: inlineVolumeHandle(podUID, volumeName), specVolID: volumeName, mode: 'Ephemeral', readOnly: csi.readOnly === true,
      fsType: csi.fsType ?? '', mountFlags: [], accessModes: [], attributes: csi.volumeAttributes ?? {}, what: 'inline volume',
    };
    // An inline volume's secret is in the pod's namespace (upstream's csiMountMgr.SetUpAt).
    return withRefs(plan, { publishSecretRef: secretRefOf('nodePublishSecretRef', csi.nodePublishSecretRef, pod.metadata.namespace) });
  }
  const pv: PersistentVolume = source.volume;
  const pvName = pv.metadata?.name ?? '';
  const csi = pv.spec?.csi;
  if (csi === undefined) throw new OrchError(CSI_MOUNT_FAILED, 'invalid', `volume "${volumeName}": persistentvolume ${pvName} has no csi source`, { subject: volumeName });
  const plan: Plan = {
    driver: csi.driver, handle: csi.volumeHandle, specVolID: pvName, mode: 'Persistent', readOnly: source.readOnly || csi.readOnly === true,
    fsType: csi.fsType ?? '', mountFlags: pv.spec?.mountOptions ?? [], accessModes: pv.spec?.accessModes ?? [], attributes: csi.volumeAttributes ?? {},
    what: `persistentvolume ${pvName}`,
  };
  // A PV's references carry their namespace (validation requires it).
  return withRefs(plan, {
    stageSecretRef: secretRefOf('nodeStageSecretRef', csi.nodeStageSecretRef, ''),
    publishSecretRef: secretRefOf('nodePublishSecretRef', csi.nodePublishSecretRef, ''),
  });
}

/** Upstream's supportsVolumeLifecycleMode, with its messages: without a CSIDriver only Persistent. */
export function checkLifecycleMode(volumeName: string, driver: string, csiDriver: CSIDriver | undefined, mode: VolumeLifecycleMode): void {
  const modes = csiDriver?.spec.volumeLifecycleModes ?? ['Persistent'];
  if (csiDriver === undefined && mode === 'Persistent') return;
  if (modes.includes(mode)) return;
  const why = csiDriver === undefined ? 'no CSIDriver object' : `only supports [${modes.map((m) => JSON.stringify(m)).join(' ')}]`;
  throw new OrchError(CSI_VOLUME_MODE_UNSUPPORTED, 'invalid', `volume "${volumeName}": volume mode "${mode}" not supported by driver ${driver} (${why})`, { subject: volumeName });
}

/**
 * Whether the agent applies the pod's fsGroup to the published volume (upstream's
 * csiMountMgr.supportsFSGroup): never without an fsGroup, for a read-only volume or with policy
 * None; always with File; with ReadWriteOnceWithFSType (the default, also without a CSIDriver)
 * only when the volume has an fsType and is a ReadWriteOnce PersistentVolume or an inline volume.
 */
export function appliesFsGroup(plan: Plan, policy: string | undefined, fsGroup: number | undefined): boolean {
  if (fsGroup === undefined || plan.readOnly || policy === 'None') return false;
  if (policy === 'File') return true;
  if (plan.fsType === '') return false;
  return plan.mode === 'Ephemeral' || plan.accessModes.includes('ReadWriteOnce');
}

/** The volume capability of the node calls (a mount; the fsGroup as volumeMountGroup when the driver applies it). */
export function capabilityOf(plan: Plan, mountGroup: number | undefined): VolumeCapability {
  return {
    mount: { fsType: plan.fsType, mountFlags: [...plan.mountFlags], ...(mountGroup === undefined ? {} : { volumeMountGroup: String(mountGroup) }) },
    accessMode: { mode: accessMode(plan.accessModes, plan.readOnly) },
  };
}
