/**
 * The payload of a projected volume: its configMap, secret, downwardAPI and serviceAccountToken
 * sources merged into one directory, with the volume's defaultMode. Explicit paths (items, a
 * token's path) used twice are rejected, as the API server's validation does; when sources
 * without items share a key, the later source wins, as upstream's kubelet. A token is that of
 * the pod's service account, bound to the pod, from the injected token source (the token
 * manager, which renews it at 80 % of its lifetime). configMap, secret and serviceAccountToken
 * sources need the API server; clusterTrustBundle sources fail with `VOLUME_UNSUPPORTED`.
 */
import { Buffer } from 'node:buffer';
import type { ProjectedVolumeSource, ServiceAccountTokenProjection, VolumeProjection } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { checkPayloadPath, type FileProjection } from './atomic-writer.js';
import { downwardAPIPayload } from './downward-api.js';
import { DEFAULT_FILE_MODE, fetchKeys, fileMode, keysPayload, type KeysSource } from './payload.js';
import { VOLUME_INVALID, VOLUME_UNSUPPORTED, type NodeCapacity, type ServiceAccountTokenSource, type VolumeObjectSource } from './types.js';
import type { NodePod } from '../../api/pod/index.js';
import { quoteValue } from '../../api/quote.js';

/** The validity of a token when the projection names none (the API's default). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

export interface ProjectedContext {
  readonly pod: NodePod;
  readonly volumeName: string;
  /** The volume's field, e.g. `spec.volumes[3].projected`. */
  readonly subject: string;
  readonly objects: VolumeObjectSource | undefined;
  readonly tokens: ServiceAccountTokenSource | undefined;
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
 * Throws `VOLUME_UNSUPPORTED` for a projection this node cannot serve (clusterTrustBundle; a
 * configMap, secret or serviceAccountToken without the API server) and `VOLUME_INVALID` for one
 * with no source or more than one. Touches nothing.
 */
export function checkProjection(projection: VolumeProjection, apiServer: boolean, volumeName: string, subject: string): void {
  const set = Object.entries(projection).filter(([, v]) => v !== undefined && v !== null).map(([k]) => k);
  if (set.length !== 1) {
    const why = set.length === 0 ? 'has no source' : `has more than one source (${set.join(', ')})`;
    throw new OrchError(VOLUME_INVALID, 'invalid', `projected volume "${volumeName}": ${subject} ${why}`, { subject });
  }
  if (projection.serviceAccountToken !== undefined) {
    if (apiServer) return;
    throw new OrchError(
      VOLUME_UNSUPPORTED,
      'invalid',
      `projected volume "${volumeName}": ${subject}.serviceAccountToken: a service account token needs the API server (--orchconfig); this agent runs standalone`,
      { subject: `${subject}.serviceAccountToken` },
    );
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
    const tokenSource = projection.serviceAccountToken;
    if (keys !== undefined && ctx.objects !== undefined) {
      const field = `${at}.${keys.kind}`;
      files = keysPayload(keys, await fetchKeys(ctx.objects, namespace, keys, volumeName), defaultMode, volumeName, field);
      named = (keys.items ?? []).map((item) => item.path);
    } else if (tokenSource !== undefined) {
      files = await tokenPayload(ctx, tokenSource, defaultMode, `${at}.serviceAccountToken`);
      named = [tokenSource.path];
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

/** The token file of a serviceAccountToken source. */
async function tokenPayload(ctx: ProjectedContext, source: ServiceAccountTokenProjection, mode: number, subject: string): Promise<Map<string, FileProjection>> {
  if (ctx.tokens === undefined) {
    throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `projected volume "${ctx.volumeName}": ${subject}: no token source (the API server is needed)`, { subject });
  }
  const expirationSeconds = source.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
  const token = await ctx.tokens.token(ctx.pod, { audience: source.audience ?? '', expirationSeconds });
  return new Map([[source.path, { data: Buffer.from(token, 'utf8'), mode }]]);
}
