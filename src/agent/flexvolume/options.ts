/**
 * The JSON options a FlexVolume driver receives (upstream's NewOptionsForDriver and the mounter's
 * extra options), keys renamed from `kubernetes.io/` to `orch.io/`. Later entries win: the base
 * keys, then the call's extra keys, then the volume's own `options` (as upstream; validation keeps
 * the volume's options out of the orch.io namespace).
 */
import type { NodePod } from '../../api/pod/index.js';
import type { FlexVolumeRequest } from '../volumes/index.js';

export const OPTION_FS_TYPE = 'orch.io/fsType';
export const OPTION_READ_WRITE = 'orch.io/readwrite';
export const OPTION_SECRET_PREFIX = 'orch.io/secret/';
export const OPTION_FS_GROUP = 'orch.io/mounterArgs.FsGroup';
export const OPTION_PV_OR_VOLUME_NAME = 'orch.io/pvOrVolumeName';
export const OPTION_POD_NAME = 'orch.io/pod.name';
export const OPTION_POD_NAMESPACE = 'orch.io/pod.namespace';
export const OPTION_POD_UID = 'orch.io/pod.uid';
export const OPTION_SERVICE_ACCOUNT_NAME = 'orch.io/serviceAccount.name';

/** The options of every call that takes the volume's spec (attach, waitforattach, mountdevice, mount). */
export function driverOptions(request: FlexVolumeRequest, extra: Readonly<Record<string, string>>): Record<string, string> {
  return {
    [OPTION_FS_TYPE]: request.fsType,
    [OPTION_READ_WRITE]: request.readOnly ? 'ro' : 'rw',
    [OPTION_PV_OR_VOLUME_NAME]: request.specName,
    ...extra,
    ...request.options,
  };
}

/** The pod's information mount adds (and fsGroup when the pod sets one). */
export function mountOptions(pod: NodePod, podUID: string): Record<string, string> {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  return {
    [OPTION_POD_NAME]: pod.metadata.name,
    [OPTION_POD_NAMESPACE]: pod.metadata.namespace,
    [OPTION_POD_UID]: podUID,
    [OPTION_SERVICE_ACCOUNT_NAME]: pod.spec?.serviceAccountName ?? '',
    ...(fsGroup === undefined ? {} : { [OPTION_FS_GROUP]: String(fsGroup) }),
  };
}
