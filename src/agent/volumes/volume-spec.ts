/**
 * Classifying a pod's volumes before anything touches the disk: which source each volume has,
 * whether this node can set it up (configMap, secret, claim-backed and csi sources need the API
 * server; downwardAPI volumes need only the pod), the emptyDir parameters, and the claim of a
 * generic ephemeral volume.
 */
import type {
  CSIVolumeSource,
  ConfigMapVolumeSource,
  DownwardAPIVolumeSource,
  FlexVolumeSource,
  HostPathVolumeSource,
  PersistentVolumeClaimVolumeSource,
  Pod,
  ProjectedVolumeSource,
  SecretVolumeSource,
  Volume,
} from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { parseQuantity, quantityValue } from '../../api/quantity.js';
import { checkPathComponent } from './paths.js';
import { checkProjection } from './projected.js';
import { VOLUME_INVALID, VOLUME_UNSUPPORTED } from './types.js';
import { quoteValue } from '../../api/quote.js';

export type VolumeSpec =
  | { readonly kind: 'hostPath'; readonly name: string; readonly source: HostPathVolumeSource }
  | { readonly kind: 'emptyDir'; readonly name: string; readonly memory: boolean; readonly sizeLimitBytes: number | undefined }
  | { readonly kind: 'configMap'; readonly name: string; readonly index: number; readonly source: ConfigMapVolumeSource }
  | { readonly kind: 'secret'; readonly name: string; readonly index: number; readonly source: SecretVolumeSource }
  | { readonly kind: 'projected'; readonly name: string; readonly index: number; readonly source: ProjectedVolumeSource }
  | { readonly kind: 'downwardAPI'; readonly name: string; readonly index: number; readonly source: DownwardAPIVolumeSource }
  | { readonly kind: 'persistentVolumeClaim' | 'ephemeral'; readonly name: string; readonly index: number; readonly source: PersistentVolumeClaimVolumeSource }
  | { readonly kind: 'csi'; readonly name: string; readonly index: number; readonly source: CSIVolumeSource }
  | { readonly kind: 'flexVolume'; readonly name: string; readonly index: number; readonly source: FlexVolumeSource };

/** The volume kinds whose files the manager writes (and refreshes on every call). */
export type ApiVolumeSpec = Extract<VolumeSpec, { kind: 'configMap' | 'secret' | 'projected' | 'downwardAPI' }>;

export interface VolumeSpecOptions {
  /** True when configMap and secret objects can be read (the agent has an API server). */
  readonly apiServer: boolean;
}

function sourcesOf(volume: Volume): string[] {
  return Object.entries(volume)
    .filter(([key, value]) => key !== 'name' && value !== undefined && value !== null)
    .map(([key]) => key);
}

function needsApiServer(name: string, type: string, subject: string): OrchError {
  return new OrchError(
    VOLUME_UNSUPPORTED,
    'invalid',
    `volume "${name}" of type ${type} needs the API server (--orchconfig); this agent runs standalone (only hostPath, emptyDir and downwardAPI work without it)`,
    { subject },
  );
}

function classify(pod: Pod, volume: Volume, index: number, options: VolumeSpecOptions): VolumeSpec {
  const subject = `spec.volumes[${index}]`;
  const { name } = volume;
  checkPathComponent(name, `${subject}.name`);
  const sources = sourcesOf(volume);
  const [type] = sources;
  if (type === undefined || sources.length > 1) {
    const why = type === undefined ? 'has no volume source' : `has more than one volume source (${sources.join(', ')})`;
    throw new OrchError(VOLUME_INVALID, 'invalid', `volume "${name}" ${why}`, { subject });
  }
  if (volume.hostPath !== undefined) return { kind: 'hostPath', name, source: volume.hostPath };
  if (volume.emptyDir !== undefined) {
    const medium = volume.emptyDir.medium ?? '';
    if (medium !== '' && medium !== 'Memory') {
      const known = medium === 'HugePages' || medium.startsWith('HugePages-');
      throw new OrchError(
        known ? VOLUME_UNSUPPORTED : VOLUME_INVALID,
        'invalid',
        `emptyDir volume "${name}": medium ${quoteValue(medium)} is ${known ? 'not supported on this node' : 'unknown; use "" or Memory'}`,
        { subject: `${subject}.emptyDir.medium` },
      );
    }
    let sizeLimitBytes: number | undefined;
    const limit = volume.emptyDir.sizeLimit;
    if (limit !== undefined) {
      const field = `${subject}.emptyDir.sizeLimit`;
      sizeLimitBytes = quantityValue(parseQuantity(limit, field));
      if (sizeLimitBytes < 0) throw new OrchError(VOLUME_INVALID, 'invalid', `emptyDir volume "${name}": sizeLimit must not be negative`, { subject: field });
    }
    return { kind: 'emptyDir', name, memory: medium === 'Memory', sizeLimitBytes };
  }
  if (volume.downwardAPI !== undefined) return { kind: 'downwardAPI', name, index, source: volume.downwardAPI };
  if (volume.configMap !== undefined) {
    if (!options.apiServer) throw needsApiServer(name, type, subject);
    return { kind: 'configMap', name, index, source: volume.configMap };
  }
  if (volume.secret !== undefined) {
    if (!options.apiServer) throw needsApiServer(name, type, subject);
    return { kind: 'secret', name, index, source: volume.secret };
  }
  if (volume.projected !== undefined) {
    const sources = volume.projected.sources ?? [];
    sources.forEach((p, i) => {
      checkProjection(p, options.apiServer, name, `${subject}.projected.sources[${i}]`);
    });
    return { kind: 'projected', name, index, source: volume.projected };
  }
  if (volume.persistentVolumeClaim !== undefined) {
    if (!options.apiServer) throw needsApiServer(name, type, subject);
    if (volume.persistentVolumeClaim.claimName === '') {
      throw new OrchError(VOLUME_INVALID, 'invalid', `volume "${name}": persistentVolumeClaim.claimName is required`, { subject: `${subject}.persistentVolumeClaim.claimName` });
    }
    return { kind: 'persistentVolumeClaim', name, index, source: volume.persistentVolumeClaim };
  }
  if (volume.ephemeral !== undefined) {
    if (!options.apiServer) throw needsApiServer(name, type, subject);
    // Upstream's ephemeral.VolumeClaimName: the claim the API server made from the template.
    return { kind: 'ephemeral', name, index, source: { claimName: `${pod.metadata?.name ?? ''}-${name}` } };
  }
  if (volume.csi !== undefined) {
    if (!options.apiServer) throw needsApiServer(name, type, subject);
    return { kind: 'csi', name, index, source: volume.csi };
  }
  if (volume.flexVolume !== undefined) return { kind: 'flexVolume', name, index, source: volume.flexVolume };
  throw new OrchError(
    VOLUME_UNSUPPORTED,
    'invalid',
    `volume "${name}" of type ${type} is not supported on this node (supported: hostPath, emptyDir, configMap, secret, projected, downwardAPI, persistentVolumeClaim, ephemeral, csi, flexVolume)`,
    { subject },
  );
}

/** The specs of all the pod's volumes. Throws the first `VOLUME_INVALID`/`VOLUME_UNSUPPORTED` found; touches nothing. */
export function volumeSpecs(pod: Pod, options: VolumeSpecOptions = { apiServer: false }): VolumeSpec[] {
  const volumes = pod.spec?.volumes ?? [];
  const names = new Set<string>();
  return volumes.map((volume, index) => {
    if (names.has(volume.name)) {
      throw new OrchError(VOLUME_INVALID, 'invalid', `volume name "${volume.name}" is used more than once`, { subject: `spec.volumes[${index}].name` });
    }
    names.add(volume.name);
    return classify(pod, volume, index, options);
  });
}

/**
 * Throws `VOLUME_UNSUPPORTED` naming the volume and the container when a container asks for a
 * raw block device (`volumeDevices`): this node maps no block volumes, and starting the container
 * without its device would hide the problem.
 */
export function checkNoVolumeDevices(pod: Pod): void {
  const groups = [['initContainers', pod.spec?.initContainers], ['containers', pod.spec?.containers], ['ephemeralContainers', pod.spec?.ephemeralContainers]] as const;
  for (const [field, containers] of groups) {
    (containers ?? []).forEach((c, i) => {
      const device = c.volumeDevices?.[0];
      if (device === undefined) return;
      throw new OrchError(
        VOLUME_UNSUPPORTED,
        'invalid',
        `volume "${device.name}": block volumes are not supported on this node (volumeDevices of container "${c.name}" at ${device.devicePath}); use volumeMounts and a Filesystem volume`,
        { subject: `spec.${field}[${i}].volumeDevices[0]` },
      );
    });
  }
}

/** Names of every container of the pod (init, regular, ephemeral), each checked as a directory name. */
export function containerNames(pod: Pod): string[] {
  const spec = pod.spec;
  const all = [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
  return all.map((c, index) => {
    checkPathComponent(c.name, `container name (index ${index})`);
    return c.name;
  });
}
