/**
 * Real runtime processes for integration tests and benchmarks: a private containerd (CRI
 * plugin, runc, CNI bridge) and a local docker-registry, each on a temporary directory, started
 * with scripts/node-env/*.sh. Missing binaries make these functions throw (tests fail, never
 * skip). Instances left running when the process exits are stopped synchronously.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { constants as fsConstants, existsSync } from 'node:fs';
import { access, link, mkdir, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { realClock } from '../../src/api/clock.js';
import { Disposers } from '../../src/api/disposers.js';
import { freePort } from './loopback.js';
import { scriptFailure } from './script-failure.js';
import { waitFor } from './wait.js';

export { freePort } from './loopback.js';

const execFileAsync = promisify(execFile);

/** Where build-images.sh caches the busybox and pause images (shared by every instance). */
export const IMAGE_CACHE_DIR = process.env.NODEAGENT_IMAGE_DIR ?? '/var/tmp/nodeagent-images';
const SUBNET_LOCK_DIR = path.join(os.tmpdir(), 'nodeagent-subnets');
const INSTALL_HINT = 'install the packages with: bash scripts/install-packages.sh';

export interface LocalImages {
  /** e.g. docker.io/library/busybox:1.35 */
  readonly busybox: string;
  /** docker.io/library/pause:3.9 (the sandbox image) */
  readonly pause: string;
}

export interface ContainerdInstance {
  /** `unix:///…/containerd.sock`, for --container-runtime-endpoint. */
  readonly endpoint: string;
  readonly socketPath: string;
  readonly dir: string;
  /** Pod subnet of the instance's CNI bridge, e.g. 10.88.17.0/24. */
  readonly subnet: string;
  readonly bridge: string;
  /** Put pods' cgroup_parent under this (e.g. `${cgroupRoot}/pod${uid}`); stop() removes it. */
  readonly cgroupRoot: string;
  /** Where pods of tests may keep their logs (inside dir). */
  readonly logDir: string;
  /** References of the images imported at start. */
  readonly images: LocalImages;
  /** Image IDs (config digests) of the same images. */
  readonly imageIds: LocalImages;
  /** Stops containerd and every pod, removes the bridge, rules, cgroups and dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartContainerdOptions {
  /** Docker-Hub short names (busybox:1.35) are pulled from 127.0.0.1:registryPort. */
  readonly registryPort?: number;
  /** Pod subnet; default: a free 10.88.X.0/24 reserved for this process. */
  readonly subnet?: string;
  /**
   * containerd's root (images, snapshots) on a tmpfs of this many MiB of its own, so that a
   * test can fill it (image garbage collection); stop() unmounts it. Default: on the temp dir's
   * file system.
   */
  readonly rootTmpfsMiB?: number;
}

export interface RegistryInstance {
  /** `127.0.0.1:PORT` */
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** The same images as pushed there, e.g. 127.0.0.1:PORT/library/busybox:1.35. */
  readonly images: LocalImages;
  stop(): Promise<void>;
}

const CONTAINERD_BINARIES = [
  'containerd',
  'containerd-shim-runc-v2',
  'runc',
  'ctr',
  'ip',
  'iptables',
  '/usr/lib/cni/bridge',
  '/usr/lib/cni/host-local',
  '/usr/lib/cni/portmap',
  '/usr/lib/cni/loopback',
  '/bin/busybox',
  'tar',
  'gzip',
  'flock',
  'setsid',
];
const REGISTRY_BINARIES = ['docker-registry', 'skopeo', 'curl', '/bin/busybox', 'tar', 'gzip', 'flock', 'setsid', 'htpasswd'];

/** Throws, naming the first missing binary and the install script, unless all are executable. */
export async function requireBinaries(what: string, binaries: readonly string[]): Promise<void> {
  const dirs = (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin', '/sbin']);
  for (const bin of binaries) {
    const candidates = bin.includes('/') ? [bin] : dirs.map((d) => path.join(d, bin));
    const found = (await Promise.all(candidates.map(isExecutable))).includes(true);
    if (!found) throw new Error(`${what}: required binary "${bin}" not found; ${INSTALL_HINT}`);
  }
}

function isExecutable(file: string): Promise<boolean> {
  return access(file, fsConstants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Removes a file; a file already gone is fine, any other failure is logged. */
async function removeFile(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if (typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT') return;
    process.stderr.write(`could not remove ${file}: ${String(err)}\n`);
  }
}

function findRepoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'scripts', 'node-env', 'containerd-up.sh'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find scripts/node-env/ above test/helpers');
    dir = parent;
  }
}

function script(name: string): string {
  return path.join(findRepoRoot(), 'scripts', 'node-env', name);
}

/** How long a script may run: building the images the first time takes minutes on a slow machine. */
const SCRIPT_TIMEOUT_MS: Readonly<Record<string, number>> = { 'build-images.sh': 15 * 60_000 };
const DEFAULT_SCRIPT_TIMEOUT_MS = 120_000;
async function runScript(name: string, args: readonly string[]): Promise<string> {
  const timeoutMs = SCRIPT_TIMEOUT_MS[name] ?? DEFAULT_SCRIPT_TIMEOUT_MS;
  try {
    const { stdout } = await execFileAsync('bash', [script(name), ...args], { timeout: timeoutMs, maxBuffer: 4 << 20 });
    return stdout.trim();
  } catch (err) {
    throw new Error(scriptFailure(`${name} ${args.join(' ')}`, err, timeoutMs), { cause: err });
  }
}

async function readEnvFile(file: string): Promise<ReadonlyMap<string, string>> {
  const text = await readFile(file, 'utf8');
  const entries = text
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line): [string, string] => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return new Map(entries);
}

function envValue(env: ReadonlyMap<string, string>, key: string, file: string): string {
  const value = env.get(key);
  if (value === undefined || value === '') throw new Error(`${file} has no ${key}`);
  return value;
}

/** The references of the locally built images (building them first if needed). */
export async function localImages(): Promise<LocalImages> {
  await runScript('build-images.sh', [IMAGE_CACHE_DIR]);
  const file = path.join(IMAGE_CACHE_DIR, 'images.env');
  const env = await readEnvFile(file);
  return { busybox: envValue(env, 'BUSYBOX_REF', file), pause: envValue(env, 'PAUSE_REF', file) };
}

// ---- processes to stop at exit ----

const liveDirs = new Map<string, string>(); // dir -> down script
let exitHookInstalled = false;

function trackForExit(dir: string, downScript: string): void {
  liveDirs.set(dir, downScript);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [d, down] of liveDirs) {
      try {
        execFileSync('bash', [script(down), d, '--purge'], { stdio: 'ignore', timeout: 30_000 });
      } catch (err) {
        process.stderr.write(`could not stop the instance in ${d}: ${String(err)}\n`);
      }
    }
  });
}

// ---- subnets ----

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'EPERM';
  }
}

/** Reserves a 10.88.X.0/24 that no interface or route uses and no live process holds. */
async function reserveSubnet(): Promise<{ subnet: string; release: () => Promise<void> }> {
  await mkdir(SUBNET_LOCK_DIR, { recursive: true });
  const { stdout } = await execFileAsync('sh', ['-c', 'ip -4 -o addr show; ip -4 route show']);
  const candidates = Array.from({ length: 254 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
  for (const x of candidates) {
    const prefix = `10.88.${x}.`;
    if (stdout.includes(prefix)) continue;
    const lock = path.join(SUBNET_LOCK_DIR, `10.88.${x}.0`);
    for (let attempt = 0; attempt < 2; attempt++) {
      // Written aside, then hard-linked into place: the lock never exists without its pid.
      const temp = `${lock}.${process.pid}.tmp`;
      await writeFile(temp, String(process.pid));
      try {
        await link(temp, lock);
        return { subnet: `10.88.${x}.0/24`, release: () => removeFile(lock) };
      } catch (err) {
        if (typeof err !== 'object' || err === null || Reflect.get(err, 'code') !== 'EEXIST') throw err;
        const owner = Number((await readFile(lock, 'utf8').catch(() => '0')).trim()); // gone meanwhile: free
        if (Number.isInteger(owner) && owner > 0 && processAlive(owner)) break;
        await removeFile(lock); // stale: its process is gone
      } finally {
        await removeFile(temp);
      }
    }
  }
  throw new Error('no free 10.88.X.0/24 subnet for a test containerd');
}

// ---- containerd ----

/** Starts a private containerd; resolves once its socket accepts connections. */
export async function startContainerd(options: StartContainerdOptions = {}): Promise<ContainerdInstance> {
  await requireBinaries('startContainerd', CONTAINERD_BINARIES);
  const reservation = options.subnet === undefined ? await reserveSubnet() : undefined;
  const subnet = options.subnet ?? reservation?.subnet ?? '';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'na-ctrd-'));
  const args = [dir, '--subnet', subnet, '--images', IMAGE_CACHE_DIR];
  if (options.registryPort !== undefined) args.push('--registry', `127.0.0.1:${options.registryPort}`);
  trackForExit(dir, 'containerd-down.sh');
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    try {
      await runScript('containerd-down.sh', [dir, '--purge']);
    } finally {
      liveDirs.delete(dir);
      await reservation?.release();
    }
  };
  try {
    if (options.rootTmpfsMiB !== undefined) {
      await mkdir(path.join(dir, 'root'));
      await execFileAsync('mount', ['-t', 'tmpfs', '-o', `size=${options.rootTmpfsMiB}m,mode=0711`, 'nodeagent-test-root', path.join(dir, 'root')]);
    }
    // The images first, under their own time limit: containerd-up.sh would build them within its own.
    await localImages();
    const socketPath = await runScript('containerd-up.sh', args);
    const envFile = path.join(dir, 'instance.env');
    const env = await readEnvFile(envFile);
    await waitFor(`containerd socket ${socketPath}`, () => canConnect(socketPath), { timeoutMs: 10_000 });
    const logDir = path.join(dir, 'logs');
    await mkdir(logDir, { recursive: true });
    return {
      endpoint: `unix://${socketPath}`,
      socketPath,
      dir,
      subnet,
      bridge: envValue(env, 'BRIDGE', envFile),
      cgroupRoot: envValue(env, 'CGROUP_ROOT', envFile),
      logDir,
      images: { busybox: envValue(env, 'BUSYBOX_REF', envFile), pause: envValue(env, 'PAUSE_REF', envFile) },
      imageIds: { busybox: envValue(env, 'BUSYBOX_IMAGE_ID', envFile), pause: envValue(env, 'PAUSE_IMAGE_ID', envFile) },
      stop,
    };
  } catch (err) {
    await stop().catch((stopErr: unknown) => {
      process.stderr.write(`startContainerd: cleanup after a failed start failed: ${String(stopErr)}\n`);
    });
    throw err;
  }
}

function canConnect(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

// ---- registry ----

/**
 * Starts docker-registry on a free loopback port with the busybox and pause images pushed;
 * with `auth` ('user:password') it asks for basic authentication.
 */
export async function startRegistry(options: { readonly auth?: string } = {}): Promise<RegistryInstance> {
  await requireBinaries('startRegistry', REGISTRY_BINARIES);
  // The images first, under their own time limit: registry-up.sh would build them within its own.
  await localImages();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'na-registry-'));
    const port = await freePort();
    trackForExit(dir, 'registry-down.sh');
    let stopped = false;
    const stop = async (): Promise<void> => {
      if (stopped) return;
      stopped = true;
      try {
        await runScript('registry-down.sh', [dir, '--purge']);
      } finally {
        liveDirs.delete(dir);
      }
    };
    try {
      const host = await runScript('registry-up.sh', [dir, String(port), '--images', IMAGE_CACHE_DIR, ...(options.auth === undefined ? [] : ['--auth', options.auth])]);
      const env = await readEnvFile(path.join(IMAGE_CACHE_DIR, 'images.env'));
      const file = 'images.env';
      return {
        host,
        port,
        dir,
        images: {
          busybox: `${host}/library/busybox:${envValue(env, 'BUSYBOX_TAG', file)}`,
          pause: `${host}/library/pause:${envValue(env, 'PAUSE_TAG', file)}`,
        },
        stop,
      };
    } catch (err) {
      lastError = err;
      await stop().catch((stopErr: unknown) => {
        process.stderr.write(`startRegistry: cleanup after a failed start failed: ${String(stopErr)}\n`);
      });
      await rm(dir, { recursive: true, force: true });
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

// ---- checks and cleanup ----

/**
 * Undo steps, run newest first by an `after` hook even when `before` or a test failed: the
 * agent's Disposers, where a step that hangs fails after CLEANUP_STEP_MS with its name and the
 * next one runs.
 */
export class Cleanups {
  private readonly steps = new Disposers();
  push(run: () => unknown, name?: string): void {
    this.steps.push(run, name);
  }
  async run(): Promise<void> {
    const overdue: Error[] = [];
    const failed = await this.steps.dispose({
      clock: realClock, stepMs: CLEANUP_STEP_MS,
      onOverdue: (name) => { overdue.push(new Error(`${name} did not finish within ${CLEANUP_STEP_MS} ms`)); },
    }).then((): unknown[] => [], (err: unknown) => (err instanceof AggregateError ? (err.errors as unknown[]) : [err]));
    const errors = [...failed, ...overdue];
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} cleanup step(s) failed`);
  }
}

/** How long one cleanup step may take. */
const CLEANUP_STEP_MS = 120_000;

/** Reads what a TCP server sends before closing (or what came within 2 s). */
export function readTcp(port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = net.connect(port, host);
    socket.setTimeout(2_000, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
    socket.on('close', () => {
      resolve(data);
    });
    socket.on('error', reject);
  });
}

/** PIDs of the processes whose command line mentions `dir` (none should outlive stop()). */
export async function processesUnder(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => ''); // exited meanwhile
    if (cmdline.includes(dir)) found.push(Number(entry));
  }
  return found;
}

/**
 * A registry with the base images and a containerd pulling from it, with a CRI client; their
 * teardown (the client closed, containerd stopped with no process left under its dir, the
 * registry stopped) goes on `cleanups`.
 */
export async function startRuntimeWithRegistry(cleanups: Cleanups): Promise<{ registry: RegistryInstance; ctrd: ContainerdInstance; cri: CriClient }> {
  const registry = await startRegistry();
  cleanups.push(() => registry.stop());
  const ctrd = await startContainerd({ registryPort: registry.port });
  cleanups.push(async () => {
    await ctrd.stop();
    assert.deepEqual(await processesUnder(ctrd.dir), [], 'processes left behind');
  });
  const cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 60_000 });
  cleanups.push(() => {
    cri.close();
  });
  return { registry, ctrd, cri };
}
