/**
 * Drives the sample hostpath CSI driver (examples/csi-hostpath) as a child process for
 * integration tests and benchmarks: writes its settings, starts it, makes methods fail, and
 * reads the calls it reports on stdout.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTempDir } from './tempdir.js';
import { startSampleProcess } from './sample-process.js';

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
  const proc = await startSampleProcess<DriverEvent>('CSI driver', MAIN, dir, settings);
  const events = proc.events;
  return {
    dataDir,
    events,
    calls: (method) => events.filter((e) => e.event === 'call' && e.method === method),
    waitFor: (event, after, timeoutMs) => proc.waitFor(event, after, timeoutMs),
    setFailing(methods) { proc.send({ cmd: 'fail', methods }); },
    async kill() {
      if (!proc.exited()) proc.send({ cmd: 'exit' });
      const timer = setTimeout(() => { proc.child.kill('SIGKILL'); }, 5_000);
      await proc.exit;
      clearTimeout(timer);
      await removeTempDir(dir);
    },
  };
}
