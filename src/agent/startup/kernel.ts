/**
 * The checks of kernel state: swap (/proc/swaps), the kernel tunables the agent depends on
 * (/proc/sys) and the agent's own OOM score adjustment (/proc/self/oom_score_adj).
 */
import { constants } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { OrchError, messageOf } from '../../api/errors.js';
import { StartupErrorCode, errnoOf, type StartupLog } from './types.js';

/** Open for writing an existing file only: /proc files are never created, and fakes are truncated. */
const WRITE_EXISTING = constants.O_WRONLY | constants.O_TRUNC;

export interface CheckSwapOptions {
  /** --fail-swap-on / failSwapOn: refuse to start when swap is on. */
  readonly failSwapOn: boolean;
  /** The swap table (default /proc/swaps). A missing file means no swap. */
  readonly procSwapsPath?: string | undefined;
}

/**
 * Throws STARTUP_SWAP_ON (invalid, subject --fail-swap-on) when failSwapOn is true and
 * /proc/swaps lists a device, naming every device. Does nothing when failSwapOn is false.
 * Throws STARTUP_SWAP_UNREADABLE (unavailable) when the file exists but cannot be read.
 * Reads only; idempotent.
 */
export async function checkSwap(options: CheckSwapOptions): Promise<void> {
  if (!options.failSwapOn) return;
  const path = options.procSwapsPath ?? '/proc/swaps';
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    // Kernels without swap support have no /proc/swaps: there is no swap to refuse.
    if (errnoOf(err) === 'ENOENT') return;
    throw new OrchError(StartupErrorCode.SwapUnreadable, 'unavailable', `cannot read ${path} to check for swap: ${messageOf(err)}`, {
      subject: path,
      cause: err,
    });
  }
  const devices = parseSwapDevices(text);
  if (devices.length === 0) return;
  throw new OrchError(
    StartupErrorCode.SwapOn,
    'invalid',
    `swap is on (${devices.join(', ')}, listed in ${path}) and failSwapOn is true: ` +
      'turn swap off (swapoff -a) or set failSwapOn: false in the configuration file (--fail-swap-on=false)',
    { subject: '--fail-swap-on' },
  );
}

/** The device names of a /proc/swaps table: the first field of every line after the header. */
export function parseSwapDevices(text: string): string[] {
  const devices: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    const field = line.trim().split(/\s+/)[0];
    // The kernel escapes spaces, tabs, newlines and backslashes in names as octal (\040).
    if (field) devices.push(field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  }
  return devices;
}

/** A kernel tunable the agent depends on, as a path under /proc/sys, with the value it needs. */
export interface KernelTunable {
  readonly key: string;
  readonly expected: number;
}

/** The kubelet's tunables: overcommit so that limits decide, and panic (then reboot) on oops. */
export const KERNEL_TUNABLES: readonly KernelTunable[] = [
  { key: 'vm/overcommit_memory', expected: 1 },
  { key: 'vm/panic_on_oom', expected: 0 },
  { key: 'kernel/panic', expected: 10 },
  { key: 'kernel/panic_on_oops', expected: 1 },
  { key: 'kernel/keys/root_maxkeys', expected: 1_000_000 },
  { key: 'kernel/keys/root_maxbytes', expected: 25_000_000 },
];

export interface ApplyKernelTunablesOptions {
  /** --protect-kernel-defaults: true = error when a tunable differs; false = set it. */
  readonly protectKernelDefaults: boolean;
  /** Root of the sysctl tree (default /proc/sys). */
  readonly procSysRoot?: string | undefined;
  readonly log: StartupLog;
}

/** A tunable that was written, with the value it had before. */
export interface TunableChange {
  /** The sysctl name, e.g. vm.overcommit_memory. */
  readonly name: string;
  readonly from: string;
  readonly to: number;
}

/** A tunable that differs (or could not be read) and was left as it is; a warning says why. */
export interface TunableFailure {
  readonly name: string;
  readonly error: string;
}

/** A tunable found wrong with protectKernelDefaults: its actual value, or why it cannot be read. */
export interface TunableDifference {
  readonly name: string;
  readonly path: string;
  readonly expected: number;
  /** The value read, or undefined when the read failed (see readError). */
  readonly actual: string | undefined;
  readonly readError?: string;
}

/** STARTUP_KERNEL_TUNABLES: every tunable that differs, in one error (category invalid). */
export class KernelTunablesError extends OrchError {
  readonly differences: readonly TunableDifference[];

  constructor(differences: readonly TunableDifference[]) {
    const lines = differences.map((d) =>
      d.actual === undefined
        ? `${d.name}: ${d.readError ?? 'cannot read'}; expected value ${d.expected}`
        : `${d.name}: actual value ${d.actual}, expected value ${d.expected}`,
    );
    super(
      StartupErrorCode.KernelTunables,
      'invalid',
      `protectKernelDefaults (--protect-kernel-defaults) is true and ${differences.length} kernel tunable(s) differ from the values ` +
        `the agent needs; set them (sysctl -w) or set protectKernelDefaults: false to let the agent set them:\n` +
        lines.map((line) => `  - ${line}`).join('\n'),
      { subject: '--protect-kernel-defaults' },
    );
    this.name = 'KernelTunablesError';
    this.differences = differences;
  }
}

export interface KernelTunablesSummary {
  /** Tunables written (only when protectKernelDefaults is false). */
  readonly changed: readonly TunableChange[];
  /** Sysctl names of tunables that already had the expected value. */
  readonly unchanged: readonly string[];
  /** Tunables that could not be read or written; each was logged as a warning. */
  readonly failed: readonly TunableFailure[];
}

/**
 * Brings the kernel tunables to the kubelet's values. With protectKernelDefaults, reads them all
 * and throws ONE STARTUP_KERNEL_TUNABLES error (invalid, a KernelTunablesError) listing every
 * tunable that differs or cannot be read, with actual and expected values; writes nothing.
 * Without it, writes each differing value; a failed read or write (read-only /proc/sys in a
 * container) is a warning, not an error. Idempotent; never throws in that mode.
 */
export async function applyKernelTunables(options: ApplyKernelTunablesOptions): Promise<KernelTunablesSummary> {
  const root = options.procSysRoot ?? '/proc/sys';
  const changed: TunableChange[] = [];
  const unchanged: string[] = [];
  const failed: TunableFailure[] = [];
  const differences: TunableDifference[] = [];
  for (const { key, expected } of KERNEL_TUNABLES) {
    const name = key.replaceAll('/', '.');
    const path = join(root, key);
    let actual: string;
    try {
      actual = (await readFile(path, 'utf8')).trim();
    } catch (err) {
      const error = `cannot read ${path}: ${messageOf(err)}`;
      if (options.protectKernelDefaults) {
        differences.push({ name, path, expected, actual: undefined, readError: error });
      } else {
        options.log.warn(`kernel tunable ${name} left unchecked: ${error}`);
        failed.push({ name, error });
      }
      continue;
    }
    if (Number(actual) === expected && actual !== '') {
      unchanged.push(name);
      continue;
    }
    if (options.protectKernelDefaults) {
      differences.push({ name, path, expected, actual });
      continue;
    }
    try {
      await writeFile(path, `${expected}\n`, { flag: WRITE_EXISTING });
      options.log.info(`kernel tunable ${name} set to ${expected} (was ${actual})`);
      changed.push({ name, from: actual, to: expected });
    } catch (err) {
      const error = `cannot write ${path}: ${messageOf(err)}`;
      options.log.warn(`kernel tunable ${name} is ${actual}, expected ${expected}, and could not be set (${error}); continuing`);
      failed.push({ name, error });
    }
  }
  if (differences.length > 0) throw new KernelTunablesError(differences);
  return { changed, unchanged, failed };
}

export interface ApplyOomScoreAdjOptions {
  /** --oom-score-adj / oomScoreAdj, in [-1000, 1000]. */
  readonly value: number;
  /** The agent's /proc/<pid> directory (default /proc/self). */
  readonly procSelf?: string | undefined;
  readonly log: StartupLog;
}

export interface OomScoreAdjResult {
  /** Whether `value` was written. */
  readonly applied: boolean;
  /** The adjustment in force afterwards, or undefined when it cannot be read. */
  readonly current: number | undefined;
}

/**
 * Writes `value` to oom_score_adj. Throws STARTUP_OOM_SCORE_ADJ_INVALID (invalid, subject
 * --oom-score-adj) outside [-1000, 1000]. Lowering the adjustment needs CAP_SYS_RESOURCE; without
 * it (EACCES/EPERM) this logs one warning explaining so and continues, as does any other write
 * failure (the kubelet only logs it too). Idempotent.
 */
export async function applyOomScoreAdj(options: ApplyOomScoreAdjOptions): Promise<OomScoreAdjResult> {
  const { value, log } = options;
  if (!Number.isInteger(value) || value < -1000 || value > 1000) {
    throw new OrchError(StartupErrorCode.OomScoreAdjInvalid, 'invalid', `oomScoreAdj must be an integer in [-1000, 1000], got ${value}`, {
      subject: '--oom-score-adj',
    });
  }
  const path = join(options.procSelf ?? '/proc/self', 'oom_score_adj');
  try {
    await writeFile(path, `${value}\n`, { flag: WRITE_EXISTING });
    log.info(`oom_score_adj set to ${value}`);
    return { applied: true, current: value };
  } catch (err) {
    const read = await readOomScoreAdj(path);
    const current = typeof read === 'number' ? read : undefined;
    const code = errnoOf(err);
    if (code === 'EACCES' || code === 'EPERM') {
      log.warn(
        `cannot set oom_score_adj to ${value} (${code} writing ${path}): lowering a process's OOM score adjustment ` +
          `needs the CAP_SYS_RESOURCE capability, which this process lacks (root in a container often does); ` +
          `the agent continues with oom_score_adj ${read} and is as likely as its pods to be killed on OOM`,
      );
    } else {
      log.warn(`cannot set oom_score_adj to ${value} (${messageOf(err)}); continuing with oom_score_adj ${read}`);
    }
    return { applied: false, current };
  }
}

/** The adjustment in force, or a description of why it cannot be read (for the warning). */
async function readOomScoreAdj(path: string): Promise<number | string> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    const parsed = Number(text);
    return Number.isInteger(parsed) && text !== '' ? parsed : `unknown (${path} holds '${text}')`;
  } catch (err) {
    return `unknown (cannot read ${path}: ${messageOf(err)})`;
  }
}
