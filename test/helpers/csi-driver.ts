/**
 * Drives the sample hostpath CSI driver (examples/csi-hostpath) as a child process for
 * integration tests and benchmarks: writes its settings, starts it, makes methods fail, and
 * reads the calls it reports on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTempDir } from './tempdir.js';
import { WaitAbandoned, waitFor } from './wait.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '../../examples/csi-hostpath/main.js');

export interface CsiDriverSettings {
  readonly name: string;
  readonly nodeId: string;
  /** The agent's root dir: the registration socket goes in `<rootDir>/plugins_registry`. */
  readonly rootDir: string;
  readonly stage?: boolean;
  readonly topology?: Readonly<Record<string, string>>;
  readonly maxVolumesPerNode?: number;
  readonly failing?: readonly string[];
}

export interface DriverEvent {
  readonly event: string;
  readonly method?: string;
  readonly request?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

export interface CsiDriverProcess {
  /** Where the volumes' data is: `<dataDir>/<handle>`. */
  readonly dataDir: string;
  readonly events: readonly DriverEvent[];
  /** The calls of `method` so far. */
  calls(method: string): DriverEvent[];
  waitFor(event: string, after?: number, timeoutMs?: number): Promise<DriverEvent>;
  setFailing(methods: readonly string[]): void;
  kill(): Promise<void>;
}

export async function startCsiDriver(s: CsiDriverSettings): Promise<CsiDriverProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'csi-driver-'));
  const dataDir = join(dir, 'data');
  const settings = {
    ...s, dataDir, socket: join(dir, 'csi.sock'), pluginsRegistryDir: join(s.rootDir, 'plugins_registry'),
  };
  await writeFile(join(dir, 'settings.json'), JSON.stringify(settings));
  const child: ChildProcess = spawn(process.execPath, [MAIN, join(dir, 'settings.json')], { stdio: ['pipe', 'pipe', 'pipe'] });
  const events: DriverEvent[] = [];
  let output = '';
  let exited = false;
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
    const lines = output.split('\n');
    output = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') events.push(JSON.parse(line) as DriverEvent);
  });
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => { errors += d.toString(); });
  const exit = new Promise<void>((resolve) => { child.on('exit', () => { exited = true; resolve(); }); });
  const send = (command: object): void => { child.stdin?.write(`${JSON.stringify(command)}\n`); };
  return {
    dataDir,
    events,
    calls: (method) => events.filter((e) => e.event === 'call' && e.method === method),
    waitFor(event, after = 0, timeoutMs = 30_000) {
      return waitFor(`CSI driver event ${event}`, () => {
        const found = events.slice(after).find((e) => e.event === event);
        if (found === undefined && exited) throw new WaitAbandoned(`the driver exited: ${errors}${JSON.stringify(events)}`);
        return found;
      }, { timeoutMs });
    },
    setFailing(methods) { send({ cmd: 'fail', methods }); },
    async kill() {
      if (!exited) send({ cmd: 'exit' });
      const timer = setTimeout(() => { child.kill('SIGKILL'); }, 5_000);
      await exit;
      clearTimeout(timer);
      await removeTempDir(dir);
    },
  };
}
