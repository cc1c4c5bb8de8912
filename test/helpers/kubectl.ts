/**
 * The kubectl binaries of this machine and a runner for one of them. /usr/bin/kubectl is the
 * google-cloud-sdk dispatcher, which runs the versioned kubectl beside its real path that
 * matches the server; tests call each versioned binary (`kubectl.1.27` ... `kubectl.1.33`)
 * directly. A missing binary fails with a message saying where it was looked for.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
  /**
   * Writes `stdin` and leaves it open until kubectl exits. An attach (`kubectl attach -i`,
   * `kubectl debug -i`) to a container without stdinOnce ends its output streams when stdin ends,
   * as containerd does, so the input must stay open until the remote command has answered.
   */
  readonly holdStdin?: boolean;
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
    if (options.holdStdin === true && options.stdin !== undefined) {
      child.stdin?.write(options.stdin);
      child.once('exit', () => { child.stdin?.destroy(); });
    } else {
      child.stdin?.end(options.stdin);
    }
  });
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
