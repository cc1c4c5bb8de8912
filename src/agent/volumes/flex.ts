/**
 * flexVolume volumes, from a pod's volume or a PersistentVolume's `spec.flexVolume` (upstream's
 * getDriver/getFSType/getReadOnly/getOptions/getSecretNameAndNamespace): what the FlexVolume
 * plugin (src/agent/flexvolume) is asked to mount. A pod volume's read-only flag is its own; a
 * PV's is the claim volume's (as upstream: "ReadOnly is specified at the PV level" is the spec's).
 */
import type { FlexPersistentVolumeSource, FlexVolumeSource, PersistentVolume } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import { VOLUME_UNSUPPORTED, type FlexVolumePlugin, type FlexVolumeRequest, type PodVolume } from './types.js';

/** The FlexVolume plugin and the pod, for claims bound to FlexVolume PVs. */
export interface FlexMount {
  readonly plugin: FlexVolumePlugin;
  readonly pod: NodePod;
  readonly podUID: string;
}

function request(source: FlexVolumeSource | FlexPersistentVolumeSource, specName: string, volumeName: string, readOnly: boolean, subject: string): FlexVolumeRequest {
  const ref = source.secretRef;
  return {
    specName,
    volumeName,
    driver: source.driver,
    fsType: source.fsType ?? '',
    options: source.options ?? {},
    secretRef: ref?.name === undefined ? undefined : { name: ref.name, ...('namespace' in ref && typeof ref.namespace === 'string' ? { namespace: ref.namespace } : {}) },
    readOnly,
    subject,
  };
}

/** Sets up a pod's flexVolume volume. Throws VOLUME_UNSUPPORTED without the plugin, else the plugin's errors. */
export async function setUpFlexVolume(plugin: FlexVolumePlugin | undefined, pod: NodePod, podUID: string, spec: { readonly name: string; readonly index: number; readonly source: FlexVolumeSource }): Promise<PodVolume> {
  const subject = `spec.volumes[${spec.index}].flexVolume`;
  if (plugin === undefined) throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `volume "${spec.name}" of type flexVolume: this agent has no FlexVolume plugin`, { subject });
  const readOnly = spec.source.readOnly === true;
  const hostPath = await plugin.setUp(pod, podUID, request(spec.source, spec.name, spec.name, readOnly, subject));
  return { kind: 'flexVolume', hostPath, readOnly };
}

/** Mounts a PV's flexVolume source for a claim volume; returns the pod's directory of it. */
export async function setUpFlexPersistentVolume(flex: FlexMount, volumeName: string, volume: PersistentVolume, source: FlexPersistentVolumeSource, readOnly: boolean, subject: string): Promise<string> {
  return await flex.plugin.setUp(flex.pod, flex.podUID, request(source, volume.metadata?.name ?? volumeName, volumeName, readOnly, subject));
}
