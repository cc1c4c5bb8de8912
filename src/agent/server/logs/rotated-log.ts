/**
 * A container's log as one stream across rotation (containerlogs' layout): the rotated files
 * still held (`<log>.<timestamp>.gz`, decompressed as they are read, then the newest
 * `<log>.<timestamp>`), oldest first, then the live log, which `follow` keeps reading as
 * cri-log.ts does. `tailLines` counts lines back from the end of the live log into the rotated
 * files; `sinceTime`, `timestamps` and `limitBytes` apply across all of them.
 *
 * The live log is opened first and the rotated files next, each kept open while it is read:
 * a rotation meanwhile neither hides lines (the file renamed is the one already open, and is
 * left out of the rotated list by its inode) nor breaks a read (a file compressed meanwhile is
 * read as its `.gz`; one removed meanwhile is read from the open handle).
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { COMPRESS_SUFFIX, containerLogFiles } from '../../containerlogs/index.js';
import { LimitedWriter, continueCriLog, parseCriLogLine, tailOffset, type FollowHooks, type LogReadOptions, type LogSink } from './cri-log.js';

const NEWLINE = 0x0a;
const BLOCK = 64 * 1024;

interface RotatedFile {
  readonly file: string;
  readonly handle: FileHandle;
}

function isMissing(err: unknown): boolean {
  return typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT';
}

/** Opens the rotated files of `log` (oldest first), leaving out the one that is the live log (`liveIno`). */
async function openRotated(log: string, liveIno: number): Promise<RotatedFile[]> {
  const opened: RotatedFile[] = [];
  try {
    for (const file of (await containerLogFiles(log)).slice(0, -1)) {
      // A plain file may be compressed between the listing and the open.
      for (const candidate of file.endsWith(COMPRESS_SUFFIX) ? [file] : [file, file + COMPRESS_SUFFIX]) {
        const handle = await open(candidate, 'r').catch((err: unknown) => {
          if (isMissing(err)) return undefined;
          throw err;
        });
        if (handle === undefined) continue;
        if (!candidate.endsWith(COMPRESS_SUFFIX) && (await handle.stat()).ino === liveIno) {
          await handle.close();
        } else {
          opened.push({ file: candidate, handle });
        }
        break;
      }
    }
    return opened;
  } catch (err) {
    for (const r of opened) await r.handle.close();
    throw err;
  }
}

/** The bytes of a rotated file, decompressed when it is gzipped. */
function contentOf(r: RotatedFile): Readable {
  const raw = r.handle.createReadStream({ start: 0, autoClose: false });
  if (!r.file.endsWith(COMPRESS_SUFFIX)) return raw;
  return pipeline(raw, createGunzip(), () => undefined); // an error surfaces in the reader of the result
}

async function countLines(r: RotatedFile): Promise<number> {
  let n = 0;
  for await (const chunk of contentOf(r) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(NEWLINE); i >= 0; i = chunk.indexOf(NEWLINE, i + 1)) n++;
  }
  return n;
}

/** Newlines in the first `size` bytes of the live log. */
async function countFileLines(fh: FileHandle, size: number): Promise<number> {
  const buf = Buffer.alloc(BLOCK);
  let n = 0;
  for (let pos = 0; pos < size;) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(BLOCK, size - pos), pos);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    for (let i = chunk.indexOf(NEWLINE); i >= 0; i = chunk.indexOf(NEWLINE, i + 1)) n++;
    pos += bytesRead;
  }
  return n;
}

/** Writes the entries of a rotated file after its first `skip` lines. */
async function replay(r: RotatedFile, skip: number, w: LimitedWriter): Promise<void> {
  let carry: Buffer = Buffer.alloc(0);
  let skipping = skip;
  for await (const chunk of contentOf(r) as AsyncIterable<Buffer>) {
    let data = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    for (let nl = data.indexOf(NEWLINE); nl >= 0; nl = data.indexOf(NEWLINE)) {
      const line = data.subarray(0, nl);
      data = data.subarray(nl + 1);
      if (skipping > 0) {
        skipping--;
        continue;
      }
      const entry = parseCriLogLine(line);
      if (entry !== undefined) await w.entry(entry);
      if (w.done) return;
    }
    carry = Buffer.from(data);
  }
  const last = skipping === 0 && carry.length > 0 ? parseCriLogLine(carry) : undefined;
  if (last !== undefined) await w.entry(last);
}

/** Where a read starts: the rotated file to begin with (its index; `rotated.length`: none) and the lines skipped in it. */
async function startOf(rotated: readonly RotatedFile[], liveLines: () => Promise<number>, tailLines: number | undefined): Promise<{ from: number; skip: number }> {
  if (tailLines === undefined) return { from: 0, skip: 0 };
  let needed = tailLines - (await liveLines());
  let start = { from: rotated.length, skip: 0 };
  for (let i = rotated.length - 1; i >= 0 && needed > 0; i--) {
    const r = rotated[i];
    if (r === undefined) break;
    const n = await countLines(r);
    start = { from: i, skip: Math.max(0, n - needed) };
    needed -= n;
  }
  return start;
}

/** Streams the container log `log` with its rotated files to `sink` (see the header). */
export async function streamContainerLog(log: string, o: LogReadOptions, sink: LogSink, hooks?: FollowHooks): Promise<void> {
  const writer = new LimitedWriter(sink, o);
  const fh = await open(log, 'r');
  let handedOver = false;
  let rotated: RotatedFile[] = [];
  try {
    const { size, ino } = await fh.stat();
    rotated = await openRotated(log, ino);
    // The tail within the live log; when it holds fewer lines, the rest comes from the rotated files.
    const position = o.tailLines === undefined ? 0 : await tailOffset(fh, size, o.tailLines);
    const start = position > 0 ? { from: rotated.length, skip: 0 } : await startOf(rotated, () => countFileLines(fh, size), o.tailLines);
    for (let i = start.from; i < rotated.length && !writer.done; i++) {
      const r = rotated[i];
      if (r !== undefined) await replay(r, i === start.from ? start.skip : 0, writer);
    }
    handedOver = true;
    await continueCriLog({ path: log, fh, position, writer }, o, hooks);
  } finally {
    for (const r of rotated) await r.handle.close();
    if (!handedOver) await fh.close();
  }
}
