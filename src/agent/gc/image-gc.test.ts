import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeLogger } from '../logging/testing.js';
import { IMAGE, GcNode } from './fixtures.js';
import { imageFsSource } from './image-fs.js';
import { createImageGC, type ImageGCPolicy } from './image-gc.js';

const nodes: GcNode[] = [];
after(async () => {
  for (const n of nodes) await rm(n.logsDir, { recursive: true, force: true });
});

const PAUSE = 'registry.test/pause:3.9';
const MINUTE = 60_000;

/**
 * A node with images u, a, b, c and the sandbox image, 100 bytes each (as ListImages reports
 * them), on an image file system of 1000 bytes of which `base` are used by other things.
 */
async function imageNode(policy: Partial<ImageGCPolicy> = {}) {
  const n = await GcNode.create();
  nodes.push(n);
  n.runtime.images.delete(IMAGE);
  for (const name of ['u', 'a', 'b', 'c']) n.runtime.images.set(`registry.test/${name}:1`, `sha256:${name}`);
  n.runtime.images.set(PAUSE, 'sha256:pause');
  const pinned = new Set<string>();
  const list = n.runtime.listImages.bind(n.runtime);
  n.runtime.listImages = async () => (await list()).map((i) => ({ ...i, size: '100', pinned: pinned.has(i.id) }));
  const fs = { base: 0 };
  const removed: string[] = [];
  const gc = createImageGC({
    images: n.runtime, containers: n.runtime, sandboxImages: () => Promise.resolve([PAUSE]), now: () => n.now, logger: new FakeLogger(),
    imageFs: () => Promise.resolve({ mountpoint: '/images', capacityBytes: 1000, availableBytes: 1000 - fs.base - 100 * new Set(n.runtime.images.values()).size }),
    policy: { highThresholdPercent: 80, lowThresholdPercent: 70, minAgeMs: 60 * MINUTE, ...policy },
    onRemoved: (id) => removed.push(id),
  });
  const sandbox = await n.sandbox('p');
  /** A container of pod p on `image` (exited unless running), created at the node's time. */
  const use = (image: string, running = false): Promise<string> => n.container(sandbox, image.replace(/\W/g, '-'), 0, { image, running });
  const present = (): string[] => [...new Set(n.runtime.images.values())].sort();
  return { n, gc, fs, pinned, removed, use, present };
}

void describe('image garbage collection', () => {
  void it('below the high threshold removes nothing', async () => {
    const { gc, present } = await imageNode();
    assert.deepEqual(await gc.collect(), { usagePercent: 50, wanted: 0, freed: 0, removed: [] });
    assert.equal(present().length, 5);
  });

  void it('frees down to the low threshold, least recently used first, keeping images in use, the sandbox image and young images', async () => {
    const { n, gc, fs, removed, use, present } = await imageNode();
    await gc.collect(); // the first detection: the images found are "old"
    n.now += MINUTE;
    await n.runtime.removeContainer(await use('registry.test/a:1'));
    await gc.collect();
    n.now += MINUTE;
    await n.runtime.removeContainer(await use('registry.test/b:1'));
    await gc.collect();
    n.now += MINUTE;
    await use('registry.test/c:1', true);
    n.runtime.images.set('registry.test/young:1', 'sha256:young');
    await gc.collect(); // detects the young image now, and c in use
    fs.base = 250; // 850 of 1000 used: 85%, 150 bytes to free to get to 70%
    n.now += MINUTE;
    assert.deepEqual(await gc.collect(), { usagePercent: 85, wanted: 150, freed: 200, removed: ['sha256:u', 'sha256:a'] });
    assert.deepEqual(present(), ['sha256:b', 'sha256:c', 'sha256:pause', 'sha256:young']);
    assert.deepEqual(removed, ['sha256:u', 'sha256:a']);
    assert.deepEqual(n.runtime.callsOf('removeImage'), [{ image: 'sha256:u' }, { image: 'sha256:a' }]);
  });

  void it('says how much it wanted to free when it cannot free enough', async () => {
    const { n, gc, fs, use, present } = await imageNode();
    await gc.collect();
    await use('registry.test/a:1', true);
    await use('registry.test/c:1', true);
    fs.base = 450; // 95%: 250 bytes to free; only u and b can go
    n.now += MINUTE;
    await assert.rejects(gc.collect(), (err: unknown) =>
      err instanceof OrchError && err.code === 'GC_IMAGE_FREE_FAILED' && err.message === 'image garbage collection on /images: wanted to free 250 bytes, but freed 200 bytes');
    assert.deepEqual(present(), ['sha256:a', 'sha256:c', 'sha256:pause']);
  });

  void it('never removes a pinned image', async () => {
    const { gc, fs, pinned, use, present } = await imageNode();
    pinned.add('sha256:u');
    for (const name of ['a', 'b', 'c']) await use(`registry.test/${name}:1`);
    fs.base = 350; // 85%: 150 bytes to free, and nothing that may go
    await assert.rejects(gc.collect(), /wanted to free 150 bytes, but freed 0 bytes/);
    assert.equal(present().length, 5);
  });

  void it('deletes every unused image old enough whatever the thresholds when asked (eviction reclaim)', async () => {
    const { n, gc, use, present } = await imageNode();
    await gc.collect();
    await use('registry.test/a:1', true);
    n.runtime.images.set('registry.test/young:1', 'sha256:young');
    n.now += MINUTE;
    const r = await gc.deleteUnused();
    assert.deepEqual([...r.removed].sort(), ['sha256:b', 'sha256:c', 'sha256:u']);
    assert.equal(r.freed, 300);
    assert.deepEqual(present(), ['sha256:a', 'sha256:pause', 'sha256:young']);
  });

  void it('reports an image file system without capacity', async () => {
    const n = await GcNode.create();
    nodes.push(n);
    const gc = createImageGC({
      images: n.runtime, containers: n.runtime, sandboxImages: () => Promise.resolve([]), now: () => n.now, logger: new FakeLogger(),
      imageFs: () => Promise.resolve({ mountpoint: '/images', capacityBytes: 0, availableBytes: 0 }),
      policy: { highThresholdPercent: 80, lowThresholdPercent: 70, minAgeMs: 0 },
    });
    await assert.rejects(gc.collect(), (err: unknown) => err instanceof OrchError && err.code === 'GC_IMAGE_FS_UNKNOWN' && err.message.includes('/images'));
  });
});

void describe('the image file system', () => {
  void it('is the file system of the mount point ImageFsInfo names, else of the runtime root', async () => {
    const n = await GcNode.create();
    nodes.push(n);
    const measured: string[] = [];
    const statfs = (p: string) => { measured.push(p); return Promise.resolve({ blocks: 10, bavail: 4, bsize: 4096 }); };
    n.runtime.imageFs.mountpoint = '/var/lib/containerd/snapshots';
    const named = imageFsSource({ images: n.runtime, runtime: n.runtime, statfs });
    assert.deepEqual(await named(), { mountpoint: '/var/lib/containerd/snapshots', capacityBytes: 40960, availableBytes: 16384 });
    await named();
    assert.equal(n.runtime.callsOf('imageFsInfo').length, 1, 'the mount point is looked up once');
    n.runtime.imageFs.mountpoint = '';
    const status = n.runtime.status.bind(n.runtime);
    n.runtime.status = async (r) => ({ ...(await status(r)), info: { config: JSON.stringify({ containerdRootDir: '/var/lib/containerd' }) } });
    assert.equal((await imageFsSource({ images: n.runtime, runtime: n.runtime, statfs })()).mountpoint, '/var/lib/containerd');
    assert.deepEqual(measured, ['/var/lib/containerd/snapshots', '/var/lib/containerd/snapshots', '/var/lib/containerd']);
    const failing = imageFsSource({ images: n.runtime, runtime: n.runtime, statfs: () => Promise.reject(new Error('ENOENT')) });
    await assert.rejects(failing(), (err: unknown) => err instanceof OrchError && err.code === 'GC_IMAGE_FS_UNKNOWN' && err.message.includes('/var/lib/containerd: ENOENT'));
  });
});
