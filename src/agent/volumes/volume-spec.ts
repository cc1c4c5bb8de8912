/**
 * Classifying a pod's volumes before anything touches the disk: which source each volume has,
 * whether this node can set it up without the API server, and the emptyDir parameters.
 */
import type { HostPathVolumeSource, Pod, Volume } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { parseQuantity, quantityValue } from '../../api/quantity.js';
import { checkPathComponent } from './paths.js';
import { VOLUME_INVALID, VOLUME_UNSUPPORTED } from './types.js';

export type VolumeSpec =
  | { readonly kind: 'hostPath'; readonly name: string; readonly source: HostPathVolumeSource }
  | { readonly kind: 'emptyDir'; readonly name: string; readonly memory: boolean; readonly sizeLimitBytes: number | undefined };

function sourcesOf(volume: Volume): string[] {
  return Object.entries(volume)
    .filter(([key, value]) => key !== 'name' && value !== undefined && value !== null)
    .map(([key]) => key);
}

function classify(volume: Volume, index: number): VolumeSpec {
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
        `emptyDir volume "${name}": medium ${JSON.stringify(medium)} is ${known ? 'not supported on this node' : 'unknown; use "" or Memory'}`,
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
  throw new OrchError(
    VOLUME_UNSUPPORTED,
    'invalid',
    `volume "${name}" of type ${type} is not supported yet: it needs the API server (only hostPath and emptyDir work without it)`,
    { subject },
  );
}

/** The specs of all the pod's volumes. Throws the first `VOLUME_INVALID`/`VOLUME_UNSUPPORTED` found; touches nothing. */
export function volumeSpecs(pod: Pod): VolumeSpec[] {
  const volumes = pod.spec?.volumes ?? [];
  const names = new Set<string>();
  return volumes.map((volume, index) => {
    if (names.has(volume.name)) {
      throw new OrchError(VOLUME_INVALID, 'invalid', `volume name "${volume.name}" is used more than once`, { subject: `spec.volumes[${index}].name` });
    }
    names.add(volume.name);
    return classify(volume, index);
  });
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
