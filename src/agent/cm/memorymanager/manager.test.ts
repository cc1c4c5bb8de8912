import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { OrchError } from '../../../api/errors.js';
import type { NodePod } from '../../../api/pod/index.js';
import { FakeLogger } from '../../logging/testing.js';
import { BURSTABLE, podWith } from '../fixtures.js';
import { ONE_NUMA_SYSFS, TWO_NUMA_SYSFS, machineOf } from '../machine/testdata/index.js';
import { maskOf, type AffinityStore } from '../topologymanager/index.js';
import { CM_MEMORY_MANAGER_CONFIG, CM_MEMORY_STATE_INVALID, MEMORY_MANAGER_STATE_FILE, createMemoryManager, type MemoryManagerOptions } from './index.js';

const GI = 1024 ** 3;
const NO_AFFINITY: AffinityStore = { affinity: () => ({ numaAffinity: undefined, preferred: false }) };

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'memorymanager-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

async function options(tree: Readonly<Record<string, string>>, extra: Partial<MemoryManagerOptions> = {}): Promise<MemoryManagerOptions> {
  return {
    policy: 'Static', nodes: (await machineOf(tree)).numaNodes, allocatableReservation: new Map([['memory', GI]]),
    reservedMemory: [{ numaNode: 0, limits: { memory: '1Gi' } }], stateDir: dir, logger: new FakeLogger(), ...extra,
  };
}

function memoryPod(uid: string, memory: string, hugepages?: string): NodePod {
  const limits: Record<string, string> = { cpu: '1', memory, ...(hugepages === undefined ? {} : { 'hugepages-2Mi': hugepages }) };
  return podWith(uid, [{ requests: limits, limits }]);
}

void describe('the memory manager', () => {
  void it('validates reservedMemory against node allocatable and the machine', async () => {
    await assert.rejects(async () => createMemoryManager(await options(ONE_NUMA_SYSFS, { reservedMemory: [{ numaNode: 0, limits: { memory: '512Mi' } }] }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_MEMORY_MANAGER_CONFIG
        && err.message === 'the total amount "512Mi" of type "memory" is not equal to the value "1Gi" determined by Node Allocatable feature');
    await assert.rejects(async () => createMemoryManager(await options(ONE_NUMA_SYSFS, { reservedMemory: [{ numaNode: 1, limits: { memory: '1Gi' } }] }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && /references a NUMA node 1 that does not exist/.test(err.message));
    await assert.rejects(async () => createMemoryManager(await options(ONE_NUMA_SYSFS, { reservedMemory: [], allocatableReservation: new Map() }), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && /you should specify the system reserved memory/.test(err.message));
  });

  void it('places a Guaranteed container on the narrowest node that fits, and none of a Burstable one', async () => {
    const mm = createMemoryManager(await options(TWO_NUMA_SYSFS), () => NO_AFFINITY);
    const gu = memoryPod('gu', '1Gi');
    mm.allocate(gu, gu.spec!.containers[0]!);
    assert.equal(mm.numaNodes('gu', 'c0').toString(), '0');
    const big = memoryPod('big', '40Gi');
    assert.throws(() => { mm.allocate(big, big.spec!.containers[0]!); }, (err: unknown) => err instanceof OrchError
      && err.message === '[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available', 'node 0 holds a single-node allocation: no group with it');
    const bu = podWith('bu', [BURSTABLE]);
    mm.allocate(bu, bu.spec!.containers[0]!);
    assert.equal(mm.numaNodes('bu', 'c0').toString(), '');
  });

  void it('allocates hugepages with memory on the affinity node, keeps it across a restart, and releases it', async () => {
    const node1: AffinityStore = { affinity: () => ({ numaAffinity: maskOf(0), preferred: true }) };
    const opts = await options(TWO_NUMA_SYSFS, { reservedMemory: [{ numaNode: 0, limits: { memory: '512Mi' } }, { numaNode: 1, limits: { memory: '512Mi' } }] });
    const mm = createMemoryManager(opts, () => node1);
    const gu = memoryPod('gu', '2Gi', '4Mi');
    assert.deepEqual(mm.topologyHints(gu, gu.spec!.containers[0]!)?.['hugepages-2Mi']?.map((h) => [h.numaAffinity, h.preferred]), [[maskOf(0), true], [maskOf(0, 1), false]],
      'only node 0 has 2 MiB pages');
    mm.allocate(gu, gu.spec!.containers[0]!);
    const saved = JSON.parse(await readFile(join(dir, MEMORY_MANAGER_STATE_FILE), 'utf8')) as { machineState: Partial<Record<string, { memoryMap: Partial<Record<string, { reserved: number }>> }>> };
    const node0 = saved.machineState['0']?.memoryMap;
    assert.ok(node0 !== undefined);
    assert.equal(node0['memory']?.reserved, 2 * GI);
    assert.equal(node0['hugepages-2Mi']?.reserved, 4 * 1024 ** 2);
    const again = createMemoryManager(opts, () => NO_AFFINITY);
    assert.equal(again.numaNodes('gu', 'c0').toString(), '0');
    again.releaseUnless(() => false);
    assert.equal(again.numaNodes('gu', 'c0').toString(), '');
    createMemoryManager(opts, () => NO_AFFINITY);
  });

  void it('refuses a state file written by another policy', async () => {
    createMemoryManager(await options(ONE_NUMA_SYSFS, { policy: 'None' }), () => NO_AFFINITY);
    await assert.rejects(async () => createMemoryManager(await options(ONE_NUMA_SYSFS), () => NO_AFFINITY),
      (err: unknown) => err instanceof OrchError && err.code === CM_MEMORY_STATE_INVALID && /configured policy "Static" differs from state checkpoint policy "None"/.test(err.message));
  });
});
