/**
 * The agent's open-file limit (RLIMIT_NOFILE). Node.js has no setrlimit, so the limit is set from
 * outside with util-linux `prlimit --pid <pid> --nofile=<soft>:<hard>` (prlimit(2) on our pid),
 * and read back from /proc/<pid>/limits.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { OrchError, messageOf } from '../../api/errors.js';
import { StartupErrorCode, type StartupLog } from './types.js';

/** A prlimit run never takes long; past this it is stuck and counts as failed. */
const PRLIMIT_TIMEOUT_MS = 10_000;

export interface RaiseOpenFileLimitOptions {
  /** --max-open-files / maxOpenFiles: the soft and hard limit wanted. 0 leaves the limits as they are. */
  readonly maxOpenFiles: number;
  /** The process whose limit is set (default: this process). */
  readonly pid?: number | undefined;
  /** The util-linux prlimit command, a name looked up in PATH or a path (default prlimit). */
  readonly prlimitCommand?: string | undefined;
  /** Root of the proc tree holding <pid>/limits (default /proc). */
  readonly procRoot?: string | undefined;
  readonly log: StartupLog;
}

/** Soft and hard RLIMIT_NOFILE; Infinity stands for "unlimited". */
export interface OpenFileLimits {
  readonly soft: number;
  readonly hard: number;
}

export interface OpenFileLimitResult {
  /**
   * raised: both limits set to maxOpenFiles; soft-only: the hard limit could not be raised, the
   * soft limit was raised to min(maxOpenFiles, hard); unchanged: nothing was set (see the warning).
   */
  readonly outcome: 'raised' | 'soft-only' | 'unchanged';
  /** The limits in force afterwards, or undefined when /proc/<pid>/limits cannot be read. */
  readonly limits: OpenFileLimits | undefined;
}

/**
 * Sets RLIMIT_NOFILE of `pid` to maxOpenFiles (soft and hard), as the kubelet does. Raising the
 * hard limit needs CAP_SYS_RESOURCE: when that fails the soft limit is set to
 * min(maxOpenFiles, hard) and a warning says so. A missing prlimit command or any other failure is
 * a warning too (the kubelet only logs this step). Throws only STARTUP_MAX_OPEN_FILES_INVALID
 * (invalid) for a negative or non-integer value. Runs prlimit once or twice; idempotent.
 */
export async function raiseOpenFileLimit(options: RaiseOpenFileLimitOptions): Promise<OpenFileLimitResult> {
  const { maxOpenFiles: wanted, log } = options;
  if (!Number.isSafeInteger(wanted) || wanted < 0) {
    throw new OrchError(StartupErrorCode.MaxOpenFilesInvalid, 'invalid', `maxOpenFiles must be a non-negative integer, got ${wanted}`, {
      subject: '--max-open-files',
    });
  }
  const pid = options.pid ?? process.pid;
  const command = options.prlimitCommand ?? 'prlimit';
  const limitsPath = join(options.procRoot ?? '/proc', String(pid), 'limits');
  const before = await readOpenFileLimits(limitsPath);
  if (wanted === 0) {
    log.info(`maxOpenFiles is 0: the open-file limit stays ${describe(before)}`);
    return { outcome: 'unchanged', limits: limitsOrUndefined(before) };
  }

  const first = await runPrlimit(command, pid, `${wanted}:${wanted}`);
  if (first.kind === 'ok') {
    log.info(`open-file limit set to ${wanted} (was ${describe(before)})`);
    return { outcome: 'raised', limits: limitsOrUndefined(await readOpenFileLimits(limitsPath)) };
  }
  if (first.kind === 'missing') {
    log.warn(
      `cannot set the open-file limit to ${wanted}: the command '${command}' was not found (${first.error}); ` +
        `prlimit is part of util-linux; the limit stays ${describe(before)}`,
    );
    return { outcome: 'unchanged', limits: limitsOrUndefined(before) };
  }
  // Lowering a limit, or raising the soft one up to the hard one, is always allowed: only raising
  // the hard limit above its value (EPERM without CAP_SYS_RESOURCE) is worth a second try.
  if (typeof before === 'string' || wanted <= before.hard) {
    log.warn(`cannot set the open-file limit to ${wanted} (${command}: ${first.error}); the limit stays ${describe(before)}`);
    return { outcome: 'unchanged', limits: limitsOrUndefined(before) };
  }
  const soft = Math.min(wanted, before.hard);
  const second = await runPrlimit(command, pid, `${soft}:`);
  if (second.kind !== 'ok') {
    log.warn(
      `cannot set the open-file limit to ${wanted} (${command}: ${first.error}) nor its soft limit to ${soft} ` +
        `(${second.error}); the limit stays ${describe(before)}`,
    );
    return { outcome: 'unchanged', limits: limitsOrUndefined(before) };
  }
  const after = await readOpenFileLimits(limitsPath);
  log.warn(
    `cannot raise the hard open-file limit to ${wanted} (${command}: ${first.error}): raising a hard limit needs ` +
      `CAP_SYS_RESOURCE, which this process lacks; the soft limit was raised to ${soft} instead, the limit is now ${describe(after)}`,
  );
  return { outcome: 'soft-only', limits: limitsOrUndefined(after) };
}

/**
 * The "Max open files" line of a /proc/<pid>/limits file, or a description of why it cannot be
 * read (kept for warnings rather than thrown: the limits only inform the messages and the result).
 */
export async function readOpenFileLimits(path: string): Promise<OpenFileLimits | string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return `unknown (cannot read ${path}: ${messageOf(err)})`;
  }
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  const soft = parseLimit(match?.[1]);
  const hard = parseLimit(match?.[2]);
  if (soft === undefined || hard === undefined) return `unknown (no "Max open files" line in ${path})`;
  return { soft, hard };
}

function parseLimit(field: string | undefined): number | undefined {
  if (field === 'unlimited') return Number.POSITIVE_INFINITY;
  const value = Number(field);
  return field !== undefined && Number.isSafeInteger(value) ? value : undefined;
}

function describe(limits: OpenFileLimits | string): string {
  if (typeof limits === 'string') return limits;
  const show = (n: number): string => (n === Number.POSITIVE_INFINITY ? 'unlimited' : String(n));
  return `soft ${show(limits.soft)}, hard ${show(limits.hard)}`;
}

function limitsOrUndefined(limits: OpenFileLimits | string): OpenFileLimits | undefined {
  return typeof limits === 'string' ? undefined : limits;
}

type PrlimitRun = { readonly kind: 'ok' } | { readonly kind: 'missing' | 'failed'; readonly error: string };

/** Runs `prlimit --pid <pid> --nofile=<value>` without a shell; never rejects. */
function runPrlimit(command: string, pid: number, value: string): Promise<PrlimitRun> {
  return new Promise((resolve) => {
    execFile(
      command,
      ['--pid', String(pid), `--nofile=${value}`],
      // LC_ALL=C keeps prlimit's error text in English for the warnings.
      { timeout: PRLIMIT_TIMEOUT_MS, env: { ...process.env, LC_ALL: 'C' } },
      (err, _stdout, stderr) => {
        if (err === null) resolve({ kind: 'ok' });
        else if (err.code === 'ENOENT') resolve({ kind: 'missing', error: err.message });
        else resolve({ kind: 'failed', error: stderr.trim() || err.message });
      },
    );
  });
}
