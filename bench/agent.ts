/**
 * The nodeagent under benchmark as a child process, and what the benches read about processes.
 *
 * The agent is started as `node <flags of the binary's #! line> <binary> ...` with the environment
 * that line sets, so that the child's pid is the agent's own node process (the one whose CPU and
 * RSS are read) running with the V8 and malloc settings the command has. The binary is
 * bin/nodeagent of this checkout unless another is given (another build: another checkout's
 * bin/nodeagent). Its log goes to a file, its pods' container logs under its directory. It is stopped with SIGTERM and leaves its containers
 * running, as upstream's agent does, so callers remove the pods first.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { shebangCommand } from '../test/helpers/agent.js';
import { WaitAbandoned, waitFor } from '../test/helpers/wait.js';

/** bin/nodeagent of this checkout (dist/bench/agent.js is two levels below the repository). */
export const AGENT_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'nodeagent');

export interface AgentOptions {
  /** The agent's launcher (default AGENT_BIN). */
  readonly bin?: string;
  /** CRI endpoint of the containerd instance (`unix://...`). */
  readonly endpoint: string;
  /** The instance's cgroup root, for --cgroup-root. */
  readonly cgroupRoot: string;
  /** manifests/, root/ and agent.log go here. */
  readonly dir: string;
  /** --hostname-override: static pods are named `<name>-<nodeName>`. */
  readonly nodeName: string;
  readonly verbosity?: number;
  /** Node's flags (default: those of the binary's #! line, whose environment applies either way). */
  readonly nodeFlags?: readonly string[];
  /** More agent flags (default `--enable-server=false`: no secure port on every interface). */
  readonly args?: readonly string[];
}

export interface AgentProcess {
  readonly pid: number;
  readonly bin: string;
  readonly manifestDir: string;
  readonly rootDir: string;
  readonly logFile: string;
  /** SIGTERM, then SIGKILL after 15 s; resolves once the process is gone. Idempotent. */
  stop(): Promise<void>;
}

export { shebangCommand, type ShebangCommand } from '../test/helpers/agent.js';

/** The last lines of a file, for error messages. */
export async function tailOf(file: string, lines = 20): Promise<string> {
  const text = await readFile(file, 'utf8').catch((err: unknown) => `(cannot read ${file}: ${String(err)})`);
  return text.split('\n').slice(-lines - 1).join('\n');
}

/** Starts the agent and resolves once its log says it runs. */
export async function startAgent(o: AgentOptions): Promise<AgentProcess> {
  const bin = path.resolve(o.bin ?? AGENT_BIN);
  const manifestDir = path.join(o.dir, 'manifests');
  const rootDir = path.join(o.dir, 'root');
  const logFile = path.join(o.dir, 'agent.log');
  await mkdir(manifestDir, { recursive: true });
  await mkdir(rootDir, { recursive: true });
  // The pods' container logs go into the bench's directory too (podLogsDir is a file-only field).
  const dropIns = path.join(o.dir, 'config.d');
  await mkdir(dropIns, { recursive: true });
  await writeFile(path.join(dropIns, '00-pod-logs.conf'), `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\npodLogsDir: ${path.join(o.dir, 'pod-logs')}\n`);
  const shebang = await shebangCommand(bin);
  const args = [
    ...(o.nodeFlags ?? shebang.nodeFlags),
    bin,
    `--container-runtime-endpoint=${o.endpoint}`,
    `--pod-manifest-path=${manifestDir}`,
    `--root-dir=${rootDir}`,
    `--cert-dir=${path.join(rootDir, 'pki')}`,
    `--cgroup-root=${o.cgroupRoot}`,
    `--hostname-override=${o.nodeName}`,
    `--config-dir=${dropIns}`,
    '--healthz-port=0',
    '--read-only-port=0',
    `-v=${o.verbosity ?? 2}`,
    ...(o.args ?? ['--enable-server=false']),
  ];
  // A second agent on the same directory appends to the log: only what this one writes counts.
  const logOffset = (await stat(logFile).catch(() => undefined))?.size ?? 0;
  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, { stdio: ['ignore', out, out], env: { ...process.env, ...shebang.env } });
  } finally {
    closeSync(out); // the child has its own descriptor
  }
  const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  const killOnExit = (): void => {
    if (!exited()) child.kill('SIGKILL'); // the agent must not outlive the bench
  };
  process.on('exit', killOnExit);
  const gone = new Promise<void>((resolve) => {
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    });
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (exited()) return;
      child.kill('SIGTERM');
      if (await Promise.race([gone.then(() => false), delay(15_000, true)])) {
        process.stderr.write(`bench: nodeagent (pid ${child.pid ?? '?'}) ignored SIGTERM for 15 s; killing it\n`);
        child.kill('SIGKILL');
        await gone;
      }
    })());
  try {
    if (child.pid === undefined) throw new Error(`cannot spawn ${bin}`);
    await waitFor('nodeagent to start (its log to say "nodeagent running")', async () => {
      if (exited()) throw new WaitAbandoned(`nodeagent exited (${String(child.exitCode ?? child.signalCode)})`);
      return (await readFile(logFile)).subarray(logOffset).toString('utf8').includes('nodeagent running');
    }, { timeoutMs: 60_000, intervalMs: 20 });
    return { pid: child.pid, bin, manifestDir, rootDir, logFile, stop };
  } catch (err) {
    await stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}; log ${logFile}:\n${await tailOf(logFile)}`, { cause: err });
  }
}

/** A busybox `sleep 3600` static pod; grace period 1 s (the agent applies its minimum of 2 s), as `sleep` ignores SIGTERM. */
export function podManifest(o: { readonly name: string; readonly namespace: string; readonly image: string; readonly hostNetwork: boolean }): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${o.name}, namespace: ${o.namespace}}
spec:
  hostNetwork: ${o.hostNetwork}
  terminationGracePeriodSeconds: 1
  containers:
  - {name: sleep, image: "${o.image}", imagePullPolicy: IfNotPresent, command: [sleep, "3600"]}
`;
}

/** Writes manifests into the watched directory, each under a dot name first (ignored by the agent) and renamed into place. */
export async function writeManifests(dir: string, manifests: readonly { readonly file: string; readonly text: string }[]): Promise<void> {
  await Promise.all(manifests.map((m) => writeFile(path.join(dir, `.${m.file}.tmp`), m.text)));
  await Promise.all(manifests.map((m) => rename(path.join(dir, `.${m.file}.tmp`), path.join(dir, m.file))));
}

// ---- /proc ----

const CLOCK_TICKS = ((): number => {
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
})();

export interface ProcSample {
  /** VmRSS, KiB. */
  readonly rssKiB: number;
  /** RssAnon (the process's own memory: V8's heap, malloc) and RssFile (mapped files' pages: mostly node's own binary, shared with every node process), KiB. */
  readonly anonKiB: number;
  readonly fileKiB: number;
  /** utime + stime, seconds. */
  readonly cpuSeconds: number;
  /** performance.now() when read. */
  readonly at: number;
}

/** The pid of a containerd started by test/helpers/containerd.ts. */
export async function containerdPid(ctrd: { readonly dir: string }): Promise<number> {
  const pid = Number((await readFile(path.join(ctrd.dir, 'containerd.pid'), 'utf8')).trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`${ctrd.dir}/containerd.pid holds no pid`);
  return pid;
}

export async function sampleProcess(pid: number): Promise<ProcSample> {
  const [status, stat] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]);
  const at = performance.now();
  const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (rss === null) throw new Error(`/proc/${pid}/status has no VmRSS`);
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status)?.[1] ?? NaN);
  // The command name (field 2) may hold spaces: count from its closing parenthesis; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssKiB: Number(rss[1]), anonKiB: kib('RssAnon'), fileKiB: kib('RssFile'), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS, at };
}

/** CPU time between two samples over their wall time, % of one core. */
export function cpuPercent(a: ProcSample, b: ProcSample): number {
  const wall = (b.at - a.at) / 1000;
  return wall <= 0 ? 0 : (100 * (b.cpuSeconds - a.cpuSeconds)) / wall;
}

export interface Usage {
  /** VmRSS at the end of the window, MiB. */
  readonly rssMiB: number;
  /** % of one core over the window. */
  readonly cpuPercent: number;
  /** The means over the window's samples (one a second) of RssAnon and RssFile, MiB: the anonymous part moves by ~15 MiB within seconds as V8 collects and malloc returns pages, so one reading at the end says less. */
  readonly anonMeanMiB?: number;
  readonly fileMeanMiB?: number;
}

/** Each process's RSS and CPU share over a window of `seconds`, reading /proc/PID/status once a second meanwhile (nothing else). */
export async function measureUsage(pids: readonly number[], seconds: number): Promise<Usage[]> {
  const first = await Promise.all(pids.map(sampleProcess));
  const samples: ProcSample[][] = [first];
  const end = performance.now() + seconds * 1000;
  for (let left = end - performance.now(); left > 0; left = end - performance.now()) {
    await delay(Math.min(1000, left));
    samples.push(await Promise.all(pids.map(sampleProcess)));
  }
  const last = samples[samples.length - 1] ?? first;
  const mean = (i: number, of: (s: ProcSample) => number): number => {
    const values = samples.flatMap((row) => (row[i] === undefined ? [] : [of(row[i])]));
    return values.reduce((sum, v) => sum + v, 0) / values.length / 1024;
  };
  return first.map((a, i) => {
    const b = last[i] ?? a;
    return { rssMiB: b.rssKiB / 1024, cpuPercent: cpuPercent(a, b), anonMeanMiB: mean(i, (s) => s.anonKiB), fileMeanMiB: mean(i, (s) => s.fileKiB) };
  });
}
