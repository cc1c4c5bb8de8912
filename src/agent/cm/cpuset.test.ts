import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OrchError } from '../../api/errors.js';
import { CM_CPUSET_INVALID, CPUSet } from './cpuset.js';

void describe('CPUSet', () => {
  void it('parses and prints the Linux list form', () => {
    assert.deepEqual(CPUSet.parse('0-3, 7,5').list(), [0, 1, 2, 3, 5, 7]);
    assert.equal(CPUSet.parse('0-3,7,5').toString(), '0-3,5,7');
    assert.equal(CPUSet.of(1, 0).toString(), '0-1');
    assert.equal(CPUSet.parse(' \n').toString(), '');
  });

  void it('refuses what is not a list', () => {
    for (const bad of ['3-1', 'a', '1,,2', '-1']) {
      assert.throws(() => CPUSet.parse(bad, 'reservedSystemCPUs'), (err: unknown) => err instanceof OrchError && err.code === CM_CPUSET_INVALID && err.subject === 'reservedSystemCPUs');
    }
  });

  void it('computes unions, intersections, differences and subsets', () => {
    const a = CPUSet.parse('0-5');
    const b = CPUSet.parse('4-9');
    assert.equal(a.union(b).toString(), '0-9');
    assert.equal(a.intersection(b).toString(), '4-5');
    assert.equal(a.difference(b).toString(), '0-3');
    assert.equal(CPUSet.of(4).isSubsetOf(a), true);
    assert.equal(b.isSubsetOf(a), false);
    assert.equal(a.equals(CPUSet.parse('0-5')), true);
  });
});
