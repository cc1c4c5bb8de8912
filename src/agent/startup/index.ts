/**
 * startup: the checks the agent performs on its host before it runs anything, in the kubelet's
 * order: the lock file (--lock-file, --exit-on-lock-contention), swap (--fail-swap-on), the kernel
 * tunables (--protect-kernel-defaults), its own OOM score adjustment (--oom-score-adj) and its
 * open-file limit (--max-open-files); then the agent's directories under --root-dir.
 *
 * It owns: making the directories under --root-dir, reading /proc/swaps, reading and writing /proc/sys tunables, writing
 * /proc/self/oom_score_adj, setting RLIMIT_NOFILE through util-linux prlimit, and holding the lock
 * file through a util-linux flock helper. Every path and command is injectable so tests run on
 * temporary directories.
 *
 * It must not: exit the process (contention calls the injected onContention; the composition root
 * decides to exit), parse flags or the configuration file (it receives resolved values), use a
 * shell (commands run through execFile/spawn with argument lists), or touch any other host state.
 *
 * Lock-file protocol. The kubelet takes an exclusive flock(2) on the lock file, blocking until it
 * gets it, and with --exit-on-lock-contention exits when another process wants the lock. Node.js
 * has neither flock(2) nor inotify open events, so:
 *  1. Holding. The lock is held by a helper child, `flock --exclusive --close <file> sh -c 'echo
 *     acquired; exec cat >/dev/null'`, whose stdin is a pipe from the agent. flock(1) takes the
 *     lock (only flock(1) holds it: --close keeps the descriptor from the shell), the shell reports
 *     "acquired" and becomes `cat`, which reads the pipe until EOF. When the agent ends, even by
 *     SIGKILL, the pipe closes, cat exits, flock(1) exits and the kernel releases the lock.
 *     release() closes the pipe on purpose. The helper runs in its own process group so that a
 *     terminal's Ctrl-C reaches only the agent.
 *  2. Asking. Before blocking, an acquirer creates the file if needed and touches it (fs.utimes:
 *     a new mtime and ctime). That touch is the contention signal. Upstream's signal is the
 *     inotify IN_OPEN of the file by the contender, which Node.js cannot observe; any agent
 *     following this protocol (or `touch <file>` by hand) asks the holder to go.
 *  3. Yielding. With --exit-on-lock-contention, the holder watches the file (fs.watch) once it
 *     has the lock and calls onContention() once when the file's inode, size, mtime or ctime
 *     change from the state recorded right after its own touch (so its own actions never count,
 *     and a contender that touched while it was waiting does), or when the file is deleted or
 *     the helper dies. Neither the helper nor the watch keeps the event loop alive.
 */
import { OrchError } from '../../api/errors.js';
import {
  applyKernelTunables,
  applyOomScoreAdj,
  checkSwap,
  type KernelTunablesSummary,
  type OomScoreAdjResult,
} from './kernel.js';
import { ensureDataDirs } from './data-dirs.js';
import { acquireLockFile, type LockFileHandle } from './lock-file.js';
import { raiseOpenFileLimit, type OpenFileLimitResult } from './open-files.js';
import { StartupErrorCode, type StartupLog } from './types.js';

export { StartupErrorCode, type StartupLog } from './types.js';
export {
  KERNEL_TUNABLES,
  KernelTunablesError,
  applyKernelTunables,
  applyOomScoreAdj,
  checkSwap,
  type ApplyKernelTunablesOptions,
  type ApplyOomScoreAdjOptions,
  type CheckSwapOptions,
  type KernelTunable,
  type KernelTunablesSummary,
  type OomScoreAdjResult,
  type TunableChange,
  type TunableDifference,
  type TunableFailure,
} from './kernel.js';
export { raiseOpenFileLimit, readOpenFileLimits, type OpenFileLimitResult, type OpenFileLimits, type RaiseOpenFileLimitOptions } from './open-files.js';
export { acquireLockFile, type AcquireLockFileOptions, type LockFileHandle } from './lock-file.js';
export { DATA_DIRS, ensureDataDirs } from './data-dirs.js';

export interface StartupChecksOptions {
  /** --lock-file; undefined or '' means no lock file. */
  readonly lockFile?: string | undefined;
  /** --exit-on-lock-contention; needs lockFile. */
  readonly exitOnLockContention: boolean;
  /** Called when another process wants the lock (see acquireLockFile); typically exits. */
  readonly onLockContention: () => void;
  readonly failSwapOn: boolean;
  readonly protectKernelDefaults: boolean;
  readonly oomScoreAdj: number;
  readonly maxOpenFiles: number;
  /** --root-dir: made with its subdirectories (ensureDataDirs) after the checks. */
  readonly rootDir?: string | undefined;
  readonly log: StartupLog;
  /** Host paths and commands, for tests; the defaults are the real ones. */
  readonly host?: StartupHost | undefined;
}

export interface StartupHost {
  readonly procSwapsPath?: string | undefined;
  readonly procSysRoot?: string | undefined;
  readonly procSelf?: string | undefined;
  /** Root of the proc tree where <pid>/limits is read. */
  readonly procRoot?: string | undefined;
  readonly pid?: number | undefined;
  readonly prlimitCommand?: string | undefined;
  readonly flockCommand?: string | undefined;
}

export interface StartupResult {
  /** The held lock, or undefined without a lock file. Release it on shutdown. */
  readonly lock: LockFileHandle | undefined;
  readonly kernelTunables: KernelTunablesSummary;
  readonly oomScoreAdj: OomScoreAdjResult;
  readonly openFiles: OpenFileLimitResult;
}

/**
 * Runs the startup checks in the kubelet's order: lock file (blocks while another process holds
 * it), swap, kernel tunables, OOM score adjustment, open-file limit. Throws
 * STARTUP_LOCK_FILE_REQUIRED (invalid) for --exit-on-lock-contention without --lock-file, and
 * whatever the first failing check throws (STARTUP_LOCK_FILE, STARTUP_SWAP_ON,
 * STARTUP_SWAP_UNREADABLE, STARTUP_KERNEL_TUNABLES, STARTUP_OOM_SCORE_ADJ_INVALID,
 * STARTUP_MAX_OPEN_FILES_INVALID, STARTUP_DATA_DIRS); a lock taken before the failure is released first.
 * Not idempotent: call it once per process.
 */
export async function runStartupChecks(options: StartupChecksOptions): Promise<StartupResult> {
  const { log, host = {} } = options;
  const lockPath = options.lockFile ?? '';
  if (options.exitOnLockContention && lockPath === '') {
    throw new OrchError(StartupErrorCode.LockFileRequired, 'invalid', 'cannot exit on lock-file contention: no lock file is set (--lock-file)', {
      subject: '--exit-on-lock-contention',
    });
  }
  const lock =
    lockPath === ''
      ? undefined
      : await acquireLockFile({
          path: lockPath,
          exitOnLockContention: options.exitOnLockContention,
          onContention: options.onLockContention,
          log,
          flockCommand: host.flockCommand,
        });
  try {
    await checkSwap({ failSwapOn: options.failSwapOn, procSwapsPath: host.procSwapsPath });
    const kernelTunables = await applyKernelTunables({ protectKernelDefaults: options.protectKernelDefaults, procSysRoot: host.procSysRoot, log });
    const oomScoreAdj = await applyOomScoreAdj({ value: options.oomScoreAdj, procSelf: host.procSelf, log });
    const openFiles = await raiseOpenFileLimit({
      maxOpenFiles: options.maxOpenFiles,
      pid: host.pid,
      prlimitCommand: host.prlimitCommand,
      procRoot: host.procRoot,
      log,
    });
    if (options.rootDir !== undefined) await ensureDataDirs(options.rootDir);
    return { lock, kernelTunables, oomScoreAdj, openFiles };
  } catch (err) {
    await lock?.release();
    throw err;
  }
}

