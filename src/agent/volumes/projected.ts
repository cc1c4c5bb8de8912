/**
 * The payload of a projected volume: its configMap, secret and downwardAPI sources merged into
 * one directory, with the volume's defaultMode. Explicit paths (items) used twice are rejected,
 * as the API server's validation does; when sources without items share a key, the later source
 * wins, as upstream's kubelet. serviceAccountToken and clusterTrustBundle sources fail with
 * `VOLUME_UNSUPPORTED`: this node cannot get tokens or trust bundles from the API server.
 */
import type { ProjectedVolumeSource, VolumeProjection } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { checkPayloadPath, type FileProjection } from './atomic-writer.js';
import { downwardAPIPayload } from './downward-api.js';
import { DEFAULT_FILE_MODE, fetchKeys, fileMode, keysPayload, type KeysSource } from './payload.js';
import { VOLUME_INVALID, VOLUME_UNSUPPORTED, type NodeCapacity, type VolumeObjectSource } from './types.js';
import type { NodePod } from '../../api/pod/index.js';
import { quoteValue } from '../../api/quote.js';

export const SERVICE_ACCOUNT_TOKEN_UNSUPPORTED = 'serviceAccountToken projections are not supported';

export interface ProjectedContext {
  readonly pod: NodePod;
  readonly volumeName: string;
  /** The volume's field, e.g. `spec.volumes[3].projected`. */
  readonly subject: string;
  readonly objects: VolumeObjectSource | undefined;
  readonly capacity: NodeCapacity;
}

/** The configMap or secret a projection reads, if it reads one. */
export function keysSourceOf(projection: VolumeProjection): KeysSource | undefined {
  if (projection.configMap !== undefined) {
    const { name = '', items, optional } = projection.configMap;
    return { kind: 'configMap', name, ...(items === undefined ? {} : { items }), ...(optional === undefined ? {} : { optional }) };
  }
  if (projection.secret !== undefined) {
    const { name = '', items, optional } = projection.secret;
    return { kind: 'secret', name, ...(items === undefined ? {} : { items }), ...(optional === undefined ? {} : { optional }) };
  }
  return undefined;
}

/**
 * Throws `VOLUME_UNSUPPORTED` for a projection this node cannot serve (serviceAccountToken,
 * clusterTrustBundle, a configMap or secret without the API server) and `VOLUME_INVALID` for one
 * with no source or more than one. Touches nothing.
 */
export function checkProjection(projection: VolumeProjection, apiServer: boolean, volumeName: string, subject: string): void {
  const set = Object.entries(projection).filter(([, v]) => v !== undefined && v !== null).map(([k]) => k);
  if (set.length !== 1) {
    const why = set.length === 0 ? 'has no source' : `has more than one source (${set.join(', ')})`;
    throw new OrchError(VOLUME_INVALID, 'invalid', `projected volume "${volumeName}": ${subject} ${why}`, { subject });
  }
  if (projection.serviceAccountToken !== undefined) {
    throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `projected volume "${volumeName}": ${SERVICE_ACCOUNT_TOKEN_UNSUPPORTED} (${subject}.serviceAccountToken): the API server issues no tokens`, {
      subject: `${subject}.serviceAccountToken`,
    });
  }
  const source = keysSourceOf(projection);
  if (source === undefined && projection.downwardAPI === undefined) {
    throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `projected volume "${volumeName}": ${subject}: source ${set.join('')} is not supported on this node`, { subject });
  }
  if (source !== undefined && !apiServer) {
    throw new OrchError(
      VOLUME_UNSUPPORTED,
      'invalid',
      `projected volume "${volumeName}": ${subject}: a ${source.kind} source needs the API server (--orchconfig); this agent runs standalone`,
      { subject },
    );
  }
}

/** The merged files of a projected volume. Throws what its sources throw, and `VOLUME_INVALID` for an item path used twice. */
export async function projectedPayload(source: ProjectedVolumeSource, ctx: ProjectedContext): Promise<Map<string, FileProjection>> {
  const { pod, volumeName, subject } = ctx;
  const defaultMode = fileMode(source.defaultMode, DEFAULT_FILE_MODE, `${subject}.defaultMode`);
  const namespace = pod.metadata.namespace;
  const payload = new Map<string, FileProjection>();
  /** Normalized item path → the source that named it. */
  const explicit = new Map<string, string>();
  const sources = source.sources ?? [];
  for (const [i, projection] of sources.entries()) {
    const at = `${subject}.sources[${i}]`;
    checkProjection(projection, ctx.objects !== undefined, volumeName, at);
    const keys = keysSourceOf(projection);
    let files: Map<string, FileProjection>;
    let named: readonly string[];
    if (keys !== undefined && ctx.objects !== undefined) {
      const field = `${at}.${keys.kind}`;
      files = keysPayload(keys, await fetchKeys(ctx.objects, namespace, keys, volumeName), defaultMode, volumeName, field);
      named = (keys.items ?? []).map((item) => item.path);
    } else {
      const items = projection.downwardAPI?.items ?? [];
      files = downwardAPIPayload(items, defaultMode, pod, ctx.capacity, `${at}.downwardAPI`);
      named = items.map((item) => item.path);
    }
    for (const path of named) {
      const normalized = checkPayloadPath(path, `projected volume "${volumeName}" ${at}`);
      const earlier = explicit.get(normalized);
      if (earlier !== undefined) {
        throw new OrchError(VOLUME_INVALID, 'invalid', `projected volume "${volumeName}": conflicting duplicate path ${quoteValue(normalized)} (in ${earlier} and ${at})`, { subject: at });
      }
      explicit.set(normalized, at);
    }
    for (const [path, file] of files) payload.set(checkPayloadPath(path, `projected volume "${volumeName}" ${at}`), file);
  }
  return payload;
}
