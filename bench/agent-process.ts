/**
 * The nodeagent under benchmark as a child process, and what the benchmark reads about it:
 * starting the built binary on a containerd instance with its log in a file, writing and
 * deleting static pod manifests, and sampling the process's RSS and CPU time from /proc.
 *
 * The agent is started as `node <flags of its #! line> bin/nodeagent ...` with the environment
 * that line sets (so the child's pid is the agent's node process, with the V8 and malloc
 * settings the command has) and with no listener at all: health, read-only and secure servers
 * off (the secure one would bind port 10250 on every interface and write certificates under
 * /var/lib). It is stopped with SIGTERM (SIGKILL after a deadline) and leaves its containers
 * running, as upstream's agent does, so callers delete the manifests and wait first.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { WaitAbandoned, waitFor } from '../test/helpers/wait.js';

export interface AgentProcessOptions {
  /** CRI endpoint of the containerd instance (`unix://...`). */
  readonly endpoint: string;
  /** CGROUP_ROOT of that instance, for --cgroup-root. */
  readonly cgroupRoot: string;
  /** A fresh directory: manifests/, root/ and agent.log go there. */
  readonly dir: string;
  /** --hostname-override: static pods are named `<name>-<nodeName>`. */
  readonly nodeName: string;
  /** -v of the agent (default 4: the pod start steps are logged with their times). */
  readonly verbosity?: number;
  /**
   * Node's flags for the agent (default: those of bin/nodeagent's #! line). The #! line's
   * environment assignments apply whatever the flags (see shebangCommand).
   */
  readonly nodeFlags?: readonly string[];
}

export interface AgentProcess {
  readonly pid: number;
  readonly manifestDir: string;
  readonly rootDir: string;
  readonly logFile: string;
  /** SIGTERM, then SIGKILL after 15 s; resolves once the process is gone. Idempotent. */
  stop(): Promise<void>;
}

function repoRoot(): string {
  // dist/bench/agent-process.js -> the repository root is two levels up from dist/bench.
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
}

function agentBin(): string {
  return path.join(repoRoot(), 'bin', 'nodeagent');
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** The last `lines` lines of a file, for error messages ('' when unreadable). */
export async function tailOf(file: string, lines = 20): Promise<string> {
  const text = await readFile(file, 'utf8').catch((err: unknown) => `(cannot read ${file}: ${String(err)})`);
  return text.split('\n').slice(-lines - 1).join('\n');
}

/** What the binary's `#!/usr/bin/env -S [NAME=value ...] node [flags]` line sets up for node. */
export interface ShebangCommand {
  /** The environment assignments before `node` (glibc's malloc settings). */
  readonly env: Readonly<Record<string, string>>;
  /** Node's flags after `node`. */
  readonly nodeFlags: readonly string[];
}

/**
 * Reads the binary's #! line: spawned as `node <bin>` with that environment and those flags,
 * the agent runs as it does when started as a command.
 */
export async function shebangCommand(bin: string = agentBin()): Promise<ShebangCommand> {
  const first = (await readFile(bin, 'utf8')).split('\n', 1)[0] ?? '';
  const words = first.replace(/^#!\s*/, '').split(/\s+/);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  if (node < 0) return { env: {}, nodeFlags: [] };
  const env: Record<string, string> = {};
  for (const word of words.slice(0, node)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(word);
    if (m?.[1] !== undefined) env[m[1]] = m[2] ?? '';
  }
  return { env, nodeFlags: words.slice(node + 1).filter((w) => w.startsWith('--')) };
}

/** The node flags of the binary's #! line (shebangCommand). */
export async function shebangNodeFlags(bin: string = agentBin()): Promise<string[]> {
  return [...(await shebangCommand(bin)).nodeFlags];
}

/** Starts the built agent and resolves once its log says it runs (its pod sources started). */
export async function startAgentProcess(options: AgentProcessOptions): Promise<AgentProcess> {
  const manifestDir = path.join(options.dir, 'manifests');
  const rootDir = path.join(options.dir, 'root');
  const logFile = path.join(options.dir, 'agent.log');
  await mkdir(manifestDir, { recursive: true });
  await mkdir(rootDir, { recursive: true });
  const bin = agentBin();
  const shebang = await shebangCommand(bin);
  const args = [
    ...(options.nodeFlags ?? shebang.nodeFlags),
    bin,
    `--container-runtime-endpoint=${options.endpoint}`,
    `--pod-manifest-path=${manifestDir}`,
    `--root-dir=${rootDir}`,
    `--cgroup-root=${options.cgroupRoot}`,
    `--hostname-override=${options.nodeName}`,
    '--healthz-port=0',
    '--read-only-port=0',
    '--enable-server=false',
    `-v=${options.verbosity ?? 4}`,
  ];
  // A log appended to (a second agent on the same directory): only what this one writes counts.
  const logOffset = (await stat(logFile).catch(() => undefined))?.size ?? 0;
  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, { stdio: ['ignore', out, out], env: { ...process.env, ...shebang.env } });
  } finally {
    closeSync(out); // the child has its own descriptor
  }
  // If the benchmark exits first (an error, a signal), the agent must not outlive it.
  const killOnExit = (): void => {
    if (!exited(child)) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  const gone = new Promise<void>((resolve) => {
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    });
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exited(child)) return;
      child.kill('SIGTERM');
      const killed = await Promise.race([gone.then(() => false), delay(15_000, true)]);
      if (killed) {
        process.stderr.write(`agent-pods: nodeagent (pid ${child.pid ?? '?'}) ignored SIGTERM for 15 s; killing it\n`);
        child.kill('SIGKILL');
        await gone;
      }
    })();
    return stopping;
  };
  const pid = child.pid;
  try {
    if (pid === undefined) throw new Error('cannot spawn nodeagent');
    await waitFor(
      'nodeagent to start (its log to say "nodeagent running")',
      async () => {
        if (exited(child)) throw new WaitAbandoned(`nodeagent exited (${String(child.exitCode ?? child.signalCode)})`);
        return (await readFile(logFile)).subarray(logOffset).toString('utf8').includes('nodeagent running');
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
  } catch (err) {
    await stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}; log ${logFile}:\n${await tailOf(logFile)}`, { cause: err });
  }
  return { pid, manifestDir, rootDir, logFile, stop };
}

export interface PodManifestOptions {
  readonly name: string;
  readonly namespace: string;
  readonly image: string;
  readonly hostNetwork: boolean;
}

/**
 * A busybox `sleep 3600` pod, image pull policy IfNotPresent. Its grace period is 1 s (the
 * agent applies upstream's minimum of 2 s): `sleep` as PID 1 ignores SIGTERM, and the
 * benchmark deletes pods between phases.
 */
export function podManifest(o: PodManifestOptions): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${o.name}`,
    `  namespace: ${o.namespace}`,
    'spec:',
    `  hostNetwork: ${o.hostNetwork}`,
    '  terminationGracePeriodSeconds: 1',
    '  containers:',
    '  - name: sleep',
    `    image: ${o.image}`,
    '    imagePullPolicy: IfNotPresent',
    "    command: ['sleep', '3600']",
    '',
  ].join('\n');
}

/**
 * Writes manifests into the watched directory, each atomically: written under a dot name (the
 * agent ignores those) and renamed into place, so a scan never reads half a file. Resolves
 * once every rename is done.
 */
export async function writeManifests(dir: string, manifests: readonly { readonly file: string; readonly text: string }[]): Promise<void> {
  await Promise.all(manifests.map((m) => writeFile(path.join(dir, `.${m.file}.tmp`), m.text)));
  await Promise.all(manifests.map((m) => rename(path.join(dir, `.${m.file}.tmp`), path.join(dir, m.file))));
}

export async function removeManifests(dir: string, files: readonly string[]): Promise<void> {
  await Promise.all(files.map((f) => rm(path.join(dir, f), { force: true })));
}

// ---- /proc sampling ----

let clockTicks: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (getconf CLK_TCK; 100 if that fails). */
export function clockTicksPerSecond(): number {
  if (clockTicks !== undefined) return clockTicks;
  try {
    clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch (err) {
    process.stderr.write(`agent-pods: getconf CLK_TCK failed (${String(err)}); assuming 100\n`);
    clockTicks = 100;
  }
  if (!Number.isFinite(clockTicks) || clockTicks <= 0) clockTicks = 100;
  return clockTicks;
}

export interface ProcSample {
  /** VmRSS of /proc/<pid>/status, KiB. */
  readonly rssKiB: number;
  /** utime + stime of /proc/<pid>/stat, clock ticks. */
  readonly cpuTicks: number;
  /** performance.now() when read. */
  readonly at: number;
}

/** The pid of a containerd instance started by test/helpers/containerd.ts (from the pid file in its directory). */
export async function containerdPid(ctrd: { readonly dir: string }): Promise<number> {
  const file = path.join(ctrd.dir, 'containerd.pid');
  const pid = Number((await readFile(file, 'utf8')).trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`${file} holds no pid`);
  return pid;
}

/** Reads VmRSS and utime+stime of a process. */
export async function sampleProcess(pid: number): Promise<ProcSample> {
  const [status, stat] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]);
  const at = performance.now();
  const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (rss === null) throw new Error(`/proc/${pid}/status has no VmRSS`);
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]); // field 14
  const stime = Number(fields[12]); // field 15
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read utime/stime from /proc/${pid}/stat`);
  return { rssKiB: Number(rss[1]), cpuTicks: utime + stime, at };
}

export interface UsageWindow {
  readonly seconds: number;
  /** VmRSS at the start of the window, MiB. */
  readonly rssStartMiB: number;
  /** VmRSS at the end of the window, MiB. */
  readonly rssMiB: number;
  /** Highest VmRSS seen (sampled every second), MiB. */
  readonly rssMaxMiB: number;
  /** CPU time over the window divided by wall time, % of one core. */
  readonly cpuPercent: number;
}

/** CPU share between two samples, % of one core. */
export function cpuPercentBetween(a: ProcSample, b: ProcSample): number {
  const wallSeconds = (b.at - a.at) / 1000;
  return wallSeconds <= 0 ? 0 : (100 * (b.cpuTicks - a.cpuTicks)) / clockTicksPerSecond() / wallSeconds;
}

/** Watches processes for `seconds` (sampling each second, touching nothing else) and reports each one's usage. */
export async function measureUsage(pids: readonly number[], seconds: number): Promise<UsageWindow[]> {
  const first = await Promise.all(pids.map(sampleProcess));
  const maxKiB = first.map((s) => s.rssKiB);
  let last = first;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    await delay(Math.min(1000, Math.max(0, end - performance.now())));
    last = await Promise.all(pids.map(sampleProcess));
    last.forEach((s, i) => (maxKiB[i] = Math.max(maxKiB[i] ?? 0, s.rssKiB)));
  }
  return pids.map((_, i) => {
    const a = first[i];
    const b = last[i];
    if (a === undefined || b === undefined) throw new Error('missing process sample');
    return {
      seconds: Math.round((b.at - a.at) / 100) / 10,
      rssStartMiB: a.rssKiB / 1024,
      rssMiB: b.rssKiB / 1024,
      rssMaxMiB: (maxKiB[i] ?? 0) / 1024,
      cpuPercent: cpuPercentBetween(a, b),
    };
  });
}
