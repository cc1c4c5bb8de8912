import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { LogReadOptions } from './cri-log.js';
import { streamContainerLog } from './rotated-log.js';

let dir: string;
before(async () => { dir = await mkdtemp(join(tmpdir(), 'rotated-log-test-')); });
after(() => rm(dir, { recursive: true, force: true }));

/** CRI lines `n` for n in [from, to), one second apart from 10:00:00. */
function lines(from: number, to: number): string {
  let out = '';
  for (let n = from; n < to; n++) out += `2024-05-01T10:${String(Math.floor(n / 60)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}Z stdout F line ${n}\n`;
  return out;
}

/** A log `0.log` with rotated files: lines 0-9 gzipped, 10-19 plain, 20-24 live. */
async function rotatedLog(name: string): Promise<string> {
  const d = join(dir, name);
  await rm(d, { recursive: true, force: true });
  await mkdir(d);
  const log = join(d, '0.log');
  await writeFile(`${log}.20240501-100010.gz`, gzipSync(lines(0, 10)));
  await writeFile(`${log}.20240501-100020`, lines(10, 20));
  await writeFile(`${log}.20240501-100015.tmp`, 'an interrupted compression\n');
  await writeFile(log, lines(20, 25));
  return log;
}

async function read(log: string, o: Partial<LogReadOptions>): Promise<string[]> {
  const out: Buffer[] = [];
  await streamContainerLog(log, { timestamps: false, follow: false, ...o }, { write: (b) => { out.push(Buffer.from(b)); return Promise.resolve(); } });
  return Buffer.concat(out).toString().split('\n').filter((l) => l !== '');
}

const range = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `line ${from + i}`);

void describe('a container log with rotated files', () => {
  void it('reads as one log, oldest first, the gzipped files decompressed', async () => {
    const log = await rotatedLog('all');
    assert.deepEqual(await read(log, {}), range(0, 25));
  });

  void it('takes the tail from the live log, then from the rotated files back as far as needed', async () => {
    const log = await rotatedLog('tail');
    assert.deepEqual(await read(log, { tailLines: 3 }), range(22, 25));
    assert.deepEqual(await read(log, { tailLines: 5 }), range(20, 25));
    assert.deepEqual(await read(log, { tailLines: 8 }), range(17, 25));
    assert.deepEqual(await read(log, { tailLines: 17 }), range(8, 25));
    assert.deepEqual(await read(log, { tailLines: 100 }), range(0, 25));
    assert.deepEqual(await read(log, { tailLines: 0 }), []);
  });

  void it('applies since, timestamps and the byte limit across the files', async () => {
    const log = await rotatedLog('options');
    assert.deepEqual(await read(log, { sinceMs: Date.parse('2024-05-01T10:00:08Z') }), range(8, 25));
    assert.deepEqual(await read(log, { tailLines: 6, timestamps: true }), [
      '2024-05-01T10:00:19Z line 19', ...range(20, 25).map((l, i) => `2024-05-01T10:00:${20 + i}Z ${l}`),
    ]);
    assert.deepEqual(await read(log, { limitBytes: 'line 0\nline 1\nli'.length }), ['line 0', 'line 1', 'li']);
  });

  void it('follows the live log across a rotation after reading the rotated files', async () => {
    const log = await rotatedLog('follow');
    const out: string[] = [];
    let running = true;
    const seen = async (text: string): Promise<void> => {
      const deadline = Date.now() + 5000;
      while (!out.join('').includes(text)) {
        if (Date.now() > deadline) throw new Error(`never saw ${text}: ${out.join('')}`);
        await new Promise((r) => setImmediate(r));
      }
    };
    const done = streamContainerLog(log, { timestamps: false, follow: true, tailLines: 7 }, { write: (b) => { out.push(b.toString()); return Promise.resolve(); } }, {
      signal: new AbortController().signal, isRunning: () => Promise.resolve(running), pollMs: 20,
    });
    await seen('line 24\n');
    await appendFile(log, lines(25, 27));
    await seen('line 26\n');
    await rename(log, `${log}.20240501-100027`);
    await appendFile(`${log}.20240501-100027`, lines(27, 28)); // written before the runtime reopened the log
    await writeFile(log, lines(28, 30));
    await seen('line 29\n');
    running = false;
    await done;
    assert.deepEqual(out.join('').split('\n').filter((l) => l !== ''), range(18, 30));
  });
});
