import assert from 'node:assert/strict';
import { appendFile, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseCriLogLine, streamCriLog, tailOffset, type LogReadOptions } from './cri-log.js';

let dir: string;
before(async () => { dir = await mkdtemp(join(tmpdir(), 'cri-log-test-')); });
after(() => rm(dir, { recursive: true, force: true }));

const LOG = [
  '2024-05-01T10:00:00.000000001Z stdout F one',
  '2024-05-01T10:00:01.5Z stderr F two',
  '2024-05-01T10:00:02Z stdout P thr',
  '2024-05-01T10:00:02.1Z stdout F ee',
  'garbage line',
  '2024-05-01T10:00:03Z stdout F four',
  '',
].join('\n');

async function read(text: string, o: Partial<LogReadOptions>): Promise<string> {
  const path = join(dir, `log-${Math.random()}`);
  await writeFile(path, text);
  const out: Buffer[] = [];
  await streamCriLog(path, { timestamps: false, follow: false, ...o }, { write: (b) => { out.push(Buffer.from(b)); return Promise.resolve(); } });
  return Buffer.concat(out).toString();
}

void describe('CRI log files', () => {
  void it('parse entries, joining partial lines', async () => {
    assert.deepEqual(parseCriLogLine(Buffer.from('2024-05-01T10:00:00Z stderr F x y')), {
      time: '2024-05-01T10:00:00Z', ms: Date.parse('2024-05-01T10:00:00Z'), stream: 'stderr', partial: false, content: Buffer.from('x y\n'),
    });
    assert.equal(parseCriLogLine(Buffer.from('nonsense')), undefined);
    assert.equal(await read(LOG, {}), 'one\ntwo\nthree\nfour\n');
  });

  void it('prefix each logical line with its time, keep the last lines, drop older ones, stop at a byte limit', async () => {
    assert.equal(await read(LOG, { timestamps: true }),
      '2024-05-01T10:00:00.000000001Z one\n2024-05-01T10:00:01.5Z two\n2024-05-01T10:00:02Z three\n2024-05-01T10:00:03Z four\n');
    assert.equal(await read(LOG, { tailLines: 2 }), 'four\n', 'the garbage line counts as a line of the file, as upstream');
    assert.equal(await read(LOG, { tailLines: 3 }), 'ee\nfour\n', 'a partial entry cut by the tail shows its end only');
    assert.equal(await read(LOG, { tailLines: 0 }), '');
    assert.equal(await read(LOG, { tailLines: 100 }), 'one\ntwo\nthree\nfour\n');
    assert.equal(await read(LOG, { sinceMs: Date.parse('2024-05-01T10:00:01Z') }), 'two\nthree\nfour\n');
    assert.equal(await read(LOG, { limitBytes: 6 }), 'one\ntw');
    assert.equal(await read('2024-05-01T10:00:00Z stdout F no newline at the end', {}), 'no newline at the end\n');
  });

  void it('find the start of the last lines across blocks', async () => {
    const path = join(dir, 'big');
    const lines = Array.from({ length: 5000 }, (_, i) => `2024-05-01T10:00:00Z stdout F ${'x'.repeat(40)} ${i}`);
    await writeFile(path, `${lines.join('\n')}\n`);
    const fh = await open(path, 'r');
    const size = (await fh.stat()).size;
    const at = await tailOffset(fh, size, 3);
    const buf = Buffer.alloc(size - at);
    await fh.read(buf, 0, buf.length, at);
    await fh.close();
    assert.deepEqual(buf.toString().trim().split('\n').map((l) => l.split(' ').at(-1)), ['4997', '4998', '4999']);
  });

  void it('follow what the runtime appends, across a rotation, until the container stops', async () => {
    const path = join(dir, 'follow.log');
    await writeFile(path, '2024-05-01T10:00:00Z stdout F first\n');
    const out: string[] = [];
    let running = true;
    const waitFor = async (text: string): Promise<void> => {
      const deadline = Date.now() + 5000;
      while (!out.join('').includes(text)) {
        if (Date.now() > deadline) throw new Error(`never saw ${text}: ${out.join('')}`);
        await new Promise((r) => setImmediate(r));
      }
    };
    const abort = new AbortController();
    const done = streamCriLog(path, { timestamps: false, follow: true }, { write: (b) => { out.push(b.toString()); return Promise.resolve(); } }, {
      signal: abort.signal, isRunning: () => Promise.resolve(running), pollMs: 20,
    });
    await waitFor('first\n');
    await appendFile(path, '2024-05-01T10:00:01Z stdout P sec');
    await appendFile(path, 'ond part\n2024-05-01T10:00:01Z stdout F !\n');
    await waitFor('second part!\n');
    await rename(path, `${path}.1`);
    await writeFile(path, '2024-05-01T10:00:02Z stdout F after rotation\n');
    await waitFor('after rotation\n');
    running = false;
    await done;
    assert.equal(out.join(''), 'first\nsecond part!\nafter rotation\n');
  });
});
