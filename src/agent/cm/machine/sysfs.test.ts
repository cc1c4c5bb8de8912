import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OrchError } from '../../../api/errors.js';
import { CPUSet } from '../cpuset.js';
import { CM_TOPOLOGY_UNREADABLE, CPUTopology } from './index.js';
import { FOUR_NUMA_SYSFS, ONE_NUMA_SYSFS, TWO_NUMA_SYSFS, machineOf } from './testdata/index.js';

const read = machineOf;

void describe('the sysfs topology reader', () => {
  void it('reads a two-socket machine: sockets, cores named by their lowest thread, NUMA nodes with memory and hugepages', async () => {
    const machine = await read(TWO_NUMA_SYSFS);
    assert.equal(machine.cpus.length, 16);
    assert.deepEqual(machine.cpus[9], { id: 9, coreId: 1, socketId: 0, numaNode: 0 });
    assert.deepEqual(machine.cpus[12], { id: 12, coreId: 4, socketId: 1, numaNode: 1 });
    const [node0, node1, ...more] = machine.numaNodes;
    assert.ok(node0 !== undefined && node1 !== undefined && more.length === 0, 'two NUMA nodes');
    assert.equal(node0.cpus.toString(), '0-3,8-11');
    assert.equal(node0.memoryBytes, 32 * 1024 ** 3);
    assert.deepEqual(node0.hugepages, [{ pageSizeBytes: 2 * 1024 ** 2, pages: 512 }, { pageSizeBytes: 1024 ** 3, pages: 0 }]);
    assert.deepEqual(node1.distances, [21, 10]);
    const topo = CPUTopology.of(machine);
    assert.deepEqual([topo.numCPUs, topo.numCores, topo.numSockets, topo.numNUMANodes, topo.cpusPerCore()], [16, 8, 2, 2, 2]);
    assert.equal(topo.cpusInNUMANodes(1).toString(), '4-7,12-15');
    assert.equal(topo.coreSiblingsOf(CPUSet.of(0, 5)).toString(), '0,5,8,13');
  });

  void it('reads a one-socket machine split into four NUMA nodes', async () => {
    const topo = CPUTopology.of(await read(FOUR_NUMA_SYSFS));
    assert.deepEqual([topo.numCPUs, topo.numCores, topo.numSockets, topo.numNUMANodes], [16, 8, 1, 4]);
    assert.equal(topo.cpusInNUMANodes(2).toString(), '4-5,12-13');
    assert.equal(topo.socketsInNUMANodes(0, 3).toString(), '0');
    const free = topo.keepOnly(CPUSet.of(0, 1, 8));
    assert.equal(free.cpus().toString(), '0-1,8');
    assert.equal(free.cpusPerCore(), 2, 'the totals stay the whole machine');
  });

  void it('reads the recorded development machine: two single-thread cores on one node', async () => {
    const machine = await read(ONE_NUMA_SYSFS);
    assert.deepEqual(machine.cpus.map((c) => c.coreId), [0, 1]);
    assert.equal(machine.numaNodes[0]?.memoryBytes, 9398476 * 1024);
  });

  void it('fails with CM_TOPOLOGY_UNREADABLE naming the missing file', async () => {
    const broken = { ...ONE_NUMA_SYSFS };
    delete (broken as Record<string, string>)['devices/system/cpu/cpu1/topology/physical_package_id'];
    await assert.rejects(read(broken), (err: unknown) => err instanceof OrchError && err.code === CM_TOPOLOGY_UNREADABLE && /cpu1\/topology\/physical_package_id/.test(err.message));
  });
});
