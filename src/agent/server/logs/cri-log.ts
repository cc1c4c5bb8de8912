/**
 * Reading a container's log file in the CRI format (`<RFC 3339 time> <stdout|stderr> <P|F>
 * <content>`, one entry a line, P for a partial line continued by the next entry) as
 * upstream's log reader does: `tailLines` counts lines of the file from its end, `since`
 * drops older entries, `timestamps` prefixes each logical line with its time, `limitBytes`
 * stops after that many bytes, `follow` keeps reading as the runtime writes (also across a
 * rotation of the file) until the container stops or the reader goes away.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';

export interface LogReadOptions {
  /** Entries before this time (ms since the epoch) are left out. */
  readonly sinceMs?: number;
  /** Lines from the end of the file; undefined: all. */
  readonly tailLines?: number;
  readonly limitBytes?: number;
  readonly timestamps: boolean;
  readonly follow: boolean;
}

export interface CriLogEntry {
  /** The time as written (RFC 3339 with nanoseconds). */
  readonly time: string;
  readonly ms: number;
  readonly stream: 'stdout' | 'stderr';
  readonly partial: boolean;
  readonly content: Buffer;
}

export interface LogSink {
  /** Resolves once the bytes may be written again (back-pressure). */
  write(chunk: Buffer): Promise<void>;
}

export interface FollowHooks {
  /** Stops reading when aborted (the client went away). */
  readonly signal: AbortSignal;
  /** Whether the container still runs; following ends once it does not. */
  isRunning(): Promise<boolean>;
  /** How often the file and the container are looked at when no change is noticed (default 1 s). */
  readonly pollMs?: number;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;
const BLOCK = 64 * 1024;

/** One line of the file without its newline; undefined when it is not a CRI log line. */
export function parseCriLogLine(line: Buffer): CriLogEntry | undefined {
  const a = line.indexOf(SPACE);
  const b = a < 0 ? -1 : line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const time = line.subarray(0, a).toString('latin1');
  const stream = line.subarray(a + 1, b).toString('latin1');
  const ms = Date.parse(time);
  if (Number.isNaN(ms) || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  const c = line.indexOf(SPACE, b + 1);
  const tag = (c < 0 ? line.subarray(b + 1) : line.subarray(b + 1, c)).toString('latin1');
  const partial = tag.split(':')[0] === 'P';
  const body = c < 0 ? Buffer.alloc(0) : line.subarray(c + 1);
  return { time, ms, stream, partial, content: partial ? body : Buffer.concat([body, Buffer.from('\n')]) };
}

/** Where the last `n` lines of the file start (upstream's FindTailLineStartIndex). */
export async function tailOffset(fh: FileHandle, size: number, n: number): Promise<number> {
  if (n < 0) return 0;
  let count = 0;
  let left = size;
  let window: Buffer = Buffer.alloc(0);
  for (let right = size; right > 0 && count <= n; right -= BLOCK) {
    left = Math.max(0, right - BLOCK);
    window = Buffer.alloc(right - left);
    await fh.read(window, 0, window.length, left);
    for (const byte of window) if (byte === NEWLINE) count++;
  }
  for (; count > n; count--) {
    const idx = window.indexOf(NEWLINE) + 1;
    window = window.subarray(idx);
    left += idx;
  }
  return left;
}

/** Writes entries to the sink with the read options applied (since, timestamps, limitBytes), across files. */
export class LimitedWriter {
  private written = 0;
  private newLine = true;
  constructor(private readonly sink: LogSink, private readonly o: LogReadOptions) {}

  get done(): boolean {
    return this.o.limitBytes !== undefined && this.written >= this.o.limitBytes;
  }

  async entry(e: CriLogEntry): Promise<void> {
    if (this.o.sinceMs !== undefined && e.ms < this.o.sinceMs) return;
    let chunk = this.o.timestamps && this.newLine ? Buffer.concat([Buffer.from(`${e.time} `), e.content]) : e.content;
    this.newLine = !e.partial;
    if (this.o.limitBytes !== undefined) chunk = chunk.subarray(0, Math.max(0, this.o.limitBytes - this.written));
    if (chunk.length === 0) return;
    this.written += chunk.length;
    await this.sink.write(chunk);
  }
}

/** Reads whole lines from `position`; returns where reading stopped and the unfinished rest. */
async function readLines(fh: FileHandle, position: number, w: LimitedWriter, carry: Buffer): Promise<{ position: number; carry: Buffer }> {
  const buf = Buffer.alloc(BLOCK);
  let pending: Buffer = carry;
  let pos = position;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, BLOCK, pos);
    if (bytesRead === 0) return { position: pos, carry: pending };
    pos += bytesRead;
    let data = pending.length === 0 ? buf.subarray(0, bytesRead) : Buffer.concat([pending, buf.subarray(0, bytesRead)]);
    let nl = data.indexOf(NEWLINE);
    while (nl >= 0) {
      const entry = parseCriLogLine(data.subarray(0, nl));
      if (entry !== undefined) await w.entry(entry);
      if (w.done) return { position: pos, carry: Buffer.alloc(0) };
      data = data.subarray(nl + 1);
      nl = data.indexOf(NEWLINE);
    }
    pending = Buffer.from(data);
  }
}

function changed(path: string, pollMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | undefined;
    const finish = (): void => {
      clearTimeout(timer);
      watcher?.close();
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, pollMs);
    try {
      watcher = watch(path, finish);
      watcher.on('error', finish);
    } catch {
      watcher = undefined; // the file is being rotated: the timer looks again
    }
    signal.addEventListener('abort', finish);
  });
}

/** An unfinished last line is written as it is once reading stops (as upstream does). */
async function flush(carry: Buffer, w: LimitedWriter): Promise<void> {
  if (carry.length === 0 || w.done) return;
  const entry = parseCriLogLine(carry);
  if (entry !== undefined) await w.entry(entry);
}

/** Streams the log at `path` to `sink`. Resolves when done (or the reader is gone). */
export async function streamCriLog(path: string, o: LogReadOptions, sink: LogSink, hooks?: FollowHooks): Promise<void> {
  const fh = await open(path, 'r');
  let position: number;
  try {
    position = o.tailLines === undefined ? 0 : await tailOffset(fh, (await fh.stat()).size, o.tailLines);
  } catch (err) {
    await fh.close();
    throw err;
  }
  await continueCriLog({ path, fh, position, writer: new LimitedWriter(sink, o) }, o, hooks);
}

/** Where continueCriLog starts: the log at `path`, opened as `fh` (continueCriLog closes it), from `position`. */
export interface LogCursor {
  readonly path: string;
  readonly fh: FileHandle;
  readonly position: number;
  readonly writer: LimitedWriter;
}

/**
 * Reads the open log from the cursor on and, with `follow`, what the runtime appends (also
 * after a rotation: the old file is read to its end, then the new one from its start) until
 * the container stops or the reader goes away. Closes the file.
 */
export async function continueCriLog(cursor: LogCursor, o: LogReadOptions, hooks?: FollowHooks): Promise<void> {
  const { path, writer: w } = cursor;
  let fh = cursor.fh;
  try {
    let info = await fh.stat();
    let position = cursor.position;
    let carry: Buffer = Buffer.alloc(0);
    for (;;) {
      ({ position, carry } = await readLines(fh, position, w, carry));
      if (w.done || !o.follow || hooks === undefined || hooks.signal.aborted) {
        await flush(carry, w);
        break;
      }
      const current = await stat(path).catch(() => undefined); // rotated away this instant: look again
      if (current !== undefined && current.ino !== info.ino) {
        // Rotated: finish the old file, then read the new one from its start.
        ({ position, carry } = await readLines(fh, position, w, carry));
        await fh.close();
        fh = await open(path, 'r');
        info = await fh.stat();
        position = 0;
        carry = Buffer.alloc(0);
        continue;
      }
      if (current !== undefined && current.size < position) {
        position = 0; // truncated in place (copytruncate): read it again from the start
        carry = Buffer.alloc(0);
        continue;
      }
      if (current !== undefined && current.size > position) continue;
      if (!(await hooks.isRunning())) {
        ({ position, carry } = await readLines(fh, position, w, carry));
        await flush(carry, w);
        break;
      }
      await changed(path, hooks.pollMs ?? 1000, hooks.signal);
    }
  } finally {
    await fh.close();
  }
}
