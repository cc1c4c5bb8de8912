/**
 * Drives the sample hostpath CSI driver (examples/csi-hostpath) as a child process for
 * integration tests and benchmarks: writes its settings, starts it, makes methods fail, and
 * reads the calls it reports on stdout.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
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
  /** Offer EXPAND_VOLUME (NodeExpandVolume writes `<dataDir>/<handle>.size`). */
  readonly expand?: boolean;
  /** Method → secret key → value the driver requires (INVALID_ARGUMENT without). */
  readonly requireSecrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Methods answering only after this many ms (a slow or hanging driver). */
  readonly delays?: Readonly<Record<string, number>>;
  /**
   * The driver's own directory (data, socket, settings), kept by kill() so that a driver
   * started again on it finds its volumes; a temporary one, removed by kill(), when absent.
   */
  readonly dir?: string;
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
  /** The answers to calls of `method` so far (a delayed call answers late). */
  replies(method: string): DriverEvent[];
  waitFor(event: string, after?: number, timeoutMs?: number): Promise<DriverEvent>;
  setFailing(methods: readonly string[]): void;
  /** Makes these methods answer only after `ms` (0 heals). */
  setDelay(methods: readonly string[], ms: number): void;
  kill(): Promise<void>;
}

export async function startCsiDriver(s: CsiDriverSettings): Promise<CsiDriverProcess> {
  const own = s.dir === undefined;
  const dir = s.dir ?? (await mkdtemp(join(tmpdir(), 'csi-driver-')));
  await mkdir(dir, { recursive: true });
  const dataDir = join(dir, 'data');
  const { dir: _dir, ...rest } = s;
  const settings = {
    ...rest, dataDir, socket: join(dir, 'csi.sock'), pluginsRegistryDir: join(s.rootDir, 'plugins_registry'),
  };
  const proc = await startSampleProcess<DriverEvent>('CSI driver', MAIN, dir, settings);
  const events = proc.events;
  return {
    dataDir,
    events,
    calls: (method) => events.filter((e) => e.event === 'call' && e.method === method),
    replies: (method) => events.filter((e) => e.event === 'reply' && e.method === method),
    waitFor: (event, after, timeoutMs) => proc.waitFor(event, after, timeoutMs),
    setFailing(methods) { proc.send({ cmd: 'fail', methods }); },
    setDelay(methods, ms) { proc.send({ cmd: 'delay', methods, ms }); },
    async kill() {
      if (!proc.exited()) proc.send({ cmd: 'exit' });
      const timer = setTimeout(() => { proc.child.kill('SIGKILL'); }, 5_000);
      await proc.exit;
      clearTimeout(timer);
      if (own) await removeTempDir(dir);
    },
  };
}
