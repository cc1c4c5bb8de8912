/**
 * One call of a FlexVolume driver, as upstream's DriverCall (pkg/volume/flexvolume/driver-call.go):
 * `<executable> <call> <args...>`, whose reply on stdout is one JSON object
 * `{"status": "Success" | "Failure" | "Not supported", "message": ..., "device": ...,
 * "volumeName": ..., "attached": ..., "capabilities": {...}}`.
 *
 * | outcome                                   | result                                          |
 * |-------------------------------------------|-------------------------------------------------|
 * | exit 0, status Success                    | the reply                                       |
 * | status "Not supported" (any exit code)    | 'not-supported'; the call is remembered as such |
 * |                                           | and not run again for this driver (as upstream) |
 * | status Failure, or non-zero exit          | FLEXVOLUME_CALL_FAILED with the driver's message|
 * | not the JSON object, wrong types, unknown | FLEXVOLUME_OUTPUT_INVALID quoting the output    |
 * | status                                    |                                                 |
 * | killed at the time limit                  | FLEXVOLUME_CALL_TIMEOUT                         |
 *
 * Only stdout is parsed (upstream parses stdout and stderr together, so a driver that logs to
 * stderr breaks there); stderr is quoted in errors. Unknown keys of the reply are ignored, as
 * Go's decoder does; the known ones must have their types.
 */
import { execFile } from 'node:child_process';

import { OrchError } from '../../api/errors.js';
import { FLEXVOLUME_CALL_FAILED, FLEXVOLUME_CALL_TIMEOUT, FLEXVOLUME_OUTPUT_INVALID } from './errors.js';

/** What running a driver executable gave. */
export interface FlexExecResult {
  /** null when the process did not exit by itself (killed, or never started). */
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** Set when the executable could not be started (ENOENT, EACCES, ...). */
  readonly spawnError?: string;
}

/** Runs `file` with `args` (never through a shell), killing it after `timeoutMs`. Never rejects. */
export type FlexExec = (file: string, args: readonly string[], options: { readonly timeoutMs: number }) => Promise<FlexExecResult>;

/** The most a driver may print before it is killed (a driver's reply is a few hundred bytes). */
const MAX_OUTPUT_BYTES = 1 << 20;

/** The real runner: execFile, SIGKILL at the time limit. */
export const execDriver: FlexExec = (file, args, options) =>
  new Promise((resolve) => {
    execFile(file, [...args], { timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err === null) {
        resolve({ exitCode: 0, stdout, stderr, timedOut: false });
        return;
      }
      const code = (err as { code?: unknown }).code;
      const killed = err.killed === true && err.signal === 'SIGKILL';
      if (typeof code === 'string' && !killed) {
        resolve({ exitCode: null, stdout, stderr, timedOut: false, spawnError: `${code}: ${err.message}` });
        return;
      }
      resolve({ exitCode: typeof code === 'number' ? code : null, stdout, stderr, timedOut: killed });
    });
  });

export interface DriverCapabilities {
  readonly attach: boolean;
  readonly selinuxRelabel: boolean;
  readonly supportsMetrics: boolean;
  readonly fsGroup: boolean;
  readonly requiresFSResize: boolean;
}

/** Upstream's defaults: a driver that says nothing attaches, relabels, takes fsGroup and resizes. */
export const DEFAULT_CAPABILITIES: DriverCapabilities = Object.freeze({
  attach: true, selinuxRelabel: true, supportsMetrics: false, fsGroup: true, requiresFSResize: true,
});

export type DriverStatusName = 'Success' | 'Failure' | 'Not supported';

export interface DriverReply {
  readonly status: DriverStatusName;
  readonly message: string;
  /** attach, waitforattach: the device path. */
  readonly device: string;
  readonly volumeName: string;
  /** isattached */
  readonly attached: boolean;
  /** init: the defaults overlaid with what the driver said. */
  readonly capabilities: DriverCapabilities;
}

const STATUSES: readonly string[] = ['Success', 'Failure', 'Not supported'];
const CAPABILITY_KEYS = ['attach', 'selinuxRelabel', 'supportsMetrics', 'fsGroup', 'requiresFSResize'] as const;

function quoteOutput(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(no output)';
  return JSON.stringify(trimmed.length > 200 ? `${trimmed.slice(0, 200)}...` : trimmed);
}

/** Parses a reply; returns the reason when it is not one. */
export function parseDriverReply(output: string): DriverReply | string {
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    return `the output is not JSON: ${quoteOutput(output)}`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `the output is not a JSON object: ${quoteOutput(output)}`;
  const o = value as Record<string, unknown>;
  const str = (key: string): string | undefined => {
    const v = o[key];
    return v === undefined || v === null || typeof v === 'string' ? (v ?? '') : undefined;
  };
  const status = o['status'];
  if (typeof status !== 'string' || !STATUSES.includes(status)) {
    return `"status" is ${status === undefined ? 'missing' : JSON.stringify(status)}, not "Success", "Failure" or "Not supported": ${quoteOutput(output)}`;
  }
  const message = str('message');
  const device = str('device');
  const volumeName = str('volumeName');
  if (message === undefined || device === undefined || volumeName === undefined) return `"message", "device" and "volumeName" must be strings: ${quoteOutput(output)}`;
  const attached = o['attached'] ?? false;
  if (typeof attached !== 'boolean') return `"attached" must be a boolean: ${quoteOutput(output)}`;
  // Go's decoder matches keys without regard to case: upstream's field is "Capabilities".
  const caps = o['capabilities'] ?? o['Capabilities'];
  const capabilities: Record<string, boolean> = { ...DEFAULT_CAPABILITIES };
  if (caps !== undefined && caps !== null) {
    if (typeof caps !== 'object' || Array.isArray(caps)) return `"capabilities" must be an object: ${quoteOutput(output)}`;
    for (const key of CAPABILITY_KEYS) {
      const v = (caps as Record<string, unknown>)[key];
      if (v === undefined) continue;
      if (typeof v !== 'boolean') return `capability "${key}" must be a boolean: ${quoteOutput(output)}`;
      capabilities[key] = v;
    }
  }
  return { status: status as DriverStatusName, message, device, volumeName, attached, capabilities: capabilities as unknown as DriverCapabilities };
}

/** A driver as the caller sees it: its name, its executable and the calls it said it does not support. */
export interface DriverHandle {
  /** `<vendor>/<driver>`, as pods name it. */
  readonly name: string;
  readonly execPath: string;
  readonly unsupported: Set<string>;
}

export interface CallOptions {
  readonly exec: FlexExec;
  readonly timeoutMs: number;
  /** Prefix of error messages, e.g. `volume "data": ` (may be ''). */
  readonly context: string;
  readonly subject?: string;
}

/** Runs one call; 'not-supported' when the driver said so (now or before). Throws the codes in the table above. */
export async function callDriver(driver: DriverHandle, call: string, args: readonly string[], options: CallOptions): Promise<DriverReply | 'not-supported'> {
  if (driver.unsupported.has(call)) return 'not-supported';
  const fail = (code: string, category: 'unavailable' | 'timeout' | 'invalid', what: string): OrchError =>
    new OrchError(code, category, `${options.context}FlexVolume driver ${driver.name}: ${call} failed: ${what}`, {
      subject: options.subject ?? driver.execPath,
    });
  const result = await options.exec(driver.execPath, [call, ...args], { timeoutMs: options.timeoutMs });
  if (result.timedOut) throw fail(FLEXVOLUME_CALL_TIMEOUT, 'timeout', `no answer within ${String(options.timeoutMs / 1000)} s (killed)`);
  if (result.spawnError !== undefined) throw fail(FLEXVOLUME_CALL_FAILED, 'unavailable', `cannot run ${driver.execPath}: ${result.spawnError}`);
  const reply = parseDriverReply(result.stdout);
  const stderr = result.stderr.trim() === '' ? '' : `; stderr: ${quoteOutput(result.stderr)}`;
  if (typeof reply !== 'string' && reply.status === 'Not supported') {
    driver.unsupported.add(call);
    return 'not-supported';
  }
  if (result.exitCode !== 0) {
    const why = typeof reply === 'string' ? `output: ${quoteOutput(result.stdout)}` : `status ${reply.status}${reply.message === '' ? '' : `: ${reply.message}`}`;
    throw fail(FLEXVOLUME_CALL_FAILED, 'unavailable', `exit code ${result.exitCode === null ? 'none (killed)' : String(result.exitCode)}, ${why}${stderr}`);
  }
  if (typeof reply === 'string') throw fail(FLEXVOLUME_OUTPUT_INVALID, 'invalid', `${reply}${stderr}`);
  if (reply.status === 'Failure') throw fail(FLEXVOLUME_CALL_FAILED, 'unavailable', `status Failure${reply.message === '' ? '' : `: ${reply.message}`}`);
  return reply;
}
