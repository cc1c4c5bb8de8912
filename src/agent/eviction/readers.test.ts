import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { makeObservations, hasDedicatedImageFs } from './observations.js';
import { createSignalReader, runningTasks } from './readers.js';

const dirs: string[] = [];
after(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

async function files(tree: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'eviction-readers-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(tree)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const MEMINFO = 'MemTotal:       1000 kB\nMemFree:         200 kB\nInactive(file):  100 kB\n';

void describe('the signal readers', () => {
  void it('read memory from the root memory cgroup, allocatable from the pods cgroup, PIDs from the kernel, file systems by statfs', async () => {
    const root = await files({
      'proc/meminfo': MEMINFO,
      'proc/loadavg': '0.10 0.20 0.30 3/412 9999\n',
      'proc/sys/kernel/pid_max': '32768\n',
      'proc/sys/kernel/threads-max': '20000\n',
      'memory/memory.usage_in_bytes': '600000\n',
      'memory/memory.stat': 'cache 1\ninactive_file 7\ntotal_inactive_file 100000\n',
      'memory/orchpods/memory.usage_in_bytes': '50000\n',
      'memory/orchpods/memory.limit_in_bytes': '400000\n',
      'memory/orchpods/memory.stat': 'total_inactive_file 10000\n',
      'images/x': '',
    });
    const clock = new FakeClock();
    const reader = createSignalReader({
      rootDir: root, imageFsPath: () => Promise.resolve(join(root, 'images')), procDir: join(root, 'proc'),
      memoryCgroupDir: join(root, 'memory'), podsCgroupDir: join(root, 'memory/orchpods'), clock,
    });
    const r = await reader.read();
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.memory, { usageBytes: 600_000, workingSetBytes: 500_000, availableBytes: 1_024_000 - 500_000 });
    assert.deepEqual(r.allocatableMemory, { usageBytes: 50_000, workingSetBytes: 40_000, availableBytes: 360_000 });
    assert.deepEqual(r.pids, { max: 20_000, running: 412 });
    const s = await statfs(root);
    assert.equal(r.nodefs?.capacityBytes, s.blocks * s.bsize);
    assert.equal(hasDedicatedImageFs(r), false, 'both on the temp file system');
    const o = makeObservations(r);
    assert.deepEqual(o.get('memory.available'), { available: 524_000, capacity: 1_024_000, time: clock.now() });
    assert.deepEqual(o.get('pid.available'), { available: 19_588, capacity: 20_000, time: clock.now() });
    assert.equal(r.nodefs.inodes, s.files);
    // Free inodes move with every file another process makes on the temp file system: the observation is the read's.
    assert.equal(o.get('nodefs.inodesFree')?.available, r.nodefs.inodesFree);
  });

  void it('fall back to /proc/meminfo without a memory hierarchy, leave out an unlimited pods cgroup, and report what they cannot read', async () => {
    const root = await files({
      'proc/meminfo': MEMINFO, 'proc/loadavg': 'garbage',
      'pods/memory.usage_in_bytes': '5\n', 'pods/memory.limit_in_bytes': '9223372036854771712\n', 'pods/memory.stat': 'total_inactive_file 0\n',
    });
    const reader = createSignalReader({
      rootDir: root, imageFsPath: () => Promise.resolve(join(root, 'missing')), procDir: join(root, 'proc'), podsCgroupDir: join(root, 'pods'), clock: new FakeClock(),
    });
    const r = await reader.read();
    assert.deepEqual(r.memory, { usageBytes: 800 * 1024, workingSetBytes: 700 * 1024, availableBytes: 300 * 1024 });
    assert.equal(r.allocatableMemory, undefined);
    assert.equal(r.imagefs, undefined);
    assert.equal(r.pids, undefined);
    assert.equal(r.errors.length, 2, r.errors.join('; '));
    assert.match(r.errors.join('; '), /image file system: .*missing/);
    assert.throws(() => runningTasks('garbage'), /no task count/);
  });
});
