/**
 * The FlexVolume module's test-only entry: FakeFlexExec, a driver in memory behind the FlexExec
 * seam (no process runs), and FakeMountOps. Production code must not import it.
 */
import { readFile, writeFile } from 'node:fs/promises';

import type { FlexExec, FlexExecResult } from './driver-call.js';
import type { MountOps } from './mounter.js';

/** What a fake driver does for one call: its reply, or a raw result (exit code, garbage, timeout). */
export type FakeCallHandler = (args: readonly string[]) => Promise<Partial<FlexExecResult> | Record<string, unknown>> | Partial<FlexExecResult> | Record<string, unknown>;

/** The reply of a fake call as the raw result: an object with `stdout` is taken as it is, anything else is printed as JSON. */
function toResult(value: Partial<FlexExecResult> | Record<string, unknown>): FlexExecResult {
  if ('stdout' in value || 'timedOut' in value || 'spawnError' in value || 'exitCode' in value) {
    const v = value as Partial<FlexExecResult>;
    return { exitCode: v.exitCode ?? 0, stdout: v.stdout ?? '', stderr: v.stderr ?? '', timedOut: v.timedOut ?? false, ...(v.spawnError === undefined ? {} : { spawnError: v.spawnError }) };
  }
  return { exitCode: 0, stdout: JSON.stringify(value), stderr: '', timedOut: false };
}

/**
 * Drivers keyed by executable path; each call is recorded as `<exe basename> <call> <args...>`.
 * A call without a handler answers "Not supported", as the sample driver does.
 */
export class FakeFlexExec {
  readonly calls: { readonly file: string; readonly args: readonly string[] }[] = [];
  private readonly handlers = new Map<string, FakeCallHandler>();

  /** Sets what `call` of the driver at `file` does. */
  on(file: string, call: string, handler: FakeCallHandler): this {
    this.handlers.set(`${file}\0${call}`, handler);
    return this;
  }

  /** The calls made of `call` (all calls when omitted), as their argument lists. */
  argsOf(call?: string): (readonly string[])[] {
    return this.calls.filter((c) => call === undefined || c.args[0] === call).map((c) => c.args);
  }

  readonly exec: FlexExec = async (file, args) => {
    this.calls.push({ file, args: [...args] });
    const handler = this.handlers.get(`${file}\0${args[0] ?? ''}`);
    if (handler === undefined) return toResult({ status: 'Not supported' });
    return toResult(await handler(args.slice(1)));
  };
}

/** Adds or removes `path` as a mount point in a fake mountinfo file. */
export async function setFakeMounted(mountInfoPath: string, path: string, mounted: boolean): Promise<void> {
  const text = await readFile(mountInfoPath, 'utf8').catch(() => '');
  const lines = text.split('\n').filter((l) => l !== '' && l.split(' ')[4] !== path);
  if (mounted) lines.push(`${String(lines.length + 100)} 1 0:1 / ${path} rw - fake fake rw`);
  await writeFile(mountInfoPath, lines.length === 0 ? '' : `${lines.join('\n')}\n`);
}

/** mount(8) calls recorded and applied to a fake mountinfo file. */
export class FakeMountOps implements MountOps {
  readonly calls: string[] = [];
  constructor(private readonly mountInfoPath: string) {}
  async bind(source: string, target: string): Promise<void> {
    this.calls.push(`bind ${source} ${target}`);
    await setFakeMounted(this.mountInfoPath, target, true);
  }
  async mountDevice(device: string, target: string, fsType: string, readOnly: boolean): Promise<void> {
    this.calls.push(`mount ${device} ${target} ${fsType} ${readOnly ? 'ro' : 'rw'}`);
    await setFakeMounted(this.mountInfoPath, target, true);
  }
  async unmount(target: string): Promise<void> {
    this.calls.push(`umount ${target}`);
    await setFakeMounted(this.mountInfoPath, target, false);
  }
}
