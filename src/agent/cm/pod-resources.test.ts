import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { makeTempDir } from './fixtures.js';
import { createPodCgroups } from './pod-cgroups.js';
import { cgroupFiles, podResourceConfig, qosCpuShares, sharesToWeight } from './pod-resources.js';

function pod(uid: string, containers: Record<string, Record<string, string>>[], init: Record<string, Record<string, string>>[] = []): NodePod {
  return {
    metadata: { uid, name: uid, namespace: 'n' },
    spec: {
      containers: containers.map((resources, i) => ({ name: `c${i}`, resources })),
      initContainers: init.map((resources, i) => ({ name: `i${i}`, resources, ...(resources.sidecar === undefined ? {} : { restartPolicy: 'Always' }) })),
    },
  };
}
const A = 'aaaaaaaa-0000-0000-0000-00000000000a';

void describe('pod resource config', () => {
  void it('Guaranteed: shares, quota and memory from the sums', () => {
    const p = pod(A, [{ limits: { cpu: '500m', memory: '64Mi' } }, { limits: { cpu: '250m', memory: '32Mi' } }]);
    assert.deepEqual(podResourceConfig(p, { podPidsLimit: 10 }), { cpuShares: 768, cpuQuotaUs: 75_000, cpuPeriodUs: 100_000, memoryLimitBytes: 96 * 2 ** 20, pidsLimit: 10 });
    assert.equal(podResourceConfig(p, { cpuCFSQuota: false }).cpuQuotaUs, -1);
  });
  void it('Burstable: quota and memory only when every container has that limit; init containers as the max', () => {
    assert.deepEqual(podResourceConfig(pod(A, [{ requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } }, { requests: { cpu: '50m' } }])), { cpuShares: 153 });
    const big = pod(A, [{ requests: { cpu: '100m' }, limits: { cpu: '200m' } }], [{ requests: { cpu: '1' }, limits: { cpu: '1' } }]);
    assert.deepEqual(podResourceConfig(big), { cpuShares: 1024, cpuQuotaUs: 100_000, cpuPeriodUs: 100_000 });
  });
  void it('BestEffort: 2 shares; QoS shares from the burstable pods', () => {
    assert.deepEqual(podResourceConfig(pod(A, [{}]), { podPidsLimit: -1 }), { cpuShares: 2 });
    assert.deepEqual(qosCpuShares([pod(A, [{ requests: { cpu: '250m' } }]), pod(A, [{}]), pod(A, [{ limits: { cpu: '1', memory: '1Gi' } }])]), { Burstable: 256, BestEffort: 2 });
  });
  void it('files for cgroup v1 and v2', () => {
    const config = { cpuShares: 1024, cpuQuotaUs: -1, cpuPeriodUs: 100_000, memoryLimitBytes: 1000, pidsLimit: 5 };
    assert.deepEqual(cgroupFiles(config, 1), [['cpu.shares', '1024'], ['cpu.cfs_period_us', '100000'], ['cpu.cfs_quota_us', '-1'], ['memory.limit_in_bytes', '1000'], ['pids.max', '5']]);
    assert.deepEqual(cgroupFiles(config, 2), [['cpu.weight', String(sharesToWeight(1024))], ['cpu.max', 'max 100000'], ['memory.max', '1000'], ['pids.max', '5']]);
    assert.equal(sharesToWeight(2), 1);
    assert.equal(sharesToWeight(262_144), 10_000);
  });
});

void describe('pod cgroups write the limits', () => {
  let dir = '';
  before(async () => {
    dir = await makeTempDir('cmlimits');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  void it('into the control files that exist, and the QoS cgroups\' shares', async () => {
    const cpu = join(dir, 'cpu');
    const pidsRoot = join(dir, 'pids');
    const p = pod(A, [{ requests: { cpu: '500m' } }]);
    const podPath = join('orchpods', 'burstable', `pod${A}`);
    // As in a real hierarchy, the cgroups of one level have the same control files.
    for (const rel of [podPath, 'orchpods/burstable', 'orchpods/besteffort']) {
      await mkdir(join(cpu, rel), { recursive: true });
      await writeFile(join(cpu, rel, 'cpu.shares'), '1024');
    }
    await mkdir(join(pidsRoot, podPath), { recursive: true });
    await writeFile(join(pidsRoot, podPath, 'pids.max'), 'max');
    const cgroups = createPodCgroups({ cgroupRoot: '', cgroupsPerQOS: true, cgroupDriver: 'cgroupfs', logger: new FakeLogger(), clock: new FakeClock(), hierarchies: [cpu, pidsRoot], podPidsLimit: 42 });
    await cgroups.ensure(p);
    assert.equal(await readFile(join(cpu, podPath, 'cpu.shares'), 'utf8'), '512');
    assert.equal(await readFile(join(pidsRoot, podPath, 'pids.max'), 'utf8'), '42');
    assert.equal(await readFile(join(cpu, 'orchpods/burstable', 'cpu.shares'), 'utf8'), '512');
    assert.equal(await readFile(join(cpu, 'orchpods/besteffort', 'cpu.shares'), 'utf8'), '2');
    await assert.rejects(readFile(join(pidsRoot, podPath, 'cpu.shares')), { code: 'ENOENT' }, 'files are never created');
  });
});
