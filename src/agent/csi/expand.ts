/**
 * The node's half of volume expansion (upstream: the volume manager's ExpandInUseVolume,
 * operationGenerator.nodeExpandVolume and the CSI plugin's NodeExpand): when a mounted volume's
 * PersistentVolume is larger than its claim's `status.capacity` (the controller side, an external
 * resizer, grew the PV), a driver with the EXPAND_VOLUME node capability is asked to grow the file
 * system with NodeExpandVolume (the published path, the staging path when it stages, the PV's
 * size as required bytes, the nodeExpandSecretRef secret); then the claim's `status.capacity`
 * becomes the PV's and its resize conditions (`Resizing`, `FileSystemResizePending`) go, as
 * upstream's MarkFSResizeFinished, with a FileSystemResizeSuccessful event on the pod and the
 * claim. A driver without the capability is left alone (its resizer finishes the claim). A
 * read-only volume is not expanded (a FileSystemResizeFailed warning, once per size); a failed
 * call is a VolumeResizeFailed warning on the pod and is tried again at the pod's next sync.
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';

import { compareQuantities, parseQuantity, quantityValue } from '../../api/quantity.js';
import { csiErrorText, type CsiNodeClient, type VolumeCapability } from './client.js';
import { csiSecrets, secretRefOf } from './secrets.js';

export const EXPAND_CAPABILITY = 'EXPAND_VOLUME';
/** Upstream's resize conditions of a claim, removed once the file system is resized. */
const RESIZE_CONDITIONS = ['Resizing', 'FileSystemResizePending'];

/** An object events are recorded on. */
export interface CsiEventReference {
  readonly kind: 'Pod' | 'PersistentVolumeClaim';
  readonly apiVersion: 'v1';
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export type CsiEventSink = (regarding: CsiEventReference, type: 'Normal' | 'Warning', reason: string, message: string) => void;

/** The PV's storage capacity when it is larger than the claim's status capacity (upstream's volumeRequiresFSResize), else undefined. */
export function expansionSize(pv: PersistentVolume, claim: PersistentVolumeClaim): string | undefined {
  const pvSize = pv.spec?.capacity?.['storage'];
  const claimSize = claim.status?.capacity?.['storage'];
  if (pvSize === undefined || claimSize === undefined) return undefined;
  try {
    return compareQuantities(parseQuantity(pvSize), parseQuantity(claimSize)) > 0 ? pvSize : undefined;
  } catch {
    return undefined;
  }
}

export interface ExpandWork {
  readonly client: CsiNodeClient;
  readonly capabilities: readonly string[];
  readonly nodeName: string;
  readonly volumeName: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly pv: PersistentVolume;
  readonly claim: PersistentVolumeClaim;
  readonly size: string;
  readonly readOnly: boolean;
  readonly target: string;
  readonly staging: string;
  readonly volumeCapability: VolumeCapability;
  readonly readSecret: Parameters<typeof csiSecrets>[0];
  /** Feature gate CSINodeExpandSecret: false ignores nodeExpandSecretRef (upstream's gate off). */
  readonly expandSecrets: boolean;
  readonly patchClaimStatus: (namespace: string, name: string, status: Record<string, unknown>) => Promise<void>;
  readonly event: CsiEventSink;
  /** Keys (`<pv>@<size>`) already warned about as read-only. */
  readonly warned: Set<string>;
}

/** Expands the volume as the module comment says; returns what happened (for logs and tests). */
export async function expandVolume(w: ExpandWork): Promise<'unsupported' | 'read-only' | 'failed' | 'expanded'> {
  if (!w.capabilities.includes(EXPAND_CAPABILITY)) return 'unsupported';
  const pvName = w.pv.metadata?.name ?? '';
  const claimNs = w.claim.metadata?.namespace ?? w.pod.namespace;
  const claimName = w.claim.metadata?.name ?? '';
  const podRef: CsiEventReference = { kind: 'Pod', apiVersion: 'v1', namespace: w.pod.namespace, name: w.pod.name, uid: w.pod.uid };
  const claimRef: CsiEventReference = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claimNs, name: claimName, ...(w.claim.metadata?.uid === undefined ? {} : { uid: w.claim.metadata.uid }) };
  const both = (type: 'Normal' | 'Warning', reason: string, message: string): void => {
    w.event(podRef, type, reason, message);
    w.event(claimRef, type, reason, message);
  };
  if (w.readOnly) {
    const key = `${pvName}@${w.size}`;
    if (!w.warned.has(key)) {
      w.warned.add(key);
      both('Warning', 'FileSystemResizeFailed', `MountVolume.NodeExpandVolume failed for volume "${pvName}" requested read-only file system`);
    }
    return 'read-only';
  }
  const csi = w.pv.spec?.csi;
  try {
    const secrets = await csiSecrets(w.readSecret, w.volumeName, w.expandSecrets ? secretRefOf('nodeExpandSecretRef', csi?.nodeExpandSecretRef, '') : undefined);
    await w.client.nodeExpandVolume({
      volumeId: csi?.volumeHandle ?? '', volumePath: w.target, stagingTargetPath: w.staging, requiredBytes: quantityValue(parseQuantity(w.size)),
      volumeCapability: w.volumeCapability, secrets,
    });
  } catch (err) {
    w.event(podRef, 'Warning', 'VolumeResizeFailed', `MountVolume.NodeExpandVolume failed for volume "${pvName}" (pod volume "${w.volumeName}"): ${csiErrorText(err)}`);
    return 'failed';
  }
  both('Normal', 'FileSystemResizeSuccessful', `MountVolume.NodeExpandVolume succeeded for volume "${pvName}" ${w.nodeName}`);
  const conditions = (w.claim.status?.conditions ?? []).filter((c) => !RESIZE_CONDITIONS.includes(c.type));
  await w.patchClaimStatus(claimNs, claimName, { capacity: { ...w.claim.status?.capacity, storage: w.size }, conditions });
  return 'expanded';
}
