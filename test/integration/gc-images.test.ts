/**
 * Image garbage collection on a real containerd whose root is a 256 MiB tmpfs of its own (so
 * the test can make the node "full" with a file), with the real nodeagent binary and an image
 * GC period of 1 s (NODEAGENT_IMAGE_GC_PERIOD): images u, a, b, c (8 MiB of their own each)
 * are there before the agent starts; pods use a, then b, and c keeps running; image y comes
 * later (younger than imageMinimumGCAge). Once the file system passes the high threshold, the
 * least recently used images go (u, never used, then a) until it is below the low threshold,
 * while b (used more recently, not needed), c and busybox (in use), the sandbox image (pause,
 * which containerd 1.6 does not pin) and y (young) stay; the summary's image file system shows
 * the space freed.
 */
import assert from 'node:assert/strict';
import { open, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { importTestImages } from '../helpers/images.js';
import { NODE, podManifest, runningContainer, writeManifest } from '../helpers/pods.js';
import { httpsCall } from '../helpers/review-server.js';
import { tempDirs } from '../helpers/tempdir.js';
import { waitFor } from '../helpers/wait.js';

const HIGH = 48;
const LOW = 45;
const tempDir = tempDirs('nodeagent-image-gc-');
let containerd: ContainerdInstance;
let cri: CriClient;
let agent: AgentProcess;
let manifests: string;
let port: number;
let refs: Map<string, string>;

const passes = (): number => agent.logs().split('Image garbage collection succeeded').length - 1;
/** Waits for two more image GC passes (the second began after now). */
async function twoPasses(): Promise<void> {
  const seen = passes();
  await waitFor('two image GC passes', () => passes() >= seen + 2, { timeoutMs: 20_000 });
}

async function usage(): Promise<{ capacity: number; available: number; percent: number }> {
  const s = await statfs(join(containerd.dir, 'root'));
  const capacity = s.blocks * s.bsize;
  const available = s.bavail * s.bsize;
  return { capacity, available, percent: 100 - Math.floor((available * 100) / capacity) };
}

/** The references of the images present. */
async function present(): Promise<string[]> {
  return (await cri.listImages()).flatMap((i) => i.repoTags).sort();
}

/** Runs pod `name` on image `ref` until it runs; with `remove`, then deletes it and waits until its containers are gone. */
async function runPod(name: string, ref: string, remove: boolean): Promise<void> {
  await writeManifest(manifests, `${name}.yaml`, podManifest({ name, image: ref, hostNetwork: true, command: 'exec sleep 3600' }));
  await waitFor(`pod ${name} running`, () => runningContainer(cri, name), { timeoutMs: 30_000 });
  await twoPasses();
  if (!remove) return;
  await rm(join(manifests, `${name}.yaml`));
  await waitFor(`pod ${name} gone`, async () => (await cri.listContainers({ labelSelector: { 'io.orch.pod.name': `${name}-${NODE}` } })).length === 0, { timeoutMs: 30_000 });
}

before(async () => {
  containerd = await startContainerd({ rootTmpfsMiB: 256 });
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  refs = await importTestImages(containerd.socketPath, ['u', 'a', 'b', 'c'].map((name) => ({ name, randomMiB: 8 })));
  manifests = await tempDir();
  port = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests,
    args: [
      `--hostname-override=${NODE}`, `--port=${port}`, '--address=127.0.0.1', '--vmodule=gc=4',
      `--image-gc-high-threshold=${HIGH}`, `--image-gc-low-threshold=${LOW}`, '--minimum-image-ttl-duration=1h',
    ],
    env: { NODEAGENT_IMAGE_GC_PERIOD: '1s' },
  });
});

after(async () => {
  await agent.stop();
  cri.close();
  await containerd.stop();
});

void describe('image garbage collection', () => {
  void it('frees the least recently used images down to the low threshold, keeping those in use, the sandbox image and young ones', async () => {
    const ref = (name: string): string => refs.get(name) ?? '';
    await runPod('keeper', containerd.images.busybox, false);
    await runPod('pod-a', ref('a'), true);
    await runPod('pod-b', ref('b'), true);
    await runPod('pod-c', ref('c'), false);
    refs = new Map([...refs, ...await importTestImages(containerd.socketPath, [{ name: 'y', randomMiB: 8 }])]);
    await twoPasses();
    const before = await usage();
    assert.ok(before.percent < HIGH, `below the high threshold so far: ${before.percent}%`);
    assert.deepEqual(await present(), [containerd.images.busybox, containerd.images.pause, ...['a', 'b', 'c', 'u', 'y'].map(ref)].sort());

    // Fill the file system so that freeing 1.5 images' worth (as the runtime reports their size) gets it to the low threshold.
    const listed = await cri.listImages();
    const idOf = (name: string): string => listed.find((i) => i.repoTags.includes(ref(name)))?.id ?? '';
    const size = Number(listed.find((i) => i.repoTags.includes(ref('u')))?.size ?? 0);
    const filler = before.available - (Math.floor((before.capacity * (100 - LOW)) / 100) - Math.round(1.5 * size));
    const fh = await open(join(containerd.dir, 'root', 'filler'), 'w');
    try {
      for (let left = filler; left > 0; left -= 1 << 20) await fh.write(Buffer.alloc(Math.min(left, 1 << 20), 1));
    } finally {
      await fh.close();
    }
    assert.ok((await usage()).percent >= HIGH, 'the node is full');
    await waitFor('u and a removed', async () => { const p = await present(); return !p.includes(ref('u')) && !p.includes(ref('a')); }, { timeoutMs: 20_000 });
    await twoPasses();
    assert.deepEqual(await present(), [containerd.images.busybox, containerd.images.pause, ...['b', 'c', 'y'].map(ref)].sort());
    const removals = [...agent.logs().matchAll(/Removing an image to free space imageID="(sha256:[0-9a-f]+)"/g)].map((m) => m[1]);
    assert.deepEqual(removals, [idOf('u'), idOf('a')], 'u (never used), then a (used before b)');
    const after = await usage();
    assert.ok(after.percent <= LOW, `down to the low threshold: ${after.percent}%`);

    // The summary's image file system follows (its snapshots are kept 10 s).
    await waitFor('the summary showing the space freed', async () => {
      const summary = JSON.parse((await httpsCall({ port, path: '/stats/summary' })).body) as { node: { runtime?: { imageFs?: { availableBytes?: number } } } };
      return (summary.node.runtime?.imageFs?.availableBytes ?? 0) >= after.available - (4 << 20);
    }, { timeoutMs: 30_000, intervalMs: 1000 });
  });
});
