/**
 * Mounting a FlexVolume for a pod, as upstream's flexVolumeMounter, flexVolumeAttacher and their
 * defaults (pkg/volume/flexvolume), with the option keys renamed (`orch.io/...`):
 *
 * 1. drivers whose init says `attach: true`, when the agent attaches (enableControllerAttachDetach
 *    false; what upstream's kubelet does then): `attach <json> <node>` → device,
 *    `waitforattach <device> <json>` → device, and, when the device mount path
 *    `<root-dir>/plugins/orch.io/flexvolume/<vendor>/<driver>/mounts/<name>` is not mounted yet,
 *    `mountdevice <path> <device> <json>` (not supported: mount(8) of the device there, as
 *    upstream's default; nothing when there is no device). With enableControllerAttachDetach
 *    true, upstream's kubelet waits for the attach/detach controller, and orch-apiserver's
 *    controller attaches CSI volumes only: the volume fails with FLEXVOLUME_ATTACH_BY_CONTROLLER
 *    naming the setting;
 * 2. `mount <dir> <json>` on `<root-dir>/pods/<uid>/volumes/<vendor>~<driver>/<name>` with the pod's
 *    name, namespace, UID, service account, the secret's keys (base64) and fsGroup (not
 *    supported: a bind mount of the device mount path, upstream's default); then, for a volume
 *    that is not read-only of a driver whose init says `fsGroup` (the default), the pod's fsGroup
 *    applied to the mounted directory (the volume manager's setVolumeOwnership; failures logged,
 *    as upstream). A dir that is a mount point already is not mounted again.
 *
 * A failed mount leaves no directory: whatever the driver mounted there is unmounted, and the
 * directory removed. Teardown (per pod directory, so it also works after a restart): `unmount
 * <dir>` (not supported: umount(8), retried while busy, as the volume manager's), the directory removed; for drivers the agent attached, once
 * no pod directory on the node holds the volume, `unmountdevice <path>` and `detach <name> <node>`.
 * The JSON options of attach, waitforattach and mountdevice hold no pod information, as upstream.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, realpath, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import {
  DEFAULT_UNMOUNT_RETRY_MS, DEFAULT_UNMOUNT_TIMEOUT_MS, MOUNTINFO_PATH, readMountInfoBelow, setVolumeOwnership, unmount, type FlexVolumePlugin, type FlexVolumeRequest, type VolumeObjectSource,
} from '../volumes/index.js';
import { callDriver, type DriverReply, type FlexExec } from './driver-call.js';
import type { FlexDriver, FlexDrivers } from './drivers.js';
import { FLEXVOLUME_ATTACH_BY_CONTROLLER, FLEXVOLUME_CALL_FAILED, FLEXVOLUME_DRIVER_NOT_FOUND, FLEXVOLUME_SECRET_UNAVAILABLE } from './errors.js';
import { driverOptions, mountOptions, OPTION_SECRET_PREFIX } from './options.js';

const execFileAsync = promisify(execFile);

/** The mount(8) calls of upstream's defaults, for calls a driver does not support. */
export interface MountOps {
  bind(source: string, target: string): Promise<void>;
  mountDevice(device: string, target: string, fsType: string, readOnly: boolean): Promise<void>;
  unmount(target: string): Promise<void>;
}

/** mount(8) for binds and devices; the volume manager's unmount (a busy target retried, then detached lazily). */
export function systemMountOps(o: { readonly clock: Clock; readonly logger: Logger }): MountOps {
  const unmountOptions = { clock: o.clock, logger: o.logger, timeoutMs: DEFAULT_UNMOUNT_TIMEOUT_MS, retryIntervalMs: DEFAULT_UNMOUNT_RETRY_MS };
  return {
    async bind(source, target) { await execFileAsync('mount', ['--bind', source, target]); },
    async mountDevice(device, target, fsType, readOnly) {
      await execFileAsync('mount', [...(fsType === '' ? [] : ['-t', fsType]), '-o', readOnly ? 'ro' : 'rw', device, target]);
    },
    unmount: (target) => unmount(target, unmountOptions),
  };
}

export interface FlexMounterOptions {
  readonly rootDir: string;
  readonly nodeName: string;
  readonly drivers: FlexDrivers;
  readonly exec: FlexExec;
  /** Time limit of each driver call. */
  readonly callTimeoutMs: number;
  /** enableControllerAttachDetach: true leaves attaching to a controller (see above). */
  readonly controllerAttachDetach: boolean;
  /** Where secretRef secrets are read (the API server); without it a volume with a secretRef fails. */
  readonly secrets?: Pick<VolumeObjectSource, 'secret'>;
  readonly logger: Logger;
  /** The unmount's deadline and pauses (with the default mountOps). */
  readonly clock: Clock;
  readonly mountInfoPath?: string;
  readonly mountOps?: MountOps;
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

class FlexMounter implements FlexVolumePlugin {
  private readonly o: FlexMounterOptions;
  private readonly ops: MountOps;
  /** `<uid>/<dirName>/<specName>` of the volumes set up since the start: not mounted twice. */
  private readonly mounted = new Set<string>();

  constructor(options: FlexMounterOptions) {
    this.o = options;
    this.ops = options.mountOps ?? systemMountOps(options);
  }

  async setUp(pod: NodePod, podUID: string, request: FlexVolumeRequest): Promise<string> {
    const context = `volume "${request.volumeName}": `;
    const driver = await this.o.drivers.find(request.driver);
    if (driver === undefined) {
      const problem = this.o.drivers.problem(request.driver);
      throw new OrchError(
        FLEXVOLUME_DRIVER_NOT_FOUND,
        'unavailable',
        `${context}FlexVolume driver ${request.driver} is not installed on this node${problem === undefined ? ` (no executable under ${this.o.drivers.pluginDir})` : `: ${problem}`}`,
        { subject: request.subject },
      );
    }
    const dir = join(this.o.rootDir, 'pods', podUID, 'volumes', driver.dirName, request.specName);
    const key = `${podUID}/${driver.dirName}/${request.specName}`;
    if (this.mounted.has(key)) return dir;
    if (await this.isMountPoint(dir)) {
      this.mounted.add(key);
      return dir;
    }
    const call = { exec: this.o.exec, timeoutMs: this.o.callTimeoutMs, context, subject: request.subject };
    // Secrets and pod information first: a missing secret touches nothing.
    const extra = { ...mountOptions(pod, podUID), ...(await this.secretOptions(driver, pod, request, context)) };
    let deviceMountPath: string | undefined;
    if (driver.capabilities.attach) deviceMountPath = await this.attach(driver, request, call);
    await mkdir(dir, { recursive: true, mode: 0o750 });
    try {
      const reply = await callDriver(driver, 'mount', [dir, JSON.stringify(driverOptions(request, extra))], call);
      if (reply !== 'not-supported') {
        // Upstream's flexVolumeMounter.SetUpAt: the pod's fsGroup when the driver's init says fsGroup (default true), errors only logged.
        if (!request.readOnly && driver.capabilities.fsGroup) await this.applyFsGroup(pod, dir, request);
      } else {
        const source = deviceMountPath ?? this.deviceMountPath(driver, request.specName);
        this.o.logger.warn('FlexVolume driver does not support mount; bind-mounting its device mount path', { driver: driver.name, source, target: dir });
        await this.ops.bind(source, dir).catch((err: unknown) => {
          throw new OrchError(FLEXVOLUME_CALL_FAILED, 'unavailable', `${context}FlexVolume driver ${driver.name}: mount not supported, and bind-mounting ${source} failed: ${messageOf(err)}`, { subject: request.subject, cause: err });
        });
      }
    } catch (err) {
      await this.removeHalfMounted(dir);
      throw err;
    }
    this.mounted.add(key);
    this.o.logger.info('FlexVolume mounted', { driver: driver.name, podUID, volume: request.volumeName, path: dir });
    return dir;
  }

  async tearDown(podUID: string): Promise<void> {
    const volumesDir = join(this.o.rootDir, 'pods', podUID, 'volumes');
    let pluginDirs: string[];
    try {
      pluginDirs = await readdir(volumesDir);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return;
      throw err;
    }
    const drivers = new Map(this.o.drivers.list().map((d) => [d.dirName, d]));
    for (const pluginDir of pluginDirs) {
      const driver = drivers.get(pluginDir);
      // Other plugins' directories, and those of drivers gone from the node: the volume manager unmounts what is left.
      if (driver === undefined) continue;
      for (const specName of await readdir(join(volumesDir, pluginDir))) {
        await this.tearDownOne(driver, podUID, specName);
      }
    }
  }

  private async tearDownOne(driver: FlexDriver, podUID: string, specName: string): Promise<void> {
    const dir = join(this.o.rootDir, 'pods', podUID, 'volumes', driver.dirName, specName);
    const call = { exec: this.o.exec, timeoutMs: this.o.callTimeoutMs, context: `volume "${specName}" of pod ${podUID}: `, subject: dir };
    const reply = await callDriver(driver, 'unmount', [dir], call);
    if (reply === 'not-supported' && (await this.isMountPoint(dir))) await this.ops.unmount(dir);
    await rmdir(dir).catch((err: unknown) => {
      // The driver may remove the directory itself (upstream allows it).
      if (errnoOf(err) !== 'ENOENT') throw err;
    });
    this.mounted.delete(`${podUID}/${driver.dirName}/${specName}`);
    this.o.logger.info('FlexVolume unmounted', { driver: driver.name, podUID, volume: specName });
    if (!driver.capabilities.attach || this.o.controllerAttachDetach) return;
    if (await this.usedByOtherPods(driver, podUID, specName)) return;
    const deviceMountPath = this.deviceMountPath(driver, specName);
    if (await this.isMountPoint(deviceMountPath)) {
      const r = await callDriver(driver, 'unmountdevice', [deviceMountPath], call);
      if (r === 'not-supported') await this.ops.unmount(deviceMountPath);
    }
    await rmdir(deviceMountPath).catch((err: unknown) => {
      if (errnoOf(err) !== 'ENOENT') throw err;
    });
    await callDriver(driver, 'detach', [specName, this.o.nodeName], call);
    this.o.logger.info('FlexVolume detached', { driver: driver.name, volume: specName, node: this.o.nodeName });
  }

  /** attach, waitforattach and mountdevice; returns the device mount path. */
  private async attach(driver: FlexDriver, request: FlexVolumeRequest, call: Parameters<typeof callDriver>[3]): Promise<string> {
    if (this.o.controllerAttachDetach) {
      throw new OrchError(
        FLEXVOLUME_ATTACH_BY_CONTROLLER,
        'unavailable',
        `${call.context}FlexVolume driver ${driver.name} attaches volumes, and enableControllerAttachDetach is true: no controller of this system attaches FlexVolumes (orch-apiserver's attaches CSI volumes only); set enableControllerAttachDetach: false so that the node agent attaches, or have the driver's init answer "attach": false`,
        { subject: request.subject },
      );
    }
    const json = JSON.stringify(driverOptions(request, {}));
    const deviceOf = (reply: DriverReply | 'not-supported', fallback: string): string => (reply === 'not-supported' ? fallback : reply.device);
    let device = deviceOf(await callDriver(driver, 'attach', [json, this.o.nodeName], call), '');
    device = deviceOf(await callDriver(driver, 'waitforattach', [device, json], call), device);
    const deviceMountPath = this.deviceMountPath(driver, request.specName);
    if (await this.isMountPoint(deviceMountPath)) return deviceMountPath;
    await mkdir(deviceMountPath, { recursive: true, mode: 0o750 });
    const reply = await callDriver(driver, 'mountdevice', [deviceMountPath, device, json], call);
    if (reply === 'not-supported' && device !== '') {
      await this.ops.mountDevice(device, deviceMountPath, request.fsType, request.readOnly).catch((err: unknown) => {
        throw new OrchError(FLEXVOLUME_CALL_FAILED, 'unavailable', `${call.context}FlexVolume driver ${driver.name}: mountdevice not supported, and mounting ${device} on ${deviceMountPath} failed: ${messageOf(err)}`, { subject: request.subject, cause: err });
      });
    }
    return deviceMountPath;
  }

  private async applyFsGroup(pod: NodePod, dir: string, request: FlexVolumeRequest): Promise<void> {
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    if (fsGroup === undefined) return;
    const changePolicy = pod.spec?.securityContext?.fsGroupChangePolicy;
    const onError = (path: string, err: string): void => { this.o.logger.warn('cannot apply the fsGroup to a file of a FlexVolume', { volume: request.volumeName, path, err }); };
    try {
      await setVolumeOwnership(dir, { fsGroup, readOnly: false, onError, ...(changePolicy === undefined ? {} : { changePolicy }) });
    } catch (err) {
      onError(dir, messageOf(err));
    }
  }

  private deviceMountPath(driver: FlexDriver, specName: string): string {
    return join(this.o.rootDir, 'plugins', 'orch.io', 'flexvolume', ...driver.name.split('/'), 'mounts', specName);
  }

  /** Upstream's addSecretsToOptions: the secret must have the driver's name as its type; its values base64. */
  private async secretOptions(driver: FlexDriver, pod: NodePod, request: FlexVolumeRequest, context: string): Promise<Record<string, string>> {
    const ref = request.secretRef;
    if (ref === undefined || ref.name === '') return {};
    const namespace = ref.namespace === undefined || ref.namespace === '' ? pod.metadata.namespace : ref.namespace;
    const subject = `${request.subject}.secretRef`;
    const fail = (why: string, cause?: unknown): OrchError =>
      new OrchError(FLEXVOLUME_SECRET_UNAVAILABLE, 'unavailable', `${context}FlexVolume driver ${driver.name}: secret ${namespace}/${ref.name} ${why}`, { subject, ...(cause === undefined ? {} : { cause }) });
    if (this.o.secrets === undefined) throw fail('cannot be read: the agent runs without an API server (--orchconfig)');
    let secret;
    try {
      secret = await this.o.secrets.secret(namespace, ref.name);
    } catch (err) {
      throw fail(`cannot be read: ${messageOf(err)}`, err);
    }
    if (secret === undefined) throw fail('not found');
    if (secret.type !== driver.name) throw fail(`has type ${JSON.stringify(secret.type ?? 'Opaque')}; a FlexVolume secret must have the driver's name (${driver.name}) as its type`);
    const options: Record<string, string> = {};
    for (const [key, value] of Object.entries(secret.data ?? {})) options[`${OPTION_SECRET_PREFIX}${key}`] = Buffer.from(value, 'base64').toString('base64');
    return options;
  }

  private async usedByOtherPods(driver: FlexDriver, podUID: string, specName: string): Promise<boolean> {
    const pods = await readdir(join(this.o.rootDir, 'pods')).catch(() => [] as string[]);
    for (const uid of pods) {
      if (uid === podUID) continue;
      const entries = await readdir(join(this.o.rootDir, 'pods', uid, 'volumes', driver.dirName)).catch(() => [] as string[]);
      if (entries.includes(specName)) return true;
    }
    return false;
  }

  private async isMountPoint(dir: string): Promise<boolean> {
    let real: string;
    try {
      real = await realpath(dir);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return false;
      throw err;
    }
    return (await readMountInfoBelow(real, this.o.mountInfoPath ?? MOUNTINFO_PATH)).some((m) => m.mountPoint === real);
  }

  /** After a failed mount: unmounts what the driver left mounted at or below `dir`, then removes it. */
  private async removeHalfMounted(dir: string): Promise<void> {
    try {
      let real: string;
      try {
        real = await realpath(dir);
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') return;
        throw err;
      }
      const below = async (): Promise<string[]> =>
        (await readMountInfoBelow(real, this.o.mountInfoPath ?? MOUNTINFO_PATH)).map((m) => m.mountPoint);
      for (const path of (await below()).sort((a, b) => b.length - a.length)) await this.ops.unmount(path);
      // Never a recursive removal while anything is mounted below: it would delete the volume's data.
      const left = await below();
      if (left.length > 0) throw new Error(`still mounted: ${left.join(', ')}`);
      await rm(dir, { recursive: true, force: true });
    } catch (err) {
      // The pod's cleanup unmounts and removes what is left; the mount error is the one the pod sees.
      this.o.logger.error('cannot clean up after a failed FlexVolume mount', { path: dir, err: messageOf(err) });
    }
  }
}

/** The volume manager's FlexVolumePlugin over `options.drivers`. Touches nothing until called. */
export function createFlexMounter(options: FlexMounterOptions): FlexVolumePlugin {
  return new FlexMounter(options);
}
