/**
 * Setting up (and refreshing) configMap, secret, projected and downwardAPI volumes: build the
 * payload from the objects and the pod, make the volume directory (on the node's tmpfs for secret
 * and projected volumes: memory-volumes.ts), and write it with the atomic writer.
 * The payload is built before the volume directory is touched, so a missing object leaves no
 * half-made volume. A refresh that fails on a volume already written keeps its files (logged).
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodePod } from '../../api/pod/index.js';

import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { DATA_DIR_NAME, writeAtomically, type AtomicWriterCache, type FileProjection } from './atomic-writer.js';
import { downwardAPIPayload } from './downward-api.js';
import type { MemoryVolumes } from './memory-volumes.js';
import { CONFIG_MAP_PLUGIN_DIR, DOWNWARD_API_PLUGIN_DIR, PROJECTED_PLUGIN_DIR, SECRET_PLUGIN_DIR, volumeDir } from './paths.js';
import { DEFAULT_FILE_MODE, fetchKeys, fileMode, keysPayload, type KeysSource } from './payload.js';
import { projectedPayload } from './projected.js';
import { VOLUME_UNSUPPORTED, type NodeCapacity, type PodVolume, type ServiceAccountTokenSource, type VolumeObjectSource } from './types.js';
import type { ApiVolumeSpec } from './volume-spec.js';

/** Upstream's wrapped emptyDir mode; the volume is mounted read-only into containers anyway. */
const VOLUME_DIR_MODE = 0o777;

const PLUGIN_DIRS: Readonly<Record<ApiVolumeSpec['kind'], string>> = {
  configMap: CONFIG_MAP_PLUGIN_DIR,
  secret: SECRET_PLUGIN_DIR,
  projected: PROJECTED_PLUGIN_DIR,
  downwardAPI: DOWNWARD_API_PLUGIN_DIR,
};

export interface ApiVolumeContext {
  readonly rootDir: string;
  readonly logger: Logger;
  readonly objects: VolumeObjectSource | undefined;
  /** The tokens of serviceAccountToken projections (API-server mode). */
  readonly tokens: ServiceAccountTokenSource | undefined;
  readonly capacity: NodeCapacity;
  /** Names the atomic writer's timestamped directories. */
  readonly clock: Pick<Clock, 'now'>;
  /** The node's tmpfs, where secret and projected volumes keep their files. */
  readonly memory: MemoryVolumes;
  /** mkdir -p with the exact mode (the manager's; synchronous local calls). */
  readonly makeDir: (dir: string, mode: number, subject: string) => void;
  /** The atomic writer's record of the pod's volumes, so that a sync with nothing new stats the files instead of reading them back. */
  readonly written?: AtomicWriterCache;
}

/** True for the kinds that live on a tmpfs (their files may hold secrets). */
export function isMemoryBacked(spec: ApiVolumeSpec): boolean {
  return spec.kind === 'secret' || spec.kind === 'projected';
}

function objectsOrThrow(ctx: ApiVolumeContext, spec: ApiVolumeSpec): VolumeObjectSource {
  if (ctx.objects !== undefined) return ctx.objects;
  // volumeSpecs rejects these already in standalone mode; kept for callers that skip it.
  throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `volume "${spec.name}" of type ${spec.kind} needs the API server (--orchconfig)`, {
    subject: `spec.volumes[${spec.index}]`,
  });
}

/** The files the volume must hold now. */
export async function buildPayload(ctx: ApiVolumeContext, pod: NodePod, spec: ApiVolumeSpec): Promise<Map<string, FileProjection>> {
  const subject = `spec.volumes[${spec.index}].${spec.kind}`;
  const namespace = pod.metadata.namespace;
  switch (spec.kind) {
    case 'configMap':
    case 'secret': {
      const s = spec.source;
      const name = spec.kind === 'configMap' ? (spec.source.name ?? '') : (spec.source.secretName ?? '');
      const source: KeysSource = { kind: spec.kind, name, ...(s.items === undefined ? {} : { items: s.items }), ...(s.optional === undefined ? {} : { optional: s.optional }) };
      const defaultMode = fileMode(s.defaultMode, DEFAULT_FILE_MODE, `${subject}.defaultMode`);
      const keys = await fetchKeys(objectsOrThrow(ctx, spec), namespace, source, spec.name);
      return keysPayload(source, keys, defaultMode, spec.name, subject);
    }
    case 'downwardAPI': {
      const defaultMode = fileMode(spec.source.defaultMode, DEFAULT_FILE_MODE, `${subject}.defaultMode`);
      return downwardAPIPayload(spec.source.items ?? [], defaultMode, pod, ctx.capacity, subject);
    }
    case 'projected':
      return projectedPayload(spec.source, { pod, volumeName: spec.name, subject, objects: ctx.objects, tokens: ctx.tokens, capacity: ctx.capacity });
  }
}

async function wasWritten(dir: string): Promise<boolean> {
  try {
    return (await lstat(join(dir, DATA_DIR_NAME))).isSymbolicLink();
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Sets up or refreshes one configMap, secret, projected or downwardAPI volume and returns it.
 * Throws when the first setup fails; a failed refresh keeps the previous files and logs why.
 */
export async function setUpApiVolume(ctx: ApiVolumeContext, pod: NodePod, uid: string, spec: ApiVolumeSpec): Promise<PodVolume> {
  const dir = volumeDir(ctx.rootDir, uid, PLUGIN_DIRS[spec.kind], spec.name);
  const volume: PodVolume = { kind: spec.kind, hostPath: dir, readOnly: true };
  const what = `${spec.kind} volume "${spec.name}"`;
  let payload: Map<string, FileProjection>;
  try {
    payload = await buildPayload(ctx, pod, spec);
  } catch (err) {
    if (!(await wasWritten(dir))) throw err;
    ctx.logger.warn('cannot refresh volume; keeping its previous content', { podUID: uid, volume: spec.name, kind: spec.kind, err: messageOf(err) });
    return volume;
  }
  if (isMemoryBacked(spec)) await ctx.memory.prepare(uid, PLUGIN_DIRS[spec.kind], spec.name, dir, VOLUME_DIR_MODE);
  else ctx.makeDir(dir, VOLUME_DIR_MODE, `volume ${spec.name}`);
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  const wrote = await writeAtomically({ dir, payload, clock: ctx.clock, subject: what, ...(ctx.written === undefined ? {} : { cache: ctx.written }), ...(fsGroup === undefined ? {} : { fsGroup }) });
  if (wrote) ctx.logger.v(2, 'wrote volume files', { podUID: uid, volume: spec.name, kind: spec.kind, files: payload.size });
  return volume;
}
