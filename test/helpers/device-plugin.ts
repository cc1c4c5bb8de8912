/**
 * Drives the sample device plugin (examples/device-plugin) as a child process for integration
 * tests and benchmarks: writes its settings, starts it, sends it commands (device lists, stop,
 * start), and waits for what it reports on stdout (registered, allocate, prestart, ...).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTempDir } from './tempdir.js';
import { startSampleProcess } from './sample-process.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '../../examples/device-plugin/main.js');

export interface PluginDevice {
  readonly id: string;
  readonly healthy?: boolean;
  readonly numa?: readonly number[];
}

export interface DevicePluginSettings {
  readonly resource: string;
  /** The agent's root dir: the plugin uses `<rootDir>/device-plugins` (and `plugins_registry` with `viaWatcher`). */
  readonly rootDir: string;
  readonly devices: readonly PluginDevice[];
  readonly socketName?: string;
  readonly preStartRequired?: boolean;
  readonly getPreferredAllocationAvailable?: boolean;
  readonly cdiKind?: string;
  readonly viaWatcher?: boolean;
}

export interface PluginEvent {
  readonly event: string;
  readonly [key: string]: unknown;
}

export interface DevicePluginProcess {
  /** Where the device nodes and the shared mount are. */
  readonly dir: string;
  readonly events: readonly PluginEvent[];
  /** Waits for an event after the `after`-th one (default: any), returns it. */
  waitFor(event: string, after?: number, timeoutMs?: number): Promise<PluginEvent>;
  setDevices(devices: readonly PluginDevice[]): void;
  /** Stops serving (the process stays, ready to start again). */
  stopServing(): void;
  startServing(): void;
  /** Ends the process and removes its files. */
  kill(): Promise<void>;
}

export async function startDevicePlugin(s: DevicePluginSettings): Promise<DevicePluginProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'device-plugin-'));
  const settings = {
    resource: s.resource, devicePluginsDir: join(s.rootDir, 'device-plugins'), socketName: s.socketName ?? `${s.resource.replace(/\W/g, '-')}.sock`,
    nodeDir: join(dir, 'nodes'), mountDir: join(dir, 'share'), devices: s.devices,
    preStartRequired: s.preStartRequired === true, getPreferredAllocationAvailable: s.getPreferredAllocationAvailable === true,
    ...(s.cdiKind === undefined ? {} : { cdiKind: s.cdiKind }),
    ...(s.viaWatcher === true ? { pluginsRegistryDir: join(s.rootDir, 'plugins_registry') } : {}),
  };
  const proc = await startSampleProcess<PluginEvent>('device plugin', MAIN, dir, settings);
  const plugin: DevicePluginProcess = {
    dir,
    events: proc.events,
    waitFor: (event, after, timeoutMs) => proc.waitFor(event, after, timeoutMs),
    setDevices(devices) { proc.send({ cmd: 'devices', devices }); },
    stopServing() { proc.send({ cmd: 'stop' }); },
    startServing() { proc.send({ cmd: 'start' }); },
    async kill() {
      if (!proc.exited()) proc.child.kill('SIGKILL');
      await proc.exit;
      await removeTempDir(dir);
    },
  };
  return plugin;
}
