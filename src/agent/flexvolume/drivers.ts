/**
 * The FlexVolume drivers of the node, as upstream's prober (pkg/volume/flexvolume/probe.go): a
 * driver is the executable `<volumePluginDir>/<vendor>~<driver>/<driver>` (directories whose
 * name begins with '.' are skipped), named `<vendor>/<driver>` in pod specs. Each driver found is
 * run once with `init`; its reply's capabilities decide how its volumes are mounted, and a
 * failed init leaves the driver out (logged, and named in the error of a volume that uses it).
 *
 * The directory is probed at start (made when missing, as upstream) and again whenever it
 * changes: fs.watch on it and on each driver directory schedules a probe; when a watch cannot be
 * set up, a periodic probe takes its place. A volume naming a driver not known yet also probes
 * once before failing (upstream probes on each plugin lookup), so a driver installed after the
 * agent started is found even where no watch event arrives, and a known driver's executable is
 * checked (one stat) at each use. A changed executable (inode, size or mtime) is initialised
 * again; a removed one is forgotten.
 */
import { watch, type Dirent, type FSWatcher } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { Clock, Timer } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { callDriver, type DriverCapabilities, type DriverHandle, type FlexExec } from './driver-call.js';

export interface FlexDriver extends DriverHandle {
  /** `<vendor>~<driver>`: the directory name, also the pod volume directory's. */
  readonly dirName: string;
  readonly capabilities: DriverCapabilities;
}

export interface FlexDrivers {
  /** volumePluginDir. */
  readonly pluginDir: string;
  /** Makes the directory when missing, probes it, and starts watching. Throws when the directory cannot be made or read. */
  start(): Promise<void>;
  /** Stops the watches and timers. Idempotent. */
  stop(): void;
  /**
   * The driver of a volume's `driver` field (`vendor/driver`; `vendor~driver` is accepted too),
   * probing the directory once more when it is not known. Resolves undefined when there is none.
   */
  find(driver: string): Promise<FlexDriver | undefined>;
  /** Why the driver of `driver` is not usable (its init failed), if it is known to be so. */
  problem(driver: string): string | undefined;
  /** The drivers known now (sorted by name). */
  list(): readonly FlexDriver[];
}

export interface FlexDriversOptions {
  /** volumePluginDir. */
  readonly pluginDir: string;
  readonly exec: FlexExec;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Time limit of each driver call (init here). */
  readonly callTimeoutMs: number;
  /** Pause between a change seen and the probe it causes (default 100 ms: an install is several events). */
  readonly debounceMs?: number;
  /** Probe period when the directory cannot be watched (default 10 s). */
  readonly pollIntervalMs?: number;
}

/** `vendor/driver` or `vendor~driver` → `vendor~driver` (upstream's EscapeQualifiedName). */
export function driverDirName(driver: string): string {
  return driver.replaceAll('/', '~');
}

/** `vendor~driver` → `driver`, the executable's name. */
export function executableName(dirName: string): string {
  const parts = dirName.split('~');
  return parts[parts.length - 1] ?? dirName;
}

/** Inode, size and mtime of the executable ('' when it is gone; throws instead when `strict`). */
async function identityOf(path: string, strict = false): Promise<string> {
  try {
    const info = await stat(path);
    return `${String(info.ino)}/${String(info.size)}/${String(info.mtimeMs)}`;
  } catch (err) {
    if (strict) throw err;
    return '';
  }
}

interface Known {
  readonly driver: FlexDriver | undefined;
  readonly identity: string;
  readonly problem: string | undefined;
}

class Prober implements FlexDrivers {
  private readonly o: FlexDriversOptions;
  private readonly known = new Map<string, Known>();
  private readonly watchers = new Map<string, FSWatcher>();
  private pending: Timer | undefined;
  private poll: Timer | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  readonly pluginDir: string;

  constructor(options: FlexDriversOptions) {
    this.o = options;
    this.pluginDir = options.pluginDir;
  }

  async start(): Promise<void> {
    await mkdir(this.o.pluginDir, { recursive: true, mode: 0o755 });
    this.watchDir(this.o.pluginDir);
    await this.probe();
  }

  stop(): void {
    this.stopped = true;
    this.pending?.cancel();
    this.poll?.cancel();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  async find(driver: string): Promise<FlexDriver | undefined> {
    const dir = driverDirName(driver);
    const known = this.known.get(dir);
    // One stat: an executable removed or replaced since the last probe is probed again, watch event or not.
    if (known?.driver !== undefined && (await identityOf(known.driver.execPath)) === known.identity) return known.driver;
    await this.probe();
    return this.known.get(dir)?.driver;
  }

  problem(driver: string): string | undefined {
    return this.known.get(driverDirName(driver))?.problem;
  }

  list(): readonly FlexDriver[] {
    return [...this.known.values()].flatMap((k) => (k.driver === undefined ? [] : [k.driver])).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** One probe at a time; a probe asked for while one runs makes it go round once more (its callers wait for that round). */
  private async probe(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      await this.running;
      return;
    }
    this.running = this.probeRounds();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
  }

  private async probeRounds(): Promise<void> {
    do {
      this.again = false;
      await this.probeAll();
    } while (this.wantsAgain());
  }

  private wantsAgain(): boolean {
    return this.again && !this.stopped;
  }

  private schedule(): void {
    if (this.stopped || this.pending !== undefined) return;
    this.pending = this.o.clock.setTimer(this.o.debounceMs ?? 100, () => {
      this.pending = undefined;
      this.probe().catch((err: unknown) => { this.o.logger.error('FlexVolume probe failed', { dir: this.o.pluginDir, err: messageOf(err) }); });
    });
  }

  private startPolling(): void {
    if (this.stopped || this.poll !== undefined) return;
    const tick = (): void => {
      this.poll = this.o.clock.setTimer(this.o.pollIntervalMs ?? 10_000, () => {
        this.probe().catch((err: unknown) => { this.o.logger.error('FlexVolume probe failed', { dir: this.o.pluginDir, err: messageOf(err) }); }).finally(() => {
          if (!this.stopped) tick();
        });
      });
    };
    tick();
  }

  private watchDir(dir: string): void {
    if (this.stopped || this.watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, () => { this.schedule(); });
      w.on('error', (err) => {
        this.o.logger.warn('FlexVolume directory watch failed; probing periodically', { dir, err: messageOf(err) });
        w.close();
        this.watchers.delete(dir);
        this.startPolling();
      });
      this.watchers.set(dir, w);
    } catch (err) {
      this.o.logger.warn('cannot watch a FlexVolume directory; probing periodically', { dir, err: messageOf(err) });
      this.startPolling();
    }
  }

  private async probeAll(): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.o.pluginDir, { withFileTypes: true });
    } catch (err) {
      // A directory removed under the agent: no drivers (upstream makes it again; start() does here).
      if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
      entries = [];
    }
    const seen = new Set<string>();
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      seen.add(entry.name);
      const dirPath = join(this.o.pluginDir, entry.name);
      this.watchDir(dirPath);
      await this.probeOne(entry.name, join(dirPath, executableName(entry.name)));
    }
    for (const [dir, known] of this.known) {
      if (seen.has(dir)) continue;
      this.known.delete(dir);
      this.watchers.get(join(this.o.pluginDir, dir))?.close();
      this.watchers.delete(join(this.o.pluginDir, dir));
      if (known.driver !== undefined) this.o.logger.info('FlexVolume driver removed', { driver: known.driver.name });
    }
  }

  private async probeOne(dirName: string, execPath: string): Promise<void> {
    const name = dirName.replaceAll('~', '/');
    let identity: string;
    try {
      identity = await identityOf(execPath, true);
    } catch (err) {
      const problem = `no executable ${execPath}: ${messageOf(err)}`;
      if (this.known.get(dirName)?.problem !== problem) this.o.logger.warn('FlexVolume driver directory without its executable', { driver: name, path: execPath });
      this.known.set(dirName, { driver: undefined, identity: '', problem });
      return;
    }
    if (this.known.get(dirName)?.identity === identity) return;
    const handle: DriverHandle = { name, execPath, unsupported: new Set() };
    try {
      const reply = await callDriver(handle, 'init', [], { exec: this.o.exec, timeoutMs: this.o.callTimeoutMs, context: '' });
      if (reply === 'not-supported') throw new Error('init answered "Not supported"');
      const driver: FlexDriver = { ...handle, dirName, capabilities: reply.capabilities };
      this.known.set(dirName, { driver, identity, problem: undefined });
      this.o.logger.info('FlexVolume driver initialised', { driver: name, path: execPath, ...reply.capabilities });
    } catch (err) {
      const problem = messageOf(err);
      this.known.set(dirName, { driver: undefined, identity, problem });
      this.o.logger.error('FlexVolume driver init failed; the driver is skipped', { driver: name, path: execPath, err: problem });
    }
  }
}

/** The node's drivers under `options.pluginDir`. Does nothing until start(). */
export function createFlexDrivers(options: FlexDriversOptions): FlexDrivers {
  return new Prober(options);
}
