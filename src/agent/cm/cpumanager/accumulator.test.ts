import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OrchError } from '../../../api/errors.js';
import { CM_ALLOCATION_FAILED } from '../admission.js';
import { CPUSet } from '../cpuset.js';
import { CPUTopology } from '../machine/index.js';
import { FOUR_NUMA_SYSFS, TWO_NUMA_SYSFS, machineOf } from '../machine/testdata/index.js';
import { takeByTopologyDistributed, takeByTopologyPacked } from './accumulator.js';

void describe('choosing CPUs by topology', () => {
  void it('packs: whole cores first, the fullest node and core first', async () => {
    const topo = CPUTopology.of(await machineOf(TWO_NUMA_SYSFS));
    assert.equal(takeByTopologyPacked(topo, topo.cpus(), 2).toString(), '0,8', 'one whole core');
    assert.equal(takeByTopologyPacked(topo, topo.cpus(), 1).toString(), '0');
    assert.equal(takeByTopologyPacked(topo, topo.cpus(), 8).toString(), '0-3,8-11', 'a whole socket (and node)');
    // With CPU 0 taken, its sibling 8 is the first single thread to take (a partly used core).
    assert.equal(takeByTopologyPacked(topo, topo.cpus().difference(CPUSet.of(0)), 1).toString(), '8');
    // Node 1 has fewer free CPUs: it is filled first.
    assert.equal(takeByTopologyPacked(topo, topo.cpus().difference(CPUSet.parse('4-5')), 2).toString(), '6,14');
  });

  void it('fails with upstream message when the CPUs are not there', async () => {
    const topo = CPUTopology.of(await machineOf(TWO_NUMA_SYSFS));
    assert.throws(() => takeByTopologyPacked(topo, CPUSet.of(1, 2), 3), (err: unknown) => err instanceof OrchError && err.code === CM_ALLOCATION_FAILED
      && err.message === 'not enough cpus available to satisfy request: requested=3, available=2');
  });

  void it('distributes a request across NUMA nodes evenly when one node is not enough', async () => {
    const topo = CPUTopology.of(await machineOf(FOUR_NUMA_SYSFS));
    const packed = takeByTopologyPacked(topo, topo.cpus(), 8);
    assert.equal(packed.toString(), '0-3,8-11', 'packed fills nodes 0 and 1');
    const spread = takeByTopologyDistributed(topo, topo.cpus(), 6, 2);
    assert.equal(topo.cpusInNUMANodes(0).intersection(spread).size() + topo.cpusInNUMANodes(1).intersection(spread).size()
      + topo.cpusInNUMANodes(2).intersection(spread).size(), 6, 'spread over two nodes in whole cores: 4 + 2 or over three: 2 + 2 + 2');
    for (const n of [0, 1, 2, 3]) assert.ok(topo.cpusInNUMANodes(n).intersection(spread).size() <= 4);
    assert.equal(takeByTopologyDistributed(topo, topo.cpus(), 4, 2).toString(), '0-1,8-9', 'one node suffices: packed');
  });
});
