/**
 * Runs the real nodeagent binary for integration tests: a child process on a private
 * containerd (test/helpers/containerd.ts), with its own root dir and manifest directory,
 * logs kept in memory for assertions, health and read-only ports off unless asked. A root dir
 * the helper made itself (no `rootDir` given) is removed by stop() and kill() once the agent
 * has exited, with the pods' tmpfs mounts the agent left below it unmounted first.
 *
 * Each agent writes its pods' container logs under its own root dir (`<rootDir>/pod-logs`,
 * podLogsDir set by a drop-in of the helper's), so that agents sharing the machine never see
 * (or garbage-collect) each other's logs; a test that passes its own --config-dir sets
 * podLogsDir itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './containerd.js';
import { removeTempDir } from './tempdir.js';
import { waitFor, within } from './wait.js';

/** How long stop() waits for the agent to exit on SIGTERM before it kills it and fails. */
const STOP_TIMEOUT_MS = 60_000;

export const NODEAGENT_BIN = join(dirname(fileURLToPath(import.meta.url)), '../../../bin/nodeagent');

/** What a `#!/usr/bin/env -S [NAME=value ...] node [flags]` line sets up for node. */
export interface ShebangCommand {
  readonly env: Readonly<Record<string, string>>;
  readonly nodeFlags: readonly string[];
}

export async function shebangCommand(bin: string = NODEAGENT_BIN): Promise<ShebangCommand> {
  const words = ((await readFile(bin, 'utf8')).split('\n', 1)[0] ?? '').replace(/^#!\s*/, '').split(/\s+/);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  if (node < 0) return { env: {}, nodeFlags: [] };
  const env: Record<string, string> = {};
  for (const word of words.slice(0, node)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(word);
    if (m?.[1] !== undefined) env[m[1]] = m[2] ?? '';
  }
  return { env, nodeFlags: words.slice(node + 1).filter((w) => w.startsWith('--')) };
}

export interface AgentProcess {
  readonly process: ChildProcess;
  /** The command line the agent was started with (without the binary). */
  readonly args: readonly string[];
  /** Where the agent's runtime writes the pods' container logs (podLogsDir). */
  readonly podLogsDir: string;
  /** Everything the agent wrote to stdout and stderr so far. */
  logs(): string;
  /** Waits until the log contains `text` (a string or pattern). */
  waitForLog(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM and wait for the exit code (then remove the root dir the helper made). */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash) and wait (then remove the root dir the helper made). */
  kill(): Promise<void>;
  exited(): Promise<number | null>;
}

export interface AgentOptions {
  readonly endpoint: string;
  readonly cgroupRoot: string;
  readonly manifestDir?: string;
  readonly rootDir?: string;
  readonly args?: readonly string[];
  /** Do not wait for "nodeagent running" (e.g. when the runtime is down or for --runonce). */
  readonly noWait?: boolean;
  /** The agent's environment on top of this process's (e.g. NODEAGENT_CONTAINER_GC_PERIOD). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Node's own flags for the agent's process (e.g. `--cpu-prof`, `--cpu-prof-dir=DIR`, `--heap-prof`: node refuses
   * them in NODE_OPTIONS). Given, the agent runs as `node <the #! line's flags> <nodeArgs> bin/nodeagent ...` with the
   * #! line's environment, so its pid is still the agent's own node process.
   */
  readonly nodeArgs?: readonly string[];
  /** The agent's launcher (default this checkout's bin/nodeagent; another checkout's to compare builds). */
  readonly bin?: string;
}

export async function startAgentProcess(options: AgentOptions): Promise<AgentProcess> {
  const ownRoot = options.rootDir === undefined;
  const rootDir = options.rootDir ?? (await mkdtemp(join(tmpdir(), 'nodeagent-root-')));
  // Removed once, after the agent exited: the caller does not know this directory.
  let removal: Promise<void> | undefined;
  const removeOwnRoot = (): Promise<void> => (removal ??= (async () => {
    if (ownRoot) await removeTempDir(rootDir);
    if (dropInDir !== undefined) await removeTempDir(dropInDir);
  })());
  // The secure port defaults to 10250 on all interfaces: give each agent its own free port
  // unless the test chooses one (agents of test files running in parallel must not collide).
  const choosesPort = (options.args ?? []).some((a) => /^--(port|config|enable-server)(=|$)/.test(a));
  // podLogsDir is a file-only field: a drop-in of the helper's sets it, unless the test has its own drop-ins.
  const ownDropIns = !(options.args ?? []).some((a) => /^--config-dir(=|$)/.test(a));
  const dropInDir = ownDropIns ? await mkdtemp(join(tmpdir(), 'nodeagent-dropin-')) : undefined;
  const podLogsDir = join(rootDir, 'pod-logs');
  if (dropInDir !== undefined) {
    await writeFile(join(dropInDir, '00-pod-logs.conf'), `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeagentConfiguration\npodLogsDir: ${podLogsDir}\n`);
  }
  const args = [
    ...(choosesPort ? [] : [`--port=${await freePort()}`]),
    ...(dropInDir === undefined ? [] : [`--config-dir=${dropInDir}`]),
    `--container-runtime-endpoint=${options.endpoint}`,
    `--root-dir=${rootDir}`,
    `--cert-dir=${join(rootDir, 'pki')}`,
    `--cgroup-root=${options.cgroupRoot}`,
    // FlexVolume drivers: the agent's own directory, never the host's default (made by the agent when missing).
    ...((options.args ?? []).some((a) => a.startsWith('--volume-plugin-dir')) ? [] : [`--volume-plugin-dir=${join(rootDir, 'volume-plugins')}`]),
    '--healthz-port=0',
    '--read-only-port=0',
    '--file-check-frequency=2s',
    '--sync-frequency=10s',
    ...(options.manifestDir === undefined ? [] : [`--pod-manifest-path=${options.manifestDir}`]),
    ...(options.args ?? []),
  ];
  const bin = options.bin ?? NODEAGENT_BIN;
  const shebang = options.nodeArgs === undefined ? undefined : await shebangCommand(bin);
  const child = shebang === undefined
    ? spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } })
    : spawn(process.execPath, [...shebang.nodeFlags, ...(options.nodeArgs ?? []), bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...shebang.env, ...options.env } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const exit = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => { resolve(code); });
  });
  let exited = false;
  void exit.then(() => { exited = true; });
  const agent: AgentProcess = {
    process: child,
    args,
    podLogsDir,
    logs: () => output,
    async waitForLog(text, timeoutMs = 20_000) {
      await waitFor(`agent log ${String(text)}`, () => {
        if (typeof text === 'string' ? output.includes(text) : text.test(output)) return true;
        if (exited) throw new Error(`the agent exited; its log:\n${output.slice(-3000)}`);
        return false;
      }, { timeoutMs });
    },
    async stop() {
      if (!exited) child.kill('SIGTERM');
      try {
        const code = await within('the agent stopping on SIGTERM', exit, STOP_TIMEOUT_MS);
        // A leak the agent's exit guard caught (it exited anyway): shown, for whoever reads the run.
        const held = /nodeagent: still running .*/.exec(output);
        if (held !== null) process.stderr.write(`${held[0]}\n`);
        return code;
      } catch (err) {
        child.kill('SIGKILL');
        await exit;
        throw new Error(`${(err as Error).message} (killed); its log:\n${output.slice(-3000)}`);
      } finally {
        await removeOwnRoot();
      }
    },
    async kill() {
      if (!exited) child.kill('SIGKILL');
      await exit;
      await removeOwnRoot();
    },
    exited: () => exit,
  };
  if (options.noWait !== true) {
    try {
      await agent.waitForLog('nodeagent running', 30_000);
    } catch (err) {
      await agent.kill();
      throw err;
    }
  }
  return agent;
}
