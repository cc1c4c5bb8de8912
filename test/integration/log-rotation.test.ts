/**
 * Container log rotation on a real containerd with the real nodeagent binary
 * (containerLogMaxSize 2Mi, containerLogMaxFiles 3, containerLogMonitorInterval 3s): a
 * container writing ~16 MiB in bursts of several MiB/s keeps its log directory within
 * maxSize × maxFiles plus the one file in flight, its rotated files gzipped but the newest, and
 * /containerLogs reads it whole across the rotations: `follow` sees every line once and in
 * order, `tailLines` reaches back into the rotated files.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { httpsCall } from '../helpers/review-server.js';
import { tempDirs } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

const MAX_SIZE = 2 * 1024 * 1024;
const MAX_FILES = 3;
const BURSTS = 16;
const PER_BURST = 8000;
const TOTAL = BURSTS * PER_BURST;
/** ~130 bytes a line in the file: a burst is about 1 MiB, written in a fraction of a second. */
const WRITER = `pad=$(printf '%0100d' 0); n=0; b=0; while [ $b -lt ${BURSTS} ]; do i=0; while [ $i -lt ${PER_BURST} ]; do n=$((n+1)); i=$((i+1)); echo "line $n $pad"; done; b=$((b+1)); sleep 1; done; exec sleep 3600`;

const tempDir = tempDirs('nodeagent-rotation-');
let containerd: ContainerdInstance;
let cri: CriClient;
let agent: AgentProcess;
let port: number;
let manifests: string;

before(async () => {
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  manifests = await tempDir();
  const config = join(await tempDir(), 'config.yaml');
  await writeFile(config, [
    'apiVersion: nodeagent.config.orch.io/v1beta1', 'kind: NodeagentConfiguration',
    'containerLogMaxSize: 2Mi', `containerLogMaxFiles: ${MAX_FILES}`, 'containerLogMonitorInterval: 3s',
    'authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}', 'authorization: {mode: AlwaysAllow}', '',
  ].join('\n'));
  port = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests,
    args: [`--config=${config}`, `--hostname-override=${NODE}`, `--port=${port}`, '--address=127.0.0.1'],
  });
});

after(async () => {
  await agent.stop();
  cri.close();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
});

/** The line numbers of `line N ...` lines, checked to be consecutive. */
function numbers(text: string): number[] {
  const ns = text.split('\n').filter((l) => l !== '').map((l) => Number(/^line (\d+) 0+$/.exec(l)?.[1] ?? NaN));
  ns.forEach((n, i) => { assert.ok(Number.isInteger(n) && (i === 0 || n === (ns[i - 1] ?? 0) + 1), `line ${i} is ${n} after ${ns[i - 1]}`); });
  return ns;
}

/** Follows the container's log until `line TOTAL` arrives; resolves to the text. */
function follow(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`follow: status ${res.statusCode ?? 0}`));
      const chunks: string[] = [];
      let last = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        chunks.push(d);
        last = (last + d).slice(-200); // the end of what came, to look for the last line in
        if (last.includes(`\nline ${TOTAL} `)) {
          req.destroy();
          resolve(chunks.join(''));
        }
      });
      res.on('end', () => { reject(new Error(`follow ended early after ${chunks.join('').length} bytes`)); });
    });
    req.on('error', (err) => { if (!req.destroyed) reject(err); });
    req.end();
  });
}

void describe('container log rotation', () => {
  void it('keeps a fast writer within maxSize × maxFiles plus the file in flight, compressed, and readable whole across rotations', async () => {
    await writeManifest(manifests, 'writer.yaml', podManifest({ name: 'writer', image: containerd.images.busybox, hostNetwork: true, command: WRITER }));
    const c = await waitFor('the writer running', () => runningContainer(cri, 'writer'), { timeoutMs: 30_000 });
    const dir = join(agent.podLogsDir, `default_writer-${NODE}_${c.labels['io.orch.pod.uid'] ?? ''}`, 'main');
    const followed = follow(`/containerLogs/default/writer-${NODE}/main?follow=true`);
    const rotated = new Set<string>();
    const problems: string[] = [];
    let done = false;
    void followed.finally(() => { done = true; }).catch(() => undefined);
    await waitFor('the writer to finish', async () => {
      const names = await readdir(dir).catch(() => [] as string[]);
      const sizes = await Promise.all(names.map((n) => stat(join(dir, n)).then((s) => s.size, () => 0)));
      for (const n of names) if (/^0\.log\.\d{8}-\d{6}$/.test(n)) rotated.add(n);
      const inFlight = Math.max(0, ...sizes);
      const rest = sizes.reduce((a, b) => a + b, 0) - inFlight;
      if (rest > MAX_SIZE * MAX_FILES) problems.push(`${rest} bytes besides the file in flight: ${names.join(' ')}`);
      const steady = names.filter((n) => !n.endsWith('.tmp'));
      if (steady.length > MAX_FILES + 1) problems.push(`${steady.length} files: ${names.join(' ')}`);
      return done;
    }, { timeoutMs: 120_000, intervalMs: 200 });
    assert.deepEqual(problems, []);
    assert.ok(rotated.size >= 4, `rotated at least 4 times: ${[...rotated].join(' ')}`);
    const all = numbers(await followed);
    assert.equal(all.at(-1), TOTAL);

    // The writer is quiet now: one uncompressed rotated file (the newest), the older ones gzipped
    // (a compression still in flight, as a .tmp file, finishes first on a loaded machine).
    const names = await waitFor('the rotated files to settle', async () => {
      const all = (await readdir(dir)).sort();
      return all.some((n) => n.endsWith('.tmp')) ? undefined : all;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    const plain = names.filter((n) => /^0\.log\.\d{8}-\d{6}$/.test(n));
    const gz = names.filter((n) => /^0\.log\.\d{8}-\d{6}\.gz$/.test(n));
    assert.equal(plain.length, 1, names.join(' '));
    assert.ok(gz.length >= 1 && gz.every((g) => g < (plain[0] ?? '')), names.join(' '));
    assert.match(gunzipSync(await readFile(join(dir, gz[0] ?? ''))).toString().split('\n')[0] ?? '', /^\S+ stdout F line \d+ 0+$/);

    // A tail longer than the live log reaches back into the rotated file.
    const live = (await readFile(join(dir, '0.log'), 'utf8')).split('\n').filter((l) => l !== '').length;
    const tail = await httpsCall({ port, path: `/containerLogs/default/writer-${NODE}/main?tailLines=${live + 50}` });
    assert.equal(tail.status, 200);
    const tailed = numbers(tail.body);
    assert.deepEqual([tailed.length, tailed.at(-1)], [live + 50, TOTAL]);
    const whole = numbers((await httpsCall({ port, path: `/containerLogs/default/writer-${NODE}/main` })).body);
    assert.equal(whole.at(-1), TOTAL);
    assert.ok(whole.length > live + PER_BURST, `the whole log spans the rotated files (${whole.length} lines)`);
  });
});
