/**
 * Integration: a real pod cgroup in every mounted hierarchy of this host, under a cgroup root
 * used by this test only (`/orchtest-<pid>-<random>`), removed again in the after hook. Needs
 * root and mounted cgroups; fails (never skips) without them.
 */
import { after, before, describe, it } from 'node:test';
import { realClock } from '../../src/api/clock.js';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { waitFor } from '../helpers/wait.js';
import { BURSTABLE, podWith } from '../../src/agent/cm/fixtures.js';
import { discoverCgroupHierarchies, type CgroupHierarchy } from '../../src/agent/cm/index.js';
import { CM_CGROUP_BUSY, createPodCgroups } from '../../src/agent/cm/index.js';
import { FakeLogger } from '../../src/agent/logging/testing.js';
import { OrchError } from '../../src/api/errors.js';

const UID = '0123abcd-4567-89ef-0123-456789abcdef';
const testRoot = `orchtest-${process.pid}-${Math.floor(Math.random() * 1e9).toString(16)}`;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/** rmdir of a cgroup tree, children first (cleanup only). */
async function removeTree(dir: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return;
    throw err;
  }
  for (const e of entries) if (e.isDirectory()) await removeTree(join(dir, e.name));
  await rmdir(dir);
}

void describe('pod cgroups in the real hierarchies', () => {
  let hierarchies: CgroupHierarchy[] = [];
  let child: ChildProcess | undefined;

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'the cgroup integration test must run as root');
    hierarchies = await discoverCgroupHierarchies();
    assert.ok(hierarchies.some((h) => h.path.endsWith('/pids')), 'the test needs the cgroup v1 pids hierarchy');
  });
  after(async () => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    for (const h of hierarchies) await waitFor(`removal of ${testRoot} in ${h.path}`, async () => {
      await removeTree(join(h.path, testRoot));
      return true;
    });
  });

  void it('creates the pod cgroup in every hierarchy, waits out a busy cgroup, and removes it', async () => {
    const logger = new FakeLogger();
    const cgroups = createPodCgroups({ clock: realClock, cgroupRoot: `/${testRoot}`, cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger, retryIntervalMs: 20 });
    const parent = await cgroups.ensure(podWith(UID, [BURSTABLE]));
    assert.equal(parent, `/${testRoot}/orchpods/burstable/pod${UID}`);
    for (const h of hierarchies) assert.ok(await exists(join(h.path, parent, h.version === 1 ? 'tasks' : 'cgroup.procs')), `${h.path}${parent}`);
    const cpuset = hierarchies.find((h) => h.path.endsWith('/cpuset'));
    if (cpuset !== undefined) {
      const rootCpus = (await readFile(join(cpuset.path, 'cpuset.cpus'), 'utf8')).trim();
      assert.equal((await readFile(join(cpuset.path, parent, 'cpuset.cpus'), 'utf8')).trim(), rootCpus);
    }
    assert.deepEqual(await cgroups.listPodUIDs(), [UID]);

    // A process in the pod cgroup keeps it busy: a short deadline fails, a long one waits it out.
    const pids = hierarchies.find((h) => h.path.endsWith('/pids'))!;
    const sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
    child = sleeper;
    assert.ok(sleeper.pid !== undefined, 'sleep did not start');
    await writeFile(join(pids.path, parent, 'cgroup.procs'), String(sleeper.pid));
    const quick = createPodCgroups({ clock: realClock, cgroupRoot: `/${testRoot}`, cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger, removeTimeoutMs: 100, retryIntervalMs: 20 });
    await assert.rejects(quick.remove(UID), (err: unknown) => err instanceof OrchError && err.code === CM_CGROUP_BUSY);

    const removal = cgroups.remove(UID);
    await waitFor('a busy-cgroup retry', () => logger.has('retrying rmdir'));
    sleeper.kill('SIGKILL');
    await removal;
    for (const h of hierarchies) {
      assert.ok(!(await exists(join(h.path, parent))), `${h.path}${parent} still exists`);
      assert.ok(await exists(join(h.path, testRoot, 'orchpods', 'burstable')), 'the QoS cgroup must stay');
    }
    assert.deepEqual(await cgroups.listPodUIDs(), []);
  });
});
