import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { OrchError } from '../../../api/errors.js';
import { FakeLogger } from '../../logging/testing.js';
import { AdmissionError, SMT_ALIGNMENT_ERROR } from '../admission.js';
import { CPUSet } from '../cpuset.js';
import { guaranteedPod, podWith, BURSTABLE } from '../fixtures.js';
import { CPUTopology } from '../machine/index.js';
import { ONE_NUMA_SYSFS, TWO_NUMA_SYSFS, machineOf } from '../machine/testdata/index.js';
import { maskOf, type AffinityStore } from '../topologymanager/index.js';
import { CM_CPU_MANAGER_CONFIG, CM_CPU_POLICY_OPTION, CM_CPU_STATE_INVALID, CPU_MANAGER_STATE_FILE, createCPUManager, type CPUManagerOptions } from './index.js';

const NO_AFFINITY: AffinityStore = { affinity: () => ({ numaAffinity: undefined, preferred: false }) };
const ALL_GATES = { enabled: () => true };

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'cpumanager-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

async function options(tree: Readonly<Record<string, string>>, extra: Partial<CPUManagerOptions> = {}): Promise<CPUManagerOptions> {
  return {
    policy: 'static', policyOptions: {}, gates: ALL_GATES, topology: CPUTopology.of(await machineOf(tree)),
    reservedMilliCPU: 1000, reservedSystemCPUs: CPUSet.EMPTY, topologyPolicy: 'none', stateDir: dir, logger: new FakeLogger(), ...extra,
  };
}

void describe('the CPU manager', () => {
  void it('gives a Guaranteed container exclusive CPUs, shrinks the shared pool, and keeps reserved CPUs out', async () => {
    const cm = createCPUManager(await options(ONE_NUMA_SYSFS), () => NO_AFFINITY);
    const gu = guaranteedPod('gu', ['1']);
    cm.allocate(gu, gu.spec!.containers[0]!);
    assert.equal(cm.cpuAffinity('gu', 'c0').toString(), '1', 'CPU 0 is reserved');
    const bu = podWith('bu', [BURSTABLE]);
    cm.allocate(bu, bu.spec!.containers[0]!);
    assert.equal(cm.cpuAffinity('bu', 'c0').toString(), '0', 'the shared pool without the exclusive CPU');
    const second = guaranteedPod('gu2', ['1']);
    assert.throws(() => { cm.allocate(second, second.spec!.containers[0]!); },
      (err: unknown) => err instanceof OrchError && err.message === 'not enough cpus available to satisfy request: requested=1, available=0');
    const saved = JSON.parse(await readFile(join(dir, CPU_MANAGER_STATE_FILE), 'utf8')) as Record<string, unknown>;
    assert.equal(saved['defaultCpuSet'], '0');
    assert.deepEqual(saved['entries'], { gu: { c0: '1' } });
  });

  void it('keeps assignments across a restart, releases stale ones, and refuses a changed policy', async () => {
    const first = createCPUManager(await options(TWO_NUMA_SYSFS), () => NO_AFFINITY);
    const gu = guaranteedPod('gu', ['2']);
    first.allocate(gu, gu.spec!.containers[0]!);
    const cpus = first.cpuAffinity('gu', 'c0').toString();
    const again = createCPUManager(await options(TWO_NUMA_SYSFS), () => NO_AFFINITY);
    again.allocate(gu, gu.spec!.containers[0]!);
    assert.equal(again.cpuAffinity('gu', 'c0').toString(), cpus);
    again.releaseUnless(() => false);
    assert.equal(again.cpuAffinity('gu', 'c0').toString(), '0-15', 'released into the shared pool');
    await assert.rejects(async () => createCPUManager(await options(TWO_NUMA_SYSFS, { policy: 'none' }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_CPU_STATE_INVALID && /configured policy "none" differs from state checkpoint policy "static"/.test(err.message));
  });

  void it('refuses a state file whose checksum does not match', async () => {
    createCPUManager(await options(ONE_NUMA_SYSFS), () => NO_AFFINITY);
    const path = join(dir, CPU_MANAGER_STATE_FILE);
    await writeFile(path, (await readFile(path, 'utf8')).replace('"0-1"', '"1"'));
    await assert.rejects(async () => createCPUManager(await options(ONE_NUMA_SYSFS), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_CPU_STATE_INVALID && /checksum/.test(err.message));
  });

  void it('needs a CPU reservation for the static policy and reserved CPUs that exist', async () => {
    await assert.rejects(async () => createCPUManager(await options(ONE_NUMA_SYSFS, { reservedMilliCPU: 0 }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_CPU_MANAGER_CONFIG);
    await assert.rejects(async () => createCPUManager(await options(ONE_NUMA_SYSFS, { reservedSystemCPUs: CPUSet.of(5) }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_CPU_MANAGER_CONFIG && /not a subset of online-cpus: 0-1/.test(err.message));
    await assert.rejects(async () => createCPUManager(await options(ONE_NUMA_SYSFS, { policyOptions: { 'full-pcpus-only': 'true' }, gates: { enabled: () => false } }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_CPU_POLICY_OPTION && /Beta-level Options not enabled/.test(err.message));
  });

  void it('full-pcpus-only refuses a request that is not whole cores with SMTAlignmentError', async () => {
    const cm = createCPUManager(await options(TWO_NUMA_SYSFS, { policyOptions: { 'full-pcpus-only': 'true' } }), () => NO_AFFINITY);
    const odd = guaranteedPod('odd', ['3']);
    assert.throws(() => { cm.allocate(odd, odd.spec!.containers[0]!); }, (err: unknown) => err instanceof AdmissionError && err.reason === SMT_ALIGNMENT_ERROR
      && err.message === 'SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2');
    const even = guaranteedPod('even', ['4']);
    cm.allocate(even, even.spec!.containers[0]!);
    assert.equal(cm.cpuAffinity('even', 'c0').toString(), '1-2,9-10', 'two whole cores, the reserved core 0 (CPUs 0 and 8) left out');
  });

  void it('aligns with the topology affinity and hints at the narrowest nodes', async () => {
    const node1: AffinityStore = { affinity: () => ({ numaAffinity: maskOf(1), preferred: true }) };
    const cm = createCPUManager(await options(TWO_NUMA_SYSFS), () => node1);
    const gu = guaranteedPod('gu', ['2']);
    const hints = cm.topologyHints(gu, gu.spec!.containers[0]!);
    assert.deepEqual(hints?.['cpu']?.map((h) => [h.numaAffinity, h.preferred]), [[1, true], [2, true], [3, false]]);
    cm.allocate(gu, gu.spec!.containers[0]!);
    assert.equal(cm.cpuAffinity('gu', 'c0').toString(), '4,12');
    assert.equal(cm.topologyHints(podWith('bu', [BURSTABLE]), { name: 'c0' }), undefined, 'no preference for shared containers');
  });

  void it('reconciles running containers to their CPU sets once, and again only after a change', async () => {
    const cm = createCPUManager(await options(ONE_NUMA_SYSFS), () => NO_AFFINITY);
    const bu = podWith('bu', [BURSTABLE]);
    const updates: string[] = [];
    const update = (id: string, cpus: string): Promise<void> => { updates.push(`${id}=${cpus}`); return Promise.resolve(); };
    const running = [{ id: 'b1', podUID: 'bu', name: 'c0' }, { id: 'g1', podUID: 'gu', name: 'c0' }];
    await cm.reconcile([bu], running, update);
    await cm.reconcile([bu], running, update);
    assert.deepEqual(updates, ['b1=0-1']);
    const gu = guaranteedPod('gu', ['1']);
    cm.allocate(gu, gu.spec!.containers[0]!);
    await cm.reconcile([bu, gu], running, update);
    assert.deepEqual(updates, ['b1=0-1', 'b1=0', 'g1=1']);
  });
});
