import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock, settle } from '../../../api/fake-clock.js';
import type { NodePod } from '../../../api/pod/index.js';
import { createVolumeStatsCache, diskUsage } from './volume-stats.js';

const dirs: string[] = [];
after(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

/** Polls `cond` between turns of the event loop until it holds, for at most 10 s (the measurement waits for the thread pool). */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond() && Date.now() < deadline) await settle(1);
  assert.ok(cond(), 'condition not met within 10 s');
}

const POD: NodePod = {
  metadata: { uid: 'u1', name: 'p', namespace: 'ns' },
  spec: {
    containers: [{ name: 'main' }],
    volumes: [{ name: 'data', emptyDir: {} }, { name: 'cfg', configMap: { name: 'c' } }, { name: 'host', hostPath: { path: '/tmp' } }, { name: 'notyet', emptyDir: {} }],
  },
};

void describe('the volume stats cache', () => {
  void it('measures the pods\' volumes like du every period, their local ephemeral part with /etc/hosts', async () => {
    const root = await mkdtemp(join(tmpdir(), 'volume-stats-'));
    dirs.push(root);
    const data = join(root, 'pods/u1/volumes/orch.io~empty-dir/data');
    await mkdir(join(data, 'sub'), { recursive: true });
    await writeFile(join(data, 'sub/blob'), Buffer.alloc(64 * 1024, 1));
    await mkdir(join(root, 'pods/u1/volumes/orch.io~configmap/cfg'), { recursive: true });
    await writeFile(join(root, 'pods/u1/etc-hosts'), '127.0.0.1 localhost\n');
    const clock = new FakeClock();
    const cache = createVolumeStatsCache({ rootDir: root, pods: () => [POD], periodMs: 60_000, clock });
    cache.start();
    await until(() => cache.podVolumes('u1') !== undefined);
    // The first period's measurement done (the read above may have measured the pod at once
    // too, and the period's result replaces that one): from here on it holds until the next.
    await until(() => clock.pending().length === 1);
    const first = cache.podVolumes('u1');
    assert.ok(first !== undefined);
    assert.deepEqual(first.volumes.map((v) => v.name), ['data', 'cfg'], 'no hostPath, nothing for a volume not set up');
    const dataStats = first.volumes.at(0);
    assert.ok(dataStats !== undefined && (dataStats.usedBytes ?? 0) >= 64 * 1024, JSON.stringify(dataStats));
    assert.equal(dataStats.inodesUsed, 3, 'the directory, sub and blob');
    assert.ok((dataStats.capacityBytes ?? 0) > 0);
    const hostsAndVolumes = first.ephemeral.usedBytes;
    assert.ok(hostsAndVolumes > (dataStats.usedBytes ?? 0), 'the configMap and /etc/hosts count too');
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [60_000]);
    await writeFile(join(data, 'more'), Buffer.alloc(128 * 1024, 1));
    assert.equal(cache.podVolumes('u1'), first, 'unchanged until the next period');
    await clock.advance(60_000);
    await until(() => cache.podVolumes('u1') !== first);
    assert.ok((cache.podVolumes('u1')?.volumes.at(0)?.usedBytes ?? 0) >= 192 * 1024);
    await cache.stop();
    assert.equal(clock.pending().length, 0);
    assert.deepEqual(await diskUsage(join(root, 'pods/u1/volumes/orch.io~configmap/cfg')).then((u) => u.inodesUsed), 1);
  });

  void it('is off with a period of 0', () => {
    const clock = new FakeClock();
    const cache = createVolumeStatsCache({ rootDir: '/nonexistent', pods: () => [POD], periodMs: 0, clock });
    cache.start();
    assert.equal(cache.podVolumes('u1'), undefined);
    assert.equal(clock.pending().length, 0);
  });
});
