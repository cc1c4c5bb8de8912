/**
 * What both binaries read of volumes and claims (upstream's storage helpers): the class of a
 * claim or volume, access modes as kubectl shows them, whether a volume satisfies a claim's access
 * modes and volume mode, whether a volume is (pre-)bound to a claim, a volume's node affinity, the
 * claims a pod uses, and the names of CSI attachments.
 */
import { createHash } from 'node:crypto';
import type { Node, NodeSelector, PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import { nodeSelectorMatches } from '../node-selector.js';
import { ANN_BETA_DEFAULT_STORAGE_CLASS, ANN_BETA_STORAGE_CLASS, ANN_DEFAULT_STORAGE_CLASS, CSI_PLUGIN_NAME } from './names.js';

/** The class a claim asks for: the beta annotation first, then spec.storageClassName ('' for none). */
export function claimClass(claim: PersistentVolumeClaim): string {
  const annotated = claim.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (annotated !== undefined) return annotated;
  return claim.spec?.storageClassName ?? '';
}

/** The class of a volume: the beta annotation first, then spec.storageClassName. */
export function volumeClass(volume: PersistentVolume): string {
  const annotated = volume.metadata?.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (annotated !== undefined) return annotated;
  return volume.spec?.storageClassName ?? '';
}

const SHORT: Readonly<Record<string, string>> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };

/** Access modes as kubectl prints them: RWO,ROX,RWX,RWOP in that order, each once. */
export function accessModesText(modes: readonly string[] | undefined): string {
  const set = new Set(modes ?? []);
  return Object.entries(SHORT).filter(([mode]) => set.has(mode)).map(([, short]) => short).join(',');
}

/** The volume offers every access mode the claim asks for. */
export function accessModesSatisfied(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  const offered = new Set(volume.spec?.accessModes ?? []);
  return (claim.spec?.accessModes ?? []).every((m) => offered.has(m));
}

/** The claim and the volume differ in volume mode (absent reads as Filesystem on both). */
export function volumeModeMismatch(claim: PersistentVolumeClaim, volume: PersistentVolume): boolean {
  return (claim.spec?.volumeMode ?? 'Filesystem') !== (volume.spec?.volumeMode ?? 'Filesystem');
}

/** The volume's claimRef names this claim (and, when the ref has a uid, this incarnation). */
export function isVolumeBoundToClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = volume.spec?.claimRef;
  if (ref === undefined) return false;
  if (ref.name !== claim.metadata?.name || ref.namespace !== claim.metadata?.namespace) return false;
  return (ref.uid ?? '') === '' || ref.uid === claim.metadata?.uid;
}

/** The volume may be used on the node: no node affinity, or its required terms match the node. */
export function volumeNodeAffinityMatches(volume: PersistentVolume, node: Pick<Node, 'metadata'>): boolean {
  const required: NodeSelector | undefined = volume.spec?.nodeAffinity?.required;
  return required === undefined || nodeSelectorMatches(required, node);
}

/** A StorageClass annotated as the default one ("true", or the beta annotation "true"). */
export function isDefaultStorageClass(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return annotations?.[ANN_DEFAULT_STORAGE_CLASS] === 'true' || annotations?.[ANN_BETA_DEFAULT_STORAGE_CLASS] === 'true';
}

/** The claim of a generic ephemeral volume: `<pod>-<volume>` (upstream's ephemeral.VolumeClaimName). */
export function ephemeralClaimName(podName: string, volumeName: string): string {
  return `${podName}-${volumeName}`;
}

/** The claim a volume of a pod uses, with whether it is an ephemeral volume's; undefined for other sources. */
export function claimOfVolume(podName: string, volume: Volume): { readonly name: string; readonly ephemeral: boolean } | undefined {
  if (volume.persistentVolumeClaim !== undefined) return { name: volume.persistentVolumeClaim.claimName, ephemeral: false };
  if (volume.ephemeral !== undefined) return { name: ephemeralClaimName(podName, volume.name), ephemeral: true };
  return undefined;
}

/** The names of the claims a pod uses (persistentVolumeClaim and ephemeral volumes), each once. */
export function podClaimNames(pod: Pod): string[] {
  const names = new Set<string>();
  for (const v of pod.spec?.volumes ?? []) {
    const claim = claimOfVolume(pod.metadata?.name ?? '', v);
    if (claim !== undefined) names.add(claim.name);
  }
  return [...names];
}

/**
 * Upstream's ephemeral.VolumeIsForPod: the claim of an ephemeral volume must be controlled by the
 * pod (an owner reference with controller true and the pod's uid); otherwise the message says why.
 */
export function ephemeralClaimOwnerProblem(pod: Pod, claim: PersistentVolumeClaim): string | undefined {
  const owned = (claim.metadata?.ownerReferences ?? []).some((o) => o.controller === true && o.uid === pod.metadata?.uid);
  if (owned) return undefined;
  return `PVC ${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''} was not created for pod ${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''} (pod is not owner)`;
}

/**
 * The name of the VolumeAttachment of a CSI volume on a node: `csi-` and the hex SHA-256 of the
 * volume handle, the driver and the node name, concatenated in that order (upstream's
 * getAttachmentName in the CSI attacher).
 */
export function csiAttachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${createHash('sha256').update(`${volumeHandle}${driver}${nodeName}`).digest('hex')}`;
}

/**
 * The unique name of a CSI volume on a node, as node status lists it in volumesAttached and
 * volumesInUse: `orch.io/csi/<driver>^<volumeHandle>` (upstream's kubernetes.io/csi/...).
 */
export function csiUniqueVolumeName(driver: string, volumeHandle: string): string {
  return `${CSI_PLUGIN_NAME}/${driver}^${volumeHandle}`;
}
