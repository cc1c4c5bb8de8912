/**
 * The lock file (--lock-file, --exit-on-lock-contention): an exclusive flock(2) held for the
 * agent's lifetime by a util-linux `flock` helper child, and a watch that reports contention.
 * The protocol is described in index.ts.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { mkdir, open, stat, utimes } from 'node:fs/promises';
import { Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';

import { OrchError, messageOf } from '../../api/errors.js';
import { StartupErrorCode, errnoOf, type StartupLog } from './types.js';

/** What the helper prints once flock(2) returned; after it, `cat` holds our stdin until EOF. */
const ACQUIRED = 'acquired';
const HELPER_SCRIPT = `echo ${ACQUIRED}; exec cat >/dev/null`;

export interface AcquireLockFileOptions {
  /** --lock-file: created, with its parent directory, when missing. */
  readonly path: string;
  /** --exit-on-lock-contention: watch the file once the lock is held and call onContention. */
  readonly exitOnLockContention: boolean;
  /**
   * Called at most once, only with exitOnLockContention, when another process signals that it
   * wants the lock (or the lock was lost); the composition root makes it exit the process.
   */
  readonly onContention: () => void;
  readonly log: StartupLog;
  /** The util-linux flock command, a name looked up in PATH or a path (default flock). */
  readonly flockCommand?: string | undefined;
}

export interface LockFileHandle {
  /**
   * Stops the contention watch, closes the helper's stdin and resolves once the helper has exited,
   * i.e. the lock is released. Idempotent (later calls return the same promise); never rejects.
   */
  release(): Promise<void>;
}

/**
 * Takes the exclusive lock on `path`, blocking (without limit, like the kubelet) while another
 * process holds it; before blocking it touches the file to ask the holder to exit. Resolves with
 * the handle once the lock is held; neither the helper nor the watch keeps the event loop alive.
 * Rejects with STARTUP_LOCK_FILE (unavailable) when the file cannot be created or the helper
 * cannot run or exits before acquiring (e.g. the flock command is missing).
 */
export async function acquireLockFile(options: AcquireLockFileOptions): Promise<LockFileHandle> {
  const path = resolve(options.path);
  const { log } = options;
  const command = options.flockCommand ?? 'flock';
  await ensureLockFile(path);
  await signalContention(path, log);
  // Whatever changes the file after this point (while we wait, too) is somebody else's signal.
  const baseline = await fileState(path).catch((err: unknown) => {
    throw lockError(path, `cannot stat the lock file: ${messageOf(err)}`, err);
  });
  log.info(`lock file ${path}: acquiring (this waits while another process holds the lock)`);
  const helper = await startHelper(command, path, log);
  log.info(`lock file ${path} acquired`);

  let releasing: Promise<void> | undefined;
  let contended = false;
  let watcher: FSWatcher | undefined;
  const contention = (why: string): void => {
    if (contended || releasing !== undefined) return;
    contended = true;
    watcher?.close();
    log.warn(`lock file ${path}: ${why}; calling the contention handler (--exit-on-lock-contention)`);
    options.onContention();
  };
  if (options.exitOnLockContention) watcher = watchForContention(path, baseline, contention, log);

  helper.on('exit', (code, signal) => {
    if (releasing !== undefined) return;
    const lost = `the flock helper exited (${signal ?? `code ${code}`}) and the lock is no longer held`;
    if (options.exitOnLockContention) contention(lost);
    else log.warn(`lock file ${path}: ${lost}`);
  });

  return {
    release(): Promise<void> {
      releasing ??= stopHelper(helper, watcher).then(() => {
        log.info(`lock file ${path} released`);
      });
      return releasing;
    },
  };
}

async function ensureLockFile(path: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    const file = await open(path, 'a', 0o600);
    await file.close();
  } catch (err) {
    throw lockError(path, `cannot create the lock file: ${messageOf(err)}`, err);
  }
}

/** The contention signal: a new mtime (and ctime) on the file, seen by the holder's watch. */
async function signalContention(path: string, log: StartupLog): Promise<void> {
  const now = new Date();
  try {
    await utimes(path, now, now);
  } catch (err) {
    // Not fatal: we still wait for the lock, but a holder with --exit-on-lock-contention won't know.
    log.warn(`lock file ${path}: cannot touch it to signal contention to its holder (${messageOf(err)}); waiting for the lock anyway`);
  }
}

type Helper = ChildProcessByStdio<Writable, Readable, Readable>;

/** Spawns `flock --exclusive <path> sh -c ...` and resolves once it printed ACQUIRED. */
function startHelper(command: string, path: string, log: StartupLog): Promise<Helper> {
  return new Promise((resolvePromise, reject) => {
    // Its own process group, so that a Ctrl-C meant for us does not release the lock early: only
    // our stdin closing (our exit, even by SIGKILL) or release() ends it.
    // --close: only flock(1) holds the lock, not the shell, so that its exit means the lock is gone.
    const child = spawn(command, ['--exclusive', '--close', path, 'sh', '-c', HELPER_SCRIPT], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    const onStdout = (chunk: Buffer): void => {
      stdout += chunk.toString('utf8');
      if (!stdout.split('\n').includes(ACQUIRED)) return;
      cleanup();
      unrefHelper(child);
      resolvePromise(child);
    };
    const onStderr = (chunk: Buffer): void => {
      stderr += chunk.toString('utf8');
    };
    const onError = (err: Error): void => {
      cleanup();
      const detail = errnoOf(err) === 'ENOENT' ? `the command '${command}' was not found (flock is part of util-linux)` : messageOf(err);
      reject(lockError(path, `cannot start the lock helper: ${detail}`, err));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      cleanup();
      const output = stderr.trim() === '' ? '' : `: ${stderr.trim()}`;
      reject(lockError(path, `the lock helper '${command}' exited (${signal ?? `code ${code}`}) before acquiring the lock${output}`));
    };
    const cleanup = (): void => {
      child.stdout.off('data', onStdout);
      child.off('error', onError);
      child.off('exit', onExit);
    };
    child.stdout.on('data', onStdout);
    child.stderr.on('data', onStderr);
    child.on('error', onError);
    child.on('exit', onExit);
    // Closing the stdin of a helper that has already gone (EPIPE): its 'exit' tells the story.
    child.stdin.on('error', (err) => {
      log.info(`lock file ${path}: the lock helper's stdin failed (${messageOf(err)})`);
    });
  });
}

/** Lets the process exit while the lock is held: the helper lives exactly as long as we do. */
function unrefHelper(child: Helper): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    if (stream instanceof Socket) stream.unref();
  }
}

function stopHelper(child: Helper, watcher: FSWatcher | undefined): Promise<void> {
  watcher?.close();
  if (child.exitCode !== null || child.signalCode !== null) {
    // flock(1) is gone already (killed); its `cat` may still read the pipe: let it go too.
    child.stdin.end();
    return Promise.resolve();
  }
  return new Promise((resolvePromise) => {
    child.once('exit', () => {
      resolvePromise();
    });
    // Keep the event loop alive until the helper has gone, so that the caller's await completes.
    child.ref();
    child.stdin.end();
  });
}

/** What identifies a change of the file: its inode, size and times (nanoseconds). */
interface FileState {
  readonly key: string;
}

async function fileState(path: string): Promise<FileState> {
  const s = await stat(path, { bigint: true });
  return { key: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` };
}

/**
 * Watches `path` (inotify through fs.watch) and calls `contention` when it changes after
 * `baseline`. Each event is checked against the last state seen, so events that change nothing
 * are ignored; our own touch predates the baseline, and release() closes the watch before the
 * helper lets go. The watcher is unref'ed: it never keeps the process alive.
 */
function watchForContention(path: string, baseline: FileState, contention: (why: string) => void, log: StartupLog): FSWatcher | undefined {
  let last = baseline;
  const check = async (): Promise<void> => {
    let now: FileState;
    try {
      now = await fileState(path);
    } catch (err) {
      contention(`the lock file is gone (${messageOf(err)})`);
      return;
    }
    if (now.key === last.key) return;
    last = now;
    contention('another process signalled that it wants the lock');
  };
  const onFailure = (err: unknown): void => {
    log.warn(`lock file ${path}: cannot watch for contention (${messageOf(err)}); --exit-on-lock-contention will not work`);
  };
  let watcher: FSWatcher;
  try {
    watcher = watch(path, { persistent: false }, () => {
      check().catch(onFailure);
    });
  } catch (err) {
    onFailure(err);
    return undefined;
  }
  watcher.on('error', onFailure);
  watcher.unref();
  // Catch what happened between our touch and the watch (a contender that arrived meanwhile).
  check().catch(onFailure);
  return watcher;
}

function lockError(path: string, message: string, cause?: unknown): OrchError {
  return new OrchError(StartupErrorCode.LockFile, 'unavailable', `lock file ${path}: ${message}`, { subject: '--lock-file', cause });
}
