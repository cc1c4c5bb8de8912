/**
 * Drives the sample device plugin (examples/device-plugin) as a child process for integration
 * tests and benchmarks: writes its settings, starts it, sends it commands (device lists, stop,
 * start), and waits for what it reports on stdout (registered, allocate, prestart, ...).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTempDir } from './tempdir.js';
import { WaitAbandoned, waitFor } from './wait.js';

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
  await writeFile(join(dir, 'settings.json'), JSON.stringify(settings));
  const child: ChildProcess = spawn(process.execPath, [MAIN, join(dir, 'settings.json')], { stdio: ['pipe', 'pipe', 'pipe'] });
  const events: PluginEvent[] = [];
  let output = '';
  let exited = false;
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
    const lines = output.split('\n');
    output = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') events.push(JSON.parse(line) as PluginEvent);
  });
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => { errors += d.toString(); });
  const exit = new Promise<void>((resolve) => { child.on('exit', () => { exited = true; resolve(); }); });
  const send = (command: object): void => { child.stdin?.write(`${JSON.stringify(command)}\n`); };
  const plugin: DevicePluginProcess = {
    dir,
    events,
    waitFor(event, after = 0, timeoutMs = 30_000) {
      return waitFor(`device plugin event ${event}`, () => {
        const found = events.slice(after).find((e) => e.event === event);
        if (found === undefined && exited) throw new WaitAbandoned(`the plugin exited: ${errors}${JSON.stringify(events)}`);
        return found;
      }, { timeoutMs });
    },
    setDevices(devices) { send({ cmd: 'devices', devices }); },
    stopServing() { send({ cmd: 'stop' }); },
    startServing() { send({ cmd: 'start' }); },
    async kill() {
      if (!exited) child.kill('SIGKILL');
      await exit;
      await removeTempDir(dir);
    },
  };
  return plugin;
}
