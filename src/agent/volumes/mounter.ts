/**
 * mount(8) and umount(8) through execFile (argument lists, never a shell). Node.js has no
 * umount2(2), so a busy target is recognised by umount's message ("target is busy").
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { OrchError, messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import { VOLUME_MOUNT_FAILED } from './types.js';

const execFileAsync = promisify(execFile);

/** The volume manager's defaults for a busy target: retried every 100 ms for 10 s, then detached lazily. */
export const DEFAULT_UNMOUNT_TIMEOUT_MS = 10_000;
export const DEFAULT_UNMOUNT_RETRY_MS = 100;

export interface UnmountOptions {
  readonly logger: Logger;
  /** How long a busy target is retried before it is detached lazily (umount -l). */
  readonly timeoutMs: number;
  readonly retryIntervalMs: number;
  /** The deadline and the pauses between retries. */
  readonly clock: Clock;
}

function stderrOf(err: unknown): string {
  if (err instanceof Error && 'stderr' in err && typeof err.stderr === 'string' && err.stderr !== '') return err.stderr.trim();
  return messageOf(err);
}

/**
 * Mounts a tmpfs on `dir`, with `size=<bytes>` when `sizeBytes` is given and positive
 * (without it the kernel's default, half of the RAM), and the `extra` options (e.g. `mode=0750`).
 * Throws `VOLUME_MOUNT_FAILED`.
 */
export async function mountTmpfs(dir: string, sizeBytes: number | undefined, subject: string, extra: readonly string[] = []): Promise<void> {
  const all = [...(sizeBytes !== undefined && sizeBytes > 0 ? [`size=${sizeBytes}`] : []), ...extra];
  const options = all.length > 0 ? ['-o', all.join(',')] : [];
  try {
    await execFileAsync('mount', ['-t', 'tmpfs', ...options, 'tmpfs', dir]);
  } catch (err) {
    throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `cannot mount a tmpfs on ${dir}: ${stderrOf(err)}`, { subject, cause: err });
  }
}

/**
 * Unmounts the filesystem mounted on `dir`, retrying while it is busy until the deadline, then
 * detaching it lazily (`umount -l`) as the last resort. "not mounted" counts as done. Blocks for
 * at most about `timeoutMs`. Throws `VOLUME_MOUNT_FAILED` when umount fails otherwise.
 */
export async function unmount(dir: string, options: UnmountOptions): Promise<void> {
  const { clock } = options;
  const deadline = clock.now() + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await execFileAsync('umount', [dir]);
      return;
    } catch (err) {
      const message = stderrOf(err);
      if (/not mounted/i.test(message)) return;
      if (!/busy/i.test(message)) {
        throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `cannot unmount ${dir}: ${message}`, { subject: dir, cause: err });
      }
      if (clock.now() >= deadline) break;
      options.logger.warn('mount point busy; retrying unmount', { path: dir, attempt });
      await sleepKeepingAlive(clock, options.retryIntervalMs);
    }
  }
  options.logger.warn('mount point still busy at the deadline; detaching it lazily (umount -l)', { path: dir, timeoutMs: options.timeoutMs });
  try {
    await execFileAsync('umount', ['-l', dir]);
  } catch (err) {
    throw new OrchError(VOLUME_MOUNT_FAILED, 'internal', `cannot unmount ${dir} lazily: ${stderrOf(err)}`, { subject: dir, cause: err });
  }
}
