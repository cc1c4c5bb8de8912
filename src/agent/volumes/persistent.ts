/**
 * persistentVolumeClaim and generic ephemeral volumes, as upstream's volume manager finds them
 * (the desired state of world populator's getPVCExtractPV, then the PV's own plugin): the claim
 * (for an ephemeral volume `<pod>-<volume>`, which must be controlled by the pod) must exist, not be
 * terminating, be Bound to a volume, and that volume's claimRef must carry the claim's UID. The
 * bound PersistentVolume's source decides the rest:
 *
 * | PV source  | here                                                                          |
 * |------------|-------------------------------------------------------------------------------|
 * | local      | the path must exist (a directory or, for volumeMode Block, refused); used     |
 * |            | in place, as a bind mount into the container                                  |
 * | hostPath   | the hostPath plugin's `type` checks, then used in place                       |
 * | csi        | the CSI plugin (src/agent/csi) when the agent has one: attach wait, stage,    |
 * |            | publish into the pod's directory                                              |
 * | flexVolume | the FlexVolume plugin (src/agent/flexvolume) when the agent has one: mounted  |
 * |            | into `<pod>/volumes/<vendor>~<driver>/<pv>`                                   |
 * | other      | VOLUME_UNSUPPORTED naming the source                                          |
 *
 * The volume is read-only when the pod's volume says so (`persistentVolumeClaim.readOnly`) or
 * the claim asks only for ReadOnlyMany (upstream mounts such a volume read-only too).
 * Every failure names the pod's volume and the claim or volume at fault; the pod sync turns it
 * into a FailedMount event and retries with its back-off.
 */
import { stat } from 'node:fs/promises';
import type { PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Secret } from 'kubernetes-types/core/v1.js';

import { OrchError, messageOf } from '../../api/errors.js';
import { getIfExists, type RestClient } from '../orchclient/index.js';
import type { NodePod } from '../../api/pod/index.js';
import { setUpFlexPersistentVolume } from './flex.js';
import { checkHostPath } from './host-path.js';
import {
  VOLUME_CLAIM_NOT_BOUND,
  VOLUME_CLAIM_UNAVAILABLE,
  VOLUME_MOUNT_FAILED,
  VOLUME_UNSUPPORTED,
  type CsiVolumePlugin,
  type FlexVolumePlugin,
  type PersistentVolumeSource,
  type PodVolume,
  type VolumeObjectSource,
} from './types.js';

/** Reads claims and volumes with a GET each (the pod sync asks once per sync of a pod that has such volumes). */
export function createClaimSource(options: { readonly rest: RestClient }): PersistentVolumeSource {
  const { rest } = options;
  return {
    claim: (namespace, name) =>
      getIfExists<PersistentVolumeClaim>(rest, `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`),
    volume: (name) => getIfExists<PersistentVolume>(rest, `/api/v1/persistentvolumes/${encodeURIComponent(name)}`),
  };
}

/**
 * Secrets as upstream's volume plugins read them (a GET each, not the pods' secret manager): the
 * FlexVolume secretRef of a pod's volume or of a PersistentVolume, whose namespace and name no
 * pod's references need to hold (with the Watch and Cache strategies the object manager serves
 * only what registered pods name).
 */
export function createSecretReader(options: { readonly rest: RestClient }): Pick<VolumeObjectSource, 'secret'> {
  const { rest } = options;
  return { secret: (namespace, name) => getIfExists<Secret>(rest, `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`) };
}

/**
 * A claim-backed volume: a `persistentVolumeClaim` volume, or a generic `ephemeral` volume, whose
 * claim `<pod>-<volume>` (made by the API server from the template) is used as a claim that must
 * be controlled by the pod (upstream's ephemeral.VolumeIsForPod).
 */
export interface ClaimVolumeSpec {
  readonly kind: 'persistentVolumeClaim' | 'ephemeral';
  readonly name: string;
  readonly index: number;
  readonly source: PersistentVolumeClaimVolumeSource;
}

function notBound(spec: ClaimVolumeSpec, why: string): OrchError {
  return new OrchError(VOLUME_CLAIM_NOT_BOUND, 'unavailable', `volume "${spec.name}": ${why}`, {
    subject: `spec.volumes[${spec.index}].${spec.kind}`,
  });
}

/** The generic ephemeral volume's claim must be controlled by the pod (an owner reference with controller true and the pod's UID). */
function checkOwnedByPod(spec: ClaimVolumeSpec, claim: PersistentVolumeClaim, pod: { readonly name: string; readonly namespace: string; readonly uid: string }): void {
  const owned = (claim.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === pod.uid);
  if (!owned) throw notBound(spec, `PVC ${pod.namespace}/${claim.metadata?.name ?? ''} was not created for pod ${pod.namespace}/${pod.name} (pod is not owner)`);
}

async function read<T>(spec: ClaimVolumeSpec, what: string, get: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    throw new OrchError(VOLUME_CLAIM_UNAVAILABLE, 'unavailable', `volume "${spec.name}": cannot read ${what}: ${messageOf(err)}`, {
      subject: `spec.volumes[${spec.index}].${spec.kind}`,
      cause: err,
    });
  }
}

/** The claim's bound volume, checked as upstream: throws VOLUME_CLAIM_NOT_BOUND or VOLUME_CLAIM_UNAVAILABLE. */
export async function boundVolume(source: PersistentVolumeSource, pod: NodePod, spec: ClaimVolumeSpec): Promise<{ claim: PersistentVolumeClaim; volume: PersistentVolume }> {
  const { namespace } = pod.metadata;
  const claimName = spec.source.claimName;
  const claimRef = `persistentvolumeclaim ${namespace}/${claimName}`;
  const claim = await read(spec, claimRef, () => source.claim(namespace, claimName));
  if (claim === undefined) throw notBound(spec, `${claimRef} not found`);
  if (spec.kind === 'ephemeral') checkOwnedByPod(spec, claim, pod.metadata);
  if (claim.metadata?.deletionTimestamp !== undefined) throw notBound(spec, `${claimRef} is being deleted`);
  const pvName = claim.spec?.volumeName ?? '';
  if (claim.status?.phase !== 'Bound' || pvName === '') {
    throw notBound(spec, `${claimRef} is not bound (phase ${claim.status?.phase ?? 'Pending'}); the pod waits until it is`);
  }
  const volume = await read(spec, `persistentvolume ${pvName}`, () => source.volume(pvName));
  if (volume === undefined) throw notBound(spec, `persistentvolume ${pvName} (bound to ${claimRef}) not found`);
  const ref = volume.spec?.claimRef;
  const uid = claim.metadata?.uid;
  if (ref?.uid === undefined || ref.uid !== uid || ref.name !== claimName || (ref.namespace ?? '') !== namespace) {
    const holder = ref === undefined ? 'no claim' : `${ref.namespace ?? ''}/${ref.name ?? ''} (uid ${ref.uid ?? 'unset'})`;
    throw notBound(spec, `persistentvolume ${pvName} is bound to ${holder}, not to ${claimRef} (uid ${uid ?? 'unset'})`);
  }
  return { claim, volume };
}

/** Sets up a persistentVolumeClaim volume: the bound PV's source checked and its path handed to the containers. */
export async function setUpClaimVolume(source: PersistentVolumeSource | undefined, pod: NodePod, spec: ClaimVolumeSpec, csi?: CsiVolumePlugin, flex?: FlexVolumePlugin): Promise<PodVolume> {
  const subject = `spec.volumes[${spec.index}].${spec.kind}`;
  if (source === undefined) {
    throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `volume "${spec.name}" of type ${spec.kind} needs the API server (--orchconfig)`, { subject });
  }
  const { claim, volume } = await boundVolume(source, pod, spec);
  const pvName = volume.metadata?.name ?? '';
  const modes = claim.spec?.accessModes ?? [];
  const readOnly = spec.source.readOnly === true || (modes.length > 0 && modes.every((m) => m === 'ReadOnlyMany'));
  const pv = volume.spec ?? {};
  if (pv.volumeMode === 'Block') {
    throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `volume "${spec.name}": persistentvolume ${pvName} has volumeMode Block, which this node does not support (use Filesystem)`, { subject });
  }
  if (pv.local !== undefined) {
    const path = pv.local.path;
    let isDir = false;
    try {
      isDir = (await stat(path)).isDirectory();
    } catch (err) {
      throw new OrchError(VOLUME_MOUNT_FAILED, 'unavailable', `volume "${spec.name}": local path ${path} of persistentvolume ${pvName} cannot be used: ${messageOf(err)}`, { subject, cause: err });
    }
    if (!isDir) {
      throw new OrchError(VOLUME_MOUNT_FAILED, 'invalid', `volume "${spec.name}": local path ${path} of persistentvolume ${pvName} is not a directory`, { subject });
    }
    return { kind: spec.kind, hostPath: path, readOnly };
  }
  if (pv.csi !== undefined && csi !== undefined) {
    return { kind: spec.kind, hostPath: await csi.setUp(pod, pod.metadata.uid, spec.name, { kind: 'persistent', volume, claim, readOnly }), readOnly };
  }
  if (pv.flexVolume !== undefined && flex !== undefined) {
    const mount = { plugin: flex, pod, podUID: pod.metadata.uid };
    return { kind: spec.kind, hostPath: await setUpFlexPersistentVolume(mount, spec.name, volume, pv.flexVolume, readOnly, subject), readOnly };
  }
  if (pv.hostPath !== undefined) {
    await checkHostPath(spec.name, pv.hostPath);
    return { kind: spec.kind, hostPath: pv.hostPath.path, readOnly };
  }
  const kinds = Object.keys(pv).filter((k) => !['accessModes', 'capacity', 'claimRef', 'mountOptions', 'nodeAffinity', 'persistentVolumeReclaimPolicy', 'storageClassName', 'volumeMode', 'volumeAttributesClassName'].includes(k));
  throw new OrchError(
    VOLUME_UNSUPPORTED,
    'invalid',
    `volume "${spec.name}": persistentvolume ${pvName} has source ${kinds.join(', ') || '(none)'}, not supported on this node (supported: local, hostPath${csi === undefined ? '' : ', csi'}${flex === undefined ? '' : ', flexVolume'})`,
    { subject },
  );
}
