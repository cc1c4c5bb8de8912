/**
 * The kubectl binaries of this machine and a runner for one of them. /usr/bin/kubectl is the
 * google-cloud-sdk dispatcher, which runs the versioned kubectl beside its real path that
 * matches the server; tests call each versioned binary (`kubectl.1.27` ... `kubectl.1.33`)
 * directly. A missing binary fails with a message saying where it was looked for.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WaitAbandoned, waitFor } from './wait.js';

export const DISPATCHER = '/usr/bin/kubectl';

/** The versioned binaries, `1.27` -> its path, for every minor in [from, to]. Throws naming the missing ones. */
export function kubectlBinaries(from = 27, to = 33): Map<string, string> {
  if (!existsSync(DISPATCHER)) throw new Error(`${DISPATCHER} is missing: install the google-cloud-sdk kubectl (the tests run kubectl ${from}..${to})`);
  const dir = dirname(realpathSync(DISPATCHER));
  const found = new Map<string, string>();
  const missing: string[] = [];
  for (let minor = from; minor <= to; minor++) {
    const path = join(dir, `kubectl.1.${minor}`);
    if (existsSync(path)) found.set(`1.${minor}`, path);
    else missing.push(path);
  }
  if (missing.length > 0) throw new Error(`kubectl binaries are missing: ${missing.join(', ')} (the dispatcher ${DISPATCHER} keeps them beside its real path)`);
  return found;
}

export interface KubectlRun {
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlEnv {
  readonly binary: string;
  readonly kubeconfig: string;
  /** HOME (its discovery cache): one per version keeps the versions apart. */
  readonly home: string;
}

export interface KubectlOptions {
  readonly stdin?: string | Buffer;
  readonly timeoutMs?: number;
  readonly extraEnv?: Record<string, string>;
}

/** Runs kubectl to its end; rejects with its stderr when it exits non-zero or runs past `timeoutMs`. */
export function kubectl(env: KubectlEnv, args: readonly string[], options: KubectlOptions = {}): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(env.binary, [...args], {
      env: { ...process.env, HOME: env.home, KUBECONFIG: env.kubeconfig, ...(options.extraEnv ?? {}) },
      timeout: options.timeoutMs ?? 60_000,
      maxBuffer: 16 * 1024 * 1024,
    }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`kubectl ${args.join(' ')}: ${err.message.split('\n')[0] ?? ''}\n${stderr.trim()}`));
      else resolve({ stdout, stderr });
    });
    child.stdin?.end(options.stdin);
  });
}

/** One turn of a conversation with a remote command: what is typed, and the output awaited before the next turn. */
export interface Turn {
  readonly send: string;
  readonly awaitOutput?: RegExp;
}

/**
 * Runs an interactive kubectl (`attach -i`, `debug -i`) as a user at a terminal would: types each
 * turn once the previous turn's output arrived, and leaves stdin open until kubectl exits. An
 * attach to a container without stdinOnce ends its output streams when stdin ends, and
 * containerd may stop an attach's output as the process exits, before the last bytes it wrote
 * (the container's log keeps them), so a command whose output matters answers before it is told
 * to exit. Rejects when kubectl exits non-zero or a turn's output does not come within `timeoutMs`.
 */
export async function converse(env: KubectlEnv, args: readonly string[], turns: readonly Turn[], timeoutMs = 60_000): Promise<KubectlRun> {
  const child = spawn(env.binary, [...args], { env: { ...process.env, HOME: env.home, KUBECONFIG: env.kubeconfig }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let closed: { code: number | null } | undefined;
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  child.once('close', (code) => { closed = { code }; });
  const deadline = Date.now() + timeoutMs;
  const until = async (what: string, done: () => boolean): Promise<void> => {
    try {
      await waitFor(what, () => done() || (closed !== undefined ? Promise.reject(new WaitAbandoned(`kubectl exited with ${String(closed.code)}`)) : false), { timeoutMs: Math.max(1, deadline - Date.now()), intervalMs: 20 });
    } catch (err) {
      throw new Error(`kubectl ${args.join(' ')}: ${err instanceof Error ? err.message : String(err)}\nstdout: ${stdout}\nstderr: ${stderr}`, { cause: err });
    }
  };
  try {
    for (const turn of turns) {
      child.stdin.write(turn.send);
      const expected = turn.awaitOutput;
      if (expected !== undefined) await until(`its output to match ${String(expected)}`, () => expected.test(stdout));
    }
    await until('it to exit', () => closed !== undefined && closed.code === 0);
    return { stdout, stderr };
  } finally {
    child.stdin.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Starts a long-running kubectl (logs -f, port-forward); its output accumulates in `output()`. */
export function startKubectl(env: KubectlEnv, args: readonly string[]): { child: ChildProcess; output(): string; stop(): Promise<void> } {
  const child = spawn(env.binary, [...args], { env: { ...process.env, HOME: env.home, KUBECONFIG: env.kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve(); }); });
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
