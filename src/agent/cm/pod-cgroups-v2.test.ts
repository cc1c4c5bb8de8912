/**
 * Pod cgroups on a cgroup v2 node, in a fake unified tree (plain files stand in for the kernel's:
 * a control file exists where the test made it). What an in-place resize needs of them: the pod
 * cgroup's cpu.weight, cpu.max and memory.max follow each ensure (raised, then lowered), the
 * burstable QoS cgroup's cpu.weight follows its pods, and the controllers are enabled in every
 * parent's cgroup.subtree_control (without that a real v2 pod cgroup has none of those files).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { makeTempDir } from './fixtures.js';
import { createPodCgroups, type PodCgroups } from './pod-cgroups.js';
import type { PodResourceSettings } from './pod-resources.js';

const UID = 'aaaaaaaa-0000-0000-0000-000000000001';
const CONTROL = ['cgroup.subtree_control', 'cpu.weight', 'cpu.max', 'memory.max', 'pids.max'];

function pod(resources: NonNullable<Container['resources']>): NodePod {
  return { metadata: { name: 'p', namespace: 'default', uid: UID }, spec: { containers: [{ name: 'c', image: 'x', resources }] } };
}

void describe('pod cgroups on cgroup v2 (a fake unified tree)', () => {
  let dir = '';
  before(async () => {
    dir = await makeTempDir('cmpod-v2');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A unified root with cpu, memory and pids, and the cgroups a pod of each QoS class lands in, each with its control files. */
  async function tree(name: string, settings: PodResourceSettings = {}): Promise<{ root: string; cgroups: PodCgroups; read: (relative: string, file: string) => Promise<string> }> {
    const root = join(dir, name);
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'cgroup.controllers'), 'cpu memory pids\n');
    await writeFile(join(root, 'cgroup.subtree_control'), '');
    for (const relative of ['orchpods', 'orchpods/burstable', 'orchpods/besteffort', `orchpods/pod${UID}`, `orchpods/burstable/pod${UID}`]) {
      await mkdir(join(root, relative), { recursive: true });
      for (const file of CONTROL) await writeFile(join(root, relative, file), '');
    }
    const cgroups = createPodCgroups({
      cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', ...settings, logger: new FakeLogger(), clock: new FakeClock(), hierarchies: [root],
    });
    return { root, cgroups, read: async (relative, file) => readFile(join(root, relative, file), 'utf8') };
  }

  void it('enables the controllers down to the pod cgroup and writes its v2 files, resized up and down', async () => {
    const t = await tree('resize');
    const pc = `orchpods/pod${UID}`;
    const guaranteed = (cpu: string, memory: string): NodePod => pod({ requests: { cpu, memory }, limits: { cpu, memory } });
    assert.equal(await t.cgroups.ensure(guaranteed('500m', '64Mi')), `/orchpods/pod${UID}`);
    for (const parent of ['', 'orchpods']) assert.equal(await t.read(parent, 'cgroup.subtree_control'), '+cpu +memory +pids', `${parent || 'the root'} enables them`);
    assert.equal(await t.read(pc, 'cgroup.subtree_control'), '', 'the pod cgroup is the leaf: runc enables below it for its containers');
    // 512 shares: weight 1 + (510 × 9999) / 262142 = 20 (runc's conversion); quota 50 ms of 100 ms.
    assert.deepEqual([await t.read(pc, 'cpu.weight'), await t.read(pc, 'cpu.max'), await t.read(pc, 'memory.max')], ['20', '50000 100000', String(64 * 1024 * 1024)]);
    // Resized up: every file follows.
    await t.cgroups.ensure(guaranteed('1500m', '128Mi'));
    assert.deepEqual([await t.read(pc, 'cpu.weight'), await t.read(pc, 'cpu.max'), await t.read(pc, 'memory.max')], ['59', '150000 100000', String(128 * 1024 * 1024)]);
    // Resized down (podsync lowers the pod cgroup after the containers): v2 takes a parent below its children.
    await t.cgroups.ensure(guaranteed('250m', '32Mi'));
    assert.deepEqual([await t.read(pc, 'cpu.weight'), await t.read(pc, 'cpu.max'), await t.read(pc, 'memory.max')], ['10', '25000 100000', String(32 * 1024 * 1024)]);
  });

  void it('a burstable pod: its quota and memory only with limits on every container, and the QoS cgroup\'s weight follows its requests', async () => {
    const t = await tree('burstable');
    const pc = `orchpods/burstable/pod${UID}`;
    await t.cgroups.ensure(pod({ requests: { cpu: '1' }, limits: { cpu: '2' } }));
    assert.equal(await t.read('orchpods/burstable', 'cgroup.subtree_control'), '+cpu +memory +pids');
    assert.deepEqual([await t.read(pc, 'cpu.weight'), await t.read(pc, 'cpu.max'), await t.read(pc, 'memory.max')], ['39', '200000 100000', '']);
    assert.equal(await t.read('orchpods/burstable', 'cpu.weight'), '39', 'the QoS cgroup: the shares of its pods\' requests (1024)');
    await t.cgroups.ensure(pod({ requests: { cpu: '2' }, limits: { cpu: '3' } }));
    assert.deepEqual([await t.read(pc, 'cpu.weight'), await t.read(pc, 'cpu.max')], ['79', '300000 100000']);
    assert.equal(await t.read('orchpods/burstable', 'cpu.weight'), '79');
  });

  void it('without CFS quota a limited pod gets cpu.max "max <period>"', async () => {
    const t = await tree('noquota', { cpuCFSQuota: false, cpuCFSQuotaPeriodUs: 50_000 });
    await t.cgroups.ensure(pod({ requests: { cpu: '1', memory: '64Mi' }, limits: { cpu: '1', memory: '64Mi' } }));
    assert.equal(await t.read(`orchpods/pod${UID}`, 'cpu.max'), 'max 50000');
  });

  void it('a hierarchy without controllers (a hybrid host\'s unified mount) is left as it is', async () => {
    const root = join(dir, 'hybrid');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'cgroup.controllers'), '');
    await writeFile(join(root, 'cgroup.subtree_control'), '');
    const cgroups = createPodCgroups({ cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger: new FakeLogger(), clock: new FakeClock(), hierarchies: [root] });
    await cgroups.ensure(pod({ limits: { cpu: '1', memory: '64Mi' } }));
    assert.equal(await readFile(join(root, 'cgroup.subtree_control'), 'utf8'), '');
  });
});
