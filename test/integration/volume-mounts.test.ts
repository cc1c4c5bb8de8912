/**
 * The volume manager with real mounts (needs root): tmpfs emptyDirs, busy and lazy unmounts,
 * cleanup after a simulated crash, and bind mounts that must never lose their source's data.
 */
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Volume } from 'kubernetes-types/core/v1.js';

import { waitFor } from '../helpers/wait.js';
import { createVolumeManager } from '../../src/agent/volumes/index.js';
import { isAtOrBelow, readMountInfo } from '../../src/agent/volumes/index.js';
import { emptyDirPath, podDir } from '../../src/agent/volumes/index.js';
import { FakeLogger } from '../../src/agent/logging/testing.js';
import { makeTempDir, removeTempDir, requireRoot } from '../../src/agent/volumes/fixtures.js';
import type { NodePod } from '../../src/api/pod/index.js';

const execFileAsync = promisify(execFile);

function pod(uid: string, volumes: Volume[]): NodePod {
  return { metadata: { name: 'p', namespace: 'default', uid }, spec: { containers: [{ name: 'app' }], volumes } };
}

async function mountsBelow(dir: string): Promise<{ mountPoint: string; fsType: string; superOptions: string }[]> {
  return (await readMountInfo()).filter((m) => isAtOrBelow(m.mountPoint, dir));
}

void describe('volume manager (mounts, as root)', () => {
  let rootDir = '';
  before(async () => {
    requireRoot('the tmpfs tests');
    rootDir = await makeTempDir('volmnt');
  });
  after(async () => {
    if (rootDir !== '') await removeTempDir(rootDir);
  });

  void it('mounts a tmpfs for medium Memory with the sizeLimit, once, and removes it on cleanup', async () => {
    const manager = createVolumeManager({ rootDir, clock: realClock, logger: new FakeLogger() });
    const p = pod('m-1', [{ name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }, { name: 'unsized', emptyDir: { medium: 'Memory' } }]);
    const first = await manager.preparePodVolumes(p);
    assert.deepEqual(first.get('mem'), { kind: 'emptyDir', hostPath: emptyDirPath(rootDir, 'm-1', 'mem'), readOnly: false, medium: 'Memory', sizeLimitBytes: 1048576 });
    const second = await manager.preparePodVolumes(p);
    assert.deepEqual(second, first);
    const mounts = await mountsBelow(podDir(rootDir, 'm-1'));
    assert.equal(mounts.length, 2, JSON.stringify(mounts));
    const mem = mounts.find((m) => m.mountPoint === emptyDirPath(rootDir, 'm-1', 'mem'));
    assert.equal(mem?.fsType, 'tmpfs');
    assert.match(mem.superOptions, /size=1024k/);
    await writeFile(join(first.get('mem')!.hostPath, 'f'), 'in memory');
    await manager.cleanupPodVolumes('m-1');
    assert.deepEqual(await mountsBelow(podDir(rootDir, 'm-1')), []);
    await assert.rejects(stat(podDir(rootDir, 'm-1')), { code: 'ENOENT' });
  });

  void it('cleans up after a crash: a new manager finds the mounts in mountinfo', async () => {
    await createVolumeManager({ rootDir, clock: realClock, logger: new FakeLogger() }).preparePodVolumes(pod('m-2', [{ name: 'mem', emptyDir: { medium: 'Memory' } }]));
    const restarted = createVolumeManager({ rootDir, clock: realClock, logger: new FakeLogger() });
    assert.deepEqual(await restarted.listPodDirs(), ['m-2']);
    await restarted.cleanupPodVolumes('m-2');
    assert.deepEqual(await mountsBelow(podDir(rootDir, 'm-2')), []);
    assert.deepEqual(await restarted.listPodDirs(), []);
  });

  void it('retries a busy unmount until it is free', async () => {
    const logger = new FakeLogger();
    const manager = createVolumeManager({ rootDir, clock: realClock, logger, unmountTimeoutMs: 30_000, retryIntervalMs: 20 });
    const volumes = await manager.preparePodVolumes(pod('m-3', [{ name: 'mem', emptyDir: { medium: 'Memory' } }]));
    const handle = await open(join(volumes.get('mem')!.hostPath, 'held'), 'w');
    let closed = false;
    try {
      const cleanup = manager.cleanupPodVolumes('m-3');
      await waitFor('a busy-unmount retry', () => logger.has('retrying unmount'));
      await handle.close();
      closed = true;
      await cleanup;
    } finally {
      if (!closed) await handle.close();
    }
    assert.ok(!logger.has('lazily'));
    await assert.rejects(stat(podDir(rootDir, 'm-3')), { code: 'ENOENT' });
  });

  void it('detaches a mount lazily when it stays busy past the deadline', async () => {
    const logger = new FakeLogger();
    const manager = createVolumeManager({ rootDir, clock: realClock, logger, unmountTimeoutMs: 200, retryIntervalMs: 20 });
    const volumes = await manager.preparePodVolumes(pod('m-4', [{ name: 'mem', emptyDir: { medium: 'Memory' } }]));
    const handle = await open(join(volumes.get('mem')!.hostPath, 'held'), 'w');
    try {
      await manager.cleanupPodVolumes('m-4');
    } finally {
      await handle.close();
    }
    assert.ok(logger.has('lazily'));
    assert.deepEqual(await mountsBelow(podDir(rootDir, 'm-4')), []);
    await assert.rejects(stat(podDir(rootDir, 'm-4')), { code: 'ENOENT' });
  });

  void it('unmounts a bind mount below the pod directory without deleting its source', async () => {
    const source = join(rootDir, 'precious');
    await mkdir(source);
    await writeFile(join(source, 'data.txt'), 'keep me');
    const manager = createVolumeManager({ rootDir, clock: realClock, logger: new FakeLogger() });
    const volumes = await manager.preparePodVolumes(pod('m-5', [{ name: 'host', hostPath: { path: source, type: 'Directory' } }, { name: 'cache', emptyDir: {} }]));
    const target = join(volumes.get('cache')!.hostPath, 'bound');
    await mkdir(target);
    await execFileAsync('mount', ['--bind', source, target]);
    await manager.cleanupPodVolumes('m-5');
    assert.equal(await readFile(join(source, 'data.txt'), 'utf8'), 'keep me');
    await assert.rejects(stat(podDir(rootDir, 'm-5')), { code: 'ENOENT' });
  });
});
