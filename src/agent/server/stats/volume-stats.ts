/**
 * The pods' volume stats (upstream's fsResourceAnalyzer): every volumeStatsAggPeriod, in the
 * background, each pod's emptyDir, configMap, secret, projected and downwardAPI volumes are
 * measured as `du -x -H` measures them (the blocks and inodes of everything below the volume's
 * directory on its own file system, symlinks below it not followed) with the file system's capacity and
 * free space from statfs, and the pod's /etc/hosts file; its CSI volumes as their drivers report
 * them (NodeGetVolumeStats, for drivers with GET_VOLUME_STATS). A period of 0 turns it off. The summary
 * and the eviction manager read the last measurement; a pod measured for the first time is
 * measured at once.
 */
import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { Volume } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../../../api/clock.js';
import { formatTime } from '../../../api/time.js';
import { messageOf } from '../../../api/errors.js';
import type { NodePod } from '../../../api/pod/index.js';
import type { Logger } from '../../logging/index.js';
import {
  CONFIG_MAP_PLUGIN_DIR, DOWNWARD_API_PLUGIN_DIR, EMPTY_DIR_PLUGIN_DIR, PROJECTED_PLUGIN_DIR, SECRET_PLUGIN_DIR, etcHostsPath, volumeDir,
} from '../../volumes/index.js';
import type { FsStats } from './types.js';

/** A volume's stats as the summary API gives them (`volume` of a pod). */
export interface VolumeStats extends FsStats {
  readonly name: string;
}


export interface PodVolumeStats {
  readonly volumes: readonly VolumeStats[];
  /**
   * What the pod's local ephemeral volumes (emptyDir on disk, configMap, gitRepo: upstream's
   * IsLocalEphemeralVolume) and its /etc/hosts hold: the volumes' part of its ephemeral storage.
   */
  readonly ephemeral: { readonly usedBytes: number; readonly inodesUsed: number };
}

export interface VolumeStatsCache {
  start(): void;
  stop(): Promise<void>;
  /** The last measurement of the pod's volumes, if any. */
  podVolumes(uid: string): PodVolumeStats | undefined;
  /** Measures every pod now (tests and the first pass). */
  refresh(): Promise<void>;
}

export interface VolumeStatsOptions {
  readonly rootDir: string;
  /** The pods whose volumes to measure (the desired pods). */
  readonly pods: () => readonly NodePod[];
  /** volumeStatsAggPeriod in ms; 0: off. */
  readonly periodMs: number;
  readonly clock: Clock;
  readonly logger?: Logger;
  /** The pod's CSI volumes as their drivers measure them (NodeGetVolumeStats), in API-server mode. */
  readonly csi?: (podUID: string) => Promise<readonly Omit<VolumeStats, 'time'>[]>;
}

const isLocalEphemeral = (v: Volume): boolean => v.gitRepo !== undefined || v.configMap !== undefined || (v.emptyDir !== undefined && (v.emptyDir.medium ?? '') === '');

function pluginDir(v: Volume): string | undefined {
  if (v.emptyDir !== undefined) return EMPTY_DIR_PLUGIN_DIR;
  if (v.configMap !== undefined) return CONFIG_MAP_PLUGIN_DIR;
  if (v.secret !== undefined) return SECRET_PLUGIN_DIR;
  if (v.projected !== undefined) return PROJECTED_PLUGIN_DIR;
  if (v.downwardAPI !== undefined) return DOWNWARD_API_PLUGIN_DIR;
  return undefined;
}

/**
 * Blocks (as bytes) and inodes of the tree at `path` on its own device, hard links counted once.
 * `path` itself is followed when it is a link (as `du -H`: a secret or projected volume's
 * directory links to its files on the node's tmpfs); links below it are not.
 */
export async function diskUsage(path: string): Promise<{ usedBytes: number; inodesUsed: number }> {
  const top = await stat(path);
  const seen = new Set<number>();
  let usedBytes = 0;
  let inodesUsed = 0;
  const visit = async (p: string, s: Stats): Promise<void> => {
    if (s.dev !== top.dev) return;
    if (s.nlink > 1) {
      if (seen.has(s.ino)) return;
      seen.add(s.ino);
    }
    usedBytes += s.blocks * 512;
    inodesUsed++;
    if (!s.isDirectory()) return;
    let entries: Dirent[];
    try {
      entries = await readdir(p, { withFileTypes: true });
    } catch {
      return; // removed meanwhile
    }
    for (const e of entries) {
      const child = join(p, e.name);
      const cs = await lstat(child).catch(() => undefined);
      if (cs !== undefined) await visit(child, cs);
    }
  };
  await visit(path, top);
  return { usedBytes, inodesUsed };
}

async function measureVolume(dir: string, name: string, time: string): Promise<VolumeStats> {
  const [usage, fs] = await Promise.all([diskUsage(dir), statfs(dir)]);
  return {
    name, time, ...usage,
    capacityBytes: fs.blocks * fs.bsize, availableBytes: fs.bavail * fs.bsize, inodes: fs.files, inodesFree: fs.ffree,
  };
}

export function createVolumeStatsCache(o: VolumeStatsOptions): VolumeStatsCache {
  const cache = new Map<string, PodVolumeStats>();
  let timer: Timer | undefined;
  let running: Promise<void> | undefined;
  let on = false;

  async function measurePod(pod: NodePod): Promise<PodVolumeStats> {
    const { uid } = pod.metadata;
    const time = formatTime(o.clock.now());
    const volumes: VolumeStats[] = [];
    const ephemeral = await lstat(etcHostsPath(o.rootDir, uid)).then((s) => ({ usedBytes: s.blocks * 512, inodesUsed: 1 }), () => ({ usedBytes: 0, inodesUsed: 0 }));
    for (const v of pod.spec?.volumes ?? []) {
      const plugin = pluginDir(v);
      if (plugin === undefined) continue;
      try {
        const measured = await measureVolume(volumeDir(o.rootDir, uid, plugin, v.name), v.name, time);
        volumes.push(measured);
        if (isLocalEphemeral(v)) {
          ephemeral.usedBytes += measured.usedBytes ?? 0;
          ephemeral.inodesUsed += measured.inodesUsed ?? 0;
        }
      } catch (err) {
        o.logger?.v(4, 'Cannot measure a volume (not set up yet?)', { podUID: uid, volume: v.name, err: messageOf(err) });
      }
    }
    if (o.csi !== undefined) for (const v of await o.csi(uid)) volumes.push({ ...v, time });
    return { volumes, ephemeral };
  }

  /** A pod not measured yet is measured in the background, once. */
  const pending = new Set<string>();
  function measureSoon(uid: string): void {
    const pod = o.pods().find((p) => p.metadata.uid === uid);
    if (pod === undefined || pending.has(uid)) return;
    pending.add(uid);
    void measurePod(pod).then((s) => { if (on && !cache.has(uid)) cache.set(uid, s); }, (err: unknown) => {
      o.logger?.v(2, 'Measuring a pod\'s volumes failed', { podUID: uid, err: messageOf(err) });
    }).finally(() => pending.delete(uid));
  }

  async function refresh(): Promise<void> {
    const pods = o.pods();
    const wanted = new Set(pods.map((p) => p.metadata.uid));
    for (const uid of cache.keys()) if (!wanted.has(uid)) cache.delete(uid);
    for (const pod of pods) cache.set(pod.metadata.uid, await measurePod(pod));
  }

  function tick(): void {
    running = refresh()
      .catch((err: unknown) => { o.logger?.warn('Measuring the pods\' volumes failed; trying again at the next period', { err: messageOf(err) }); })
      .finally(() => {
        running = undefined;
        if (on) timer = o.clock.setTimer(o.periodMs, tick);
      });
  }

  return {
    start() {
      if (on || o.periodMs <= 0) return;
      on = true;
      tick();
    },
    async stop() {
      on = false;
      timer?.cancel();
      await running;
    },
    podVolumes(uid) {
      const known = cache.get(uid);
      if (known === undefined && on) measureSoon(uid);
      return known;
    },
    refresh,
  };
}
