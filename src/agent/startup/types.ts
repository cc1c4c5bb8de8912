/**
 * What the startup checks share: the tiny log they report through, their stable error codes and
 * the helper that reads the errno code of a failed system call.
 */

/**
 * Where the startup checks report what they did and what they could not do. A stand-in until the
 * project's logger exists; the composition root adapts its logger to it.
 */
export interface StartupLog {
  /** Something did not work as configured, but the agent can run (e.g. a read-only /proc/sys). */
  warn(message: string): void;
  /** What the checks changed or found (a tunable set, the lock acquired). */
  info(message: string): void;
}

/** The error codes of this module, for the project's registry of codes. */
export const StartupErrorCode = {
  /** Swap is on and failSwapOn is true (category invalid). */
  SwapOn: 'STARTUP_SWAP_ON',
  /** /proc/swaps exists but cannot be read (category unavailable). */
  SwapUnreadable: 'STARTUP_SWAP_UNREADABLE',
  /** protectKernelDefaults is true and tunables differ or cannot be read; one error lists them all (invalid). */
  KernelTunables: 'STARTUP_KERNEL_TUNABLES',
  /** oomScoreAdj is not an integer in [-1000, 1000] (invalid). */
  OomScoreAdjInvalid: 'STARTUP_OOM_SCORE_ADJ_INVALID',
  /** maxOpenFiles is not a non-negative integer (invalid). */
  MaxOpenFilesInvalid: 'STARTUP_MAX_OPEN_FILES_INVALID',
  /** exitOnLockContention is set without a lock file (invalid). */
  LockFileRequired: 'STARTUP_LOCK_FILE_REQUIRED',
  /** The lock file cannot be created or locked, or the flock helper fails (unavailable). */
  LockFile: 'STARTUP_LOCK_FILE',
  /** A directory under --root-dir cannot be created (unavailable). */
  DataDirs: 'STARTUP_DATA_DIRS',
} as const;

export type StartupErrorCode = (typeof StartupErrorCode)[keyof typeof StartupErrorCode];

/** The errno code (`ENOENT`, `EACCES`, ...) of a failed system call, or undefined. */
export function errnoOf(err: unknown): string | undefined {
  if (err instanceof Error && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}
