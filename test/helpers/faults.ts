/**
 * Faults for the fault suites: stopping and starting a private containerd's daemon alone (its
 * shims, and so the containers, keep running, as when an operator restarts containerd), a
 * kill -9 of a process, and the figures line each fault test prints (`fault <suite>: ...`),
 * which docs/reliability.md's tables are made from.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerdInstance } from './containerd.js';
import { waitFor } from './wait.js';

/** Stops the containerd daemon of `instance` (SIGTERM, as systemctl stop does); its containers keep running. */
export async function stopContainerdDaemon(instance: ContainerdInstance): Promise<void> {
  const pid = Number((await readFile(join(instance.dir, 'containerd.pid'), 'utf8')).trim());
  process.kill(pid, 'SIGTERM');
  await waitFor(`containerd ${pid} to exit`, () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      // ESRCH: it is gone.
      return true;
    }
  }, { timeoutMs: 20_000 });
}

/** Starts the daemon again on the same configuration, state and socket; resolves once it answers. */
export async function startContainerdDaemon(instance: ContainerdInstance): Promise<void> {
  const log = await import('node:fs').then((fs) => fs.openSync(join(instance.dir, 'containerd.log'), 'a'));
  const child = spawn('containerd', ['--config', join(instance.dir, 'config.toml')], { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  await writeFile(join(instance.dir, 'containerd.pid'), `${child.pid ?? ''}\n`);
  const { connect } = await import('node:net');
  await waitFor('containerd to answer again', () => new Promise<boolean>((resolve) => {
    const socket = connect(instance.socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => { resolve(false); });
  }), { timeoutMs: 30_000 });
}

/** Kills a process as a crash does (SIGKILL) and waits for its exit. */
export async function killHard(pid: number | undefined, exited: Promise<unknown>): Promise<void> {
  if (pid === undefined) throw new Error('no process to kill');
  process.kill(pid, 'SIGKILL');
  await exited;
}

export interface FaultFigures {
  readonly suite: string;
  /** What was tried, e.g. "kill -9 with 12 pods running". */
  readonly tried: string;
  /** How many things were checked after the fault (containers, writes, pods). */
  readonly checked: number;
  readonly failures: number;
  readonly ms: number;
}

/** Prints the figures line of a fault test. */
export function reportFault(f: FaultFigures): void {
  process.stdout.write(`fault ${f.suite}: ${f.tried}; ${f.checked} checked, ${f.failures} failures, ${f.ms} ms\n`);
}
