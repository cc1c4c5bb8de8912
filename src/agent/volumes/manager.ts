/**
 * The volume manager: hostPath, emptyDir, downwardAPI, and (given `objects`) configMap, secret and
 * projected volumes. See types.ts for the contract of each method and paths.ts for the layout on
 * disk.
 */
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { lstat, readdir, realpath, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container } from 'kubernetes-types/core/v1.js';

import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import { readNodeCapacity } from '../../api/node-capacity.js';
import type { Logger } from '../logging/index.js';
import { setUpApiVolume, type ApiVolumeContext } from './api-volumes.js';
import type { AtomicWriterCache } from './atomic-writer.js';
import { writeEtcHosts } from './etc-hosts.js';
import { checkHostPath } from './host-path.js';
import { DEFAULT_UNMOUNT_RETRY_MS, DEFAULT_UNMOUNT_TIMEOUT_MS, mountTmpfs, unmount } from './mounter.js';
import { createMemoryVolumes, type MemoryVolumes } from './memory-volumes.js';
import { MOUNTINFO_PATH, readMountInfoBelow, type MountInfoEntry } from './mountinfo.js';
import { mountsFor } from './mounts.js';
import { setUpFlexVolume } from './flex.js';
import { setUpClaimVolume } from './persistent.js';
import { checkPathComponent, containerDir, emptyDirPath, podDir, podsDir, podUIDOf } from './paths.js';
import {
  VOLUME_CLEANUP_FAILED,
  VOLUME_MOUNT_FAILED,
  VOLUME_UNSUPPORTED,
  type Mount,
  type NodeCapacity,
  type CsiVolumePlugin,
  type FlexVolumePlugin,
  type PersistentVolumeSource,
  type PodVolume,
  type PodVolumes,
  type ServiceAccountTokenSource,
  type VolumeManager,
  type VolumeObjectSource,
} from './types.js';
import { checkNoVolumeDevices, containerNames, volumeSpecs, type VolumeSpec } from './volume-spec.js';
import type { NodePod } from '../../api/pod/index.js';

/** Upstream's emptyDir mode: every user of the pod may write (fsGroup ownership comes later). */
const EMPTY_DIR_MODE = 0o777;
const POD_DIR_MODE = 0o750;

export interface VolumeManagerOptions {
  /** The agent's root directory (--root-dir); pod data lives in `<rootDir>/pods`. */
  readonly rootDir: string;
  readonly logger: Logger;
  /** Where to read the mount table (default /proc/self/mountinfo). */
  readonly mountInfoPath?: string;
  /** How long a busy unmount is retried before `umount -l` (default 10 s). */
  readonly unmountTimeoutMs?: number;
  /** Pause between unmount attempts (default 100 ms). */
  readonly retryIntervalMs?: number;
  /**
   * Where configMap and secret volumes (and projected sources) read their objects: the API
   * server, ideally through a cache. Without it (standalone mode) such volumes fail with
   * `VOLUME_UNSUPPORTED`; downwardAPI volumes work either way.
   */
  readonly objects?: VolumeObjectSource;
  /** The claims and volumes of persistentVolumeClaim volumes; without it (standalone) they fail with `VOLUME_UNSUPPORTED`. */
  readonly claims?: PersistentVolumeSource;
  /** The CSI plugin: PVs with a csi source mount through it, and cleanupPodVolumes tears its volumes down first. */
  readonly csi?: CsiVolumePlugin;
  /** The FlexVolume plugin: flexVolume volumes (and PVs with a flexVolume source) mount through it; without it they fail with `VOLUME_UNSUPPORTED`. */
  readonly flex?: FlexVolumePlugin;
  /** The tokens of serviceAccountToken projections (the token manager); without it (standalone) they fail with `VOLUME_UNSUPPORTED`. */
  readonly tokens?: ServiceAccountTokenSource;
  /** What unset container limits mean to downwardAPI resourceFieldRefs (default: this machine's CPUs and memory, read at the first use). */
  readonly nodeCapacity?: () => NodeCapacity;
  /** The unmount retries and deadline, and the atomic writer's timestamped directories. */
  readonly clock: Clock;
  /** The cluster's DNS domain, for the pod's /etc/hosts (default cluster.local). */
  readonly clusterDomain?: string;
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

class LocalVolumeManager implements VolumeManager {
  private readonly rootDir: string;
  private readonly logger: Logger;
  private readonly mountInfoPath: string;
  private readonly unmountTimeoutMs: number;
  private readonly retryIntervalMs: number;
  private readonly objects: VolumeObjectSource | undefined;
  private readonly tokens: ServiceAccountTokenSource | undefined;
  private readonly claims: PersistentVolumeSource | undefined;
  private readonly csi: CsiVolumePlugin | undefined;
  private readonly flex: FlexVolumePlugin | undefined;
  private readonly nodeCapacity: () => NodeCapacity;
  private readonly clock: Clock;
  private readonly clusterDomain: string;
  /** The tail of each pod's chain of operations: calls for one pod never overlap. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** The volumes each pod's last preparePodVolumes made: its containers' mounts resolve against them. */
  private readonly prepared = new Map<string, PodVolumes>();
  /** Per pod, what the atomic writer last wrote or verified in its configMap, secret, projected and downwardAPI volumes. */
  private readonly written = new Map<string, AtomicWriterCache>();
  /** Each pod's /etc/hosts and the sandbox it was written for (undefined path: host network). */
  private readonly etcHosts = new Map<string, { readonly sandbox: string; readonly path: string | undefined }>();
  private readonly memory: MemoryVolumes;

  constructor(options: VolumeManagerOptions) {
    this.rootDir = options.rootDir;
    this.logger = options.logger;
    this.mountInfoPath = options.mountInfoPath ?? MOUNTINFO_PATH;
    this.unmountTimeoutMs = options.unmountTimeoutMs ?? DEFAULT_UNMOUNT_TIMEOUT_MS;
    this.retryIntervalMs = options.retryIntervalMs ?? DEFAULT_UNMOUNT_RETRY_MS;
    this.objects = options.objects;
    this.tokens = options.tokens;
    this.claims = options.claims;
    this.csi = options.csi;
    this.flex = options.flex;
    let machine: NodeCapacity | undefined;
    this.nodeCapacity = options.nodeCapacity ?? (() => (machine ??= readNodeCapacity()));
    this.clock = options.clock;
    this.clusterDomain = options.clusterDomain ?? 'cluster.local';
    this.memory = createMemoryVolumes({
      rootDir: this.rootDir,
      logger: this.logger,
      mountInfoPath: this.mountInfoPath,
      makeDir: (dir, mode, subject) => { this.makeDir(dir, mode, subject); },
    });
  }

  private serialize<T>(podUID: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(podUID) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined, // the caller of `run` receives the error; the chain only orders calls
    );
    this.queues.set(podUID, tail);
    void tail.then(() => {
      if (this.queues.get(podUID) === tail) this.queues.delete(podUID);
    });
    return run;
  }

  async preparePodVolumes(pod: NodePod): Promise<PodVolumes> {
    const uid = podUIDOf(pod);
    const specs = volumeSpecs(pod, { apiServer: this.objects !== undefined });
    checkNoVolumeDevices(pod);
    const containers = containerNames(pod);
    return await this.serialize(uid, async () => {
      const dir = podDir(this.rootDir, uid);
      this.makeDir(dir, POD_DIR_MODE, 'pod directory');
      this.makeDir(join(dir, 'volumes'), POD_DIR_MODE, 'volumes directory');
      for (const name of containers) this.makeDir(containerDir(this.rootDir, uid, name), POD_DIR_MODE, `container ${name}`);
      // Only memory-backed emptyDirs mount a tmpfs of their own (secret and projected volumes use the node's).
      const tmpfs = specs.some((s) => s.kind === 'emptyDir' && s.memory);
      const mounts = tmpfs ? await readMountInfoBelow(await realpath(dir), this.mountInfoPath) : [];
      const api: ApiVolumeContext = {
        rootDir: this.rootDir,
        logger: this.logger,
        objects: this.objects,
        tokens: this.tokens,
        capacity: this.nodeCapacity(),
        clock: this.clock,
        memory: this.memory,
        makeDir: (dir, mode, subject) => { this.makeDir(dir, mode, subject); },
        written: this.writtenOf(uid),
      };
      const result = new Map<string, PodVolume>();
      for (const spec of specs) {
        result.set(spec.name, await this.setUpVolume(api, pod, uid, spec, mounts));
      }
      this.prepared.set(uid, result);
      return result;
    });
  }

  private writtenOf(uid: string): AtomicWriterCache {
    const known = this.written.get(uid);
    if (known !== undefined) return known;
    const fresh: AtomicWriterCache = new Map();
    this.written.set(uid, fresh);
    return fresh;
  }

  async mountsFor(pod: NodePod, container: Container, sandbox: { readonly id: string; readonly podIPs: readonly string[] }): Promise<Mount[]> {
    const uid = podUIDOf(pod);
    const volumes = this.prepared.get(uid) ?? (await this.preparePodVolumes(pod));
    let hosts = this.etcHosts.get(uid);
    if (hosts?.sandbox !== sandbox.id) {
      hosts = { sandbox: sandbox.id, path: writeEtcHosts({ rootDir: this.rootDir, pod, podIPs: sandbox.podIPs, clusterDomain: this.clusterDomain }) };
      this.etcHosts.set(uid, hosts);
    }
    return mountsFor(container, volumes, hosts.path === undefined ? {} : { etcHostsPath: hosts.path });
  }

  containerDir(pod: NodePod, container: Container): string {
    return containerDir(this.rootDir, podUIDOf(pod), container.name);
  }

  private async setUpVolume(api: ApiVolumeContext, pod: NodePod, uid: string, spec: VolumeSpec, mounts: readonly MountInfoEntry[]): Promise<PodVolume> {
    switch (spec.kind) {
      case 'hostPath':
      case 'emptyDir':
        return await this.setUp(uid, spec, mounts);
      case 'persistentVolumeClaim':
      case 'ephemeral':
        return await setUpClaimVolume(this.claims, pod, spec, this.csi, this.flex);
      case 'csi':
        if (this.csi === undefined) {
          throw new OrchError(VOLUME_UNSUPPORTED, 'invalid', `volume "${spec.name}" of type csi needs the API server (--orchconfig)`, { subject: `spec.volumes[${spec.index}].csi` });
        }
        return { kind: 'csi', hostPath: await this.csi.setUp(pod, uid, spec.name, { kind: 'inline', source: spec.source }), readOnly: spec.source.readOnly === true };
      case 'flexVolume':
        return await setUpFlexVolume(this.flex, pod, uid, spec);
      default:
        return await setUpApiVolume(api, pod, uid, spec);
    }
  }

  private async setUp(uid: string, spec: Extract<VolumeSpec, { kind: 'hostPath' | 'emptyDir' }>, mounts: readonly MountInfoEntry[]): Promise<PodVolume> {
    if (spec.kind === 'hostPath') {
      await checkHostPath(spec.name, spec.source);
      return { kind: 'hostPath', hostPath: spec.source.path, readOnly: false };
    }
    const dir = emptyDirPath(this.rootDir, uid, spec.name);
    const sized = spec.sizeLimitBytes === undefined ? {} : { sizeLimitBytes: spec.sizeLimitBytes };
    if (!spec.memory) {
      // Disk-backed: sizeLimit is only recorded; the eviction manager enforces it.
      this.makeDir(dir, EMPTY_DIR_MODE, `volume ${spec.name}`);
      return { kind: 'emptyDir', hostPath: dir, readOnly: false, ...sized };
    }
    this.makeDir(dir, EMPTY_DIR_MODE, `volume ${spec.name}`);
    const real = await realpath(dir);
    if (mounts.some((m) => m.mountPoint === real && m.fsType === 'tmpfs')) {
      this.logger.v(4, 'tmpfs already mounted for emptyDir', { podUID: uid, volume: spec.name, path: dir });
    } else {
      await mountTmpfs(dir, spec.sizeLimitBytes, `volume ${spec.name}`);
      this.logger.v(2, 'mounted tmpfs for emptyDir', { podUID: uid, volume: spec.name, path: dir, sizeLimitBytes: spec.sizeLimitBytes });
    }
    return { kind: 'emptyDir', hostPath: dir, readOnly: false, medium: 'Memory', ...sized };
  }

  /**
   * mkdir -p, then the exact mode (the umask must not narrow it). Synchronous calls: every sync
   * of a pod makes its directories, almost always there already (one stat), and a few local
   * system calls take microseconds where a round trip through libuv's thread pool waits behind
   * the agent's other file work (a burst of pod starts).
   */
  private makeDir(dir: string, mode: number, subject: string): void {
    try {
      let info = statSync(dir, { throwIfNoEntry: false });
      if (info?.isDirectory() !== true) {
        mkdirSync(dir, { recursive: true, mode });
        info = statSync(dir);
      }
      // Permission bits only: a setgid bit that fsGroup set must survive later syncs.
      if ((info.mode & 0o777) !== mode) chmodSync(dir, mode);
    } catch (err) {
      throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `cannot create ${dir}`, { subject, cause: err });
    }
  }

  async cleanupPodVolumes(podUID: string): Promise<void> {
    checkPathComponent(podUID, 'pod UID');
    this.tokens?.forgetPod(podUID);
    this.prepared.delete(podUID);
    this.written.delete(podUID);
    this.etcHosts.delete(podUID);
    await this.serialize(podUID, async () => {
      this.written.delete(podUID); // a sync queued before this cleanup may have recorded its volumes again
      const dir = podDir(this.rootDir, podUID);
      let isLink: boolean;
      try {
        isLink = (await lstat(dir)).isSymbolicLink();
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') {
          await this.memory.removePod(podUID);
          return;
        }
        throw new OrchError(VOLUME_CLEANUP_FAILED, 'internal', `cannot inspect ${dir}`, { subject: `pod ${podUID}`, cause: err });
      }
      if (isLink) {
        // Never follow a link out of the pods directory: drop the link itself.
        this.logger.warn('pod directory is a symlink; removing the link only', { podUID, path: dir });
        await unlink(dir);
        await this.memory.removePod(podUID);
        return;
      }
      try {
        await this.csi?.tearDown(podUID);
        await this.flex?.tearDown(podUID);
      } catch (err) {
        // The volume stays mounted and the directory kept: the next cleanup retries (unpublish and unstage are idempotent).
        throw new OrchError(VOLUME_CLEANUP_FAILED, 'unavailable', messageOf(err), { subject: `pod ${podUID}`, cause: err });
      }
      const real = await realpath(dir);
      await this.unmountBelow(real, podUID);
      try {
        // rm does not follow symlinks: a link to a hostPath (or anywhere) is unlinked, its target kept.
        await rm(dir, { recursive: true, force: true });
      } catch (err) {
        throw new OrchError(VOLUME_CLEANUP_FAILED, 'internal', `cannot remove ${dir}`, { subject: `pod ${podUID}`, cause: err });
      }
      // The files of its secret and projected volumes, once the links to them are gone.
      await this.memory.removePod(podUID);
      this.logger.v(2, 'removed pod directory', { podUID, path: dir });
    });
  }

  /** Unmounts every mount at or below `real`, deepest first, until none is left. */
  private async unmountBelow(real: string, podUID: string): Promise<void> {
    const below = (): Promise<MountInfoEntry[]> => readMountInfoBelow(real, this.mountInfoPath);
    let remaining = await below();
    const attempts = remaining.length + 1;
    for (let i = 0; i < attempts && remaining.length > 0; i++) {
      const deepest = [...remaining].sort((a, b) => b.mountPoint.split('/').length - a.mountPoint.split('/').length || b.id - a.id)[0];
      if (deepest === undefined) break;
      await unmount(deepest.mountPoint, { logger: this.logger, clock: this.clock, timeoutMs: this.unmountTimeoutMs, retryIntervalMs: this.retryIntervalMs });
      this.logger.v(2, 'unmounted', { podUID, path: deepest.mountPoint, fsType: deepest.fsType });
      remaining = await below();
    }
    if (remaining.length > 0) {
      throw new OrchError(
        VOLUME_CLEANUP_FAILED,
        'internal',
        `cannot remove the directory of pod ${podUID}: still mounted below it: ${remaining.map((m) => m.mountPoint).join(', ')}`,
        { subject: `pod ${podUID}` },
      );
    }
  }

  async listPodDirs(): Promise<string[]> {
    let onDisk: string[];
    try {
      const entries = await readdir(podsDir(this.rootDir), { withFileTypes: true });
      onDisk = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
      onDisk = [];
    }
    // A pod whose directory went but not its files on the node's tmpfs (a crash in between) is listed too.
    return [...new Set([...onDisk, ...this.memory.listPods()])].sort();
  }
}

/** A volume manager rooted at `options.rootDir`. Touches nothing until called. */
export function createVolumeManager(options: VolumeManagerOptions): VolumeManager {
  return new LocalVolumeManager(options);
}
