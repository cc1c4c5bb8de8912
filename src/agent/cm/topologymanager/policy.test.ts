import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { bitsOf, isNarrowerThan, iterateBitMasks, maskOf } from './bitmask.js';
import type { NUMAInfo, ProviderHints, TopologyHint } from './merge.js';
import { createPolicy, type PolicyName } from './policy.js';

const TWO: NUMAInfo = { nodes: [0, 1], distances: new Map([[0, [10, 21]], [1, [21, 10]]]) };
const FOUR: NUMAInfo = { nodes: [0, 1, 2, 3], distances: new Map([[0, [10, 11, 20, 20]], [1, [11, 10, 20, 20]], [2, [20, 20, 10, 11]], [3, [20, 20, 11, 10]]]) };

const h = (bits: number[] | undefined, preferred: boolean): TopologyHint => ({ numaAffinity: bits === undefined ? undefined : maskOf(...bits), preferred });

function merge(policy: PolicyName, numa: NUMAInfo, hints: ProviderHints[], preferClosestNUMA = false): { nodes: number[] | undefined; preferred: boolean; admit: boolean } {
  const { hint, admit } = createPolicy(policy, numa, { preferClosestNUMA }).merge(hints);
  return { nodes: hint.numaAffinity === undefined ? undefined : bitsOf(hint.numaAffinity), preferred: hint.preferred, admit };
}

void describe('bit masks', () => {
  void it('orders masks by width, then by lower nodes, and iterates combinations smallest first', () => {
    assert.equal(isNarrowerThan(maskOf(1), maskOf(0, 1)), true);
    assert.equal(isNarrowerThan(maskOf(0, 1), maskOf(0, 2)), true);
    const seen: number[][] = [];
    iterateBitMasks([0, 1, 2], (m) => seen.push(bitsOf(m)));
    assert.deepEqual(seen, [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]);
  });
});

void describe('topology manager policies', () => {
  const cpuOnNode1 = { cpu: [h([1], true), h([0, 1], false)] };
  const memoryOnNode0 = { memory: [h([0], true), h([0, 1], false)] };

  void it('merges providers that agree into the narrowest preferred hint', () => {
    assert.deepEqual(merge('restricted', TWO, [cpuOnNode1, { memory: [h([1], true), h([0, 1], false)] }]), { nodes: [1], preferred: true, admit: true });
  });

  void it('takes a provider without preference as "any node"', () => {
    assert.deepEqual(merge('single-numa-node', TWO, [cpuOnNode1, undefined, { memory: null }]), { nodes: [1], preferred: true, admit: true });
  });

  void it('refuses hints that cannot be aligned under restricted and single-numa-node, admits them under best-effort', () => {
    assert.deepEqual(merge('best-effort', TWO, [cpuOnNode1, memoryOnNode0]), { nodes: [0], preferred: false, admit: true });
    assert.deepEqual(merge('restricted', TWO, [cpuOnNode1, memoryOnNode0]), { nodes: [0], preferred: false, admit: false });
    assert.equal(merge('single-numa-node', TWO, [cpuOnNode1, memoryOnNode0]).admit, false);
  });

  void it('refuses a resource that no mask can satisfy (an empty hint list)', () => {
    assert.equal(merge('restricted', TWO, [{ cpu: [] }]).admit, false);
    assert.equal(merge('best-effort', TWO, [{ cpu: [] }]).admit, true);
  });

  void it('single-numa-node refuses a request that needs two nodes, and turns an all-nodes hint into "any"', () => {
    assert.equal(merge('single-numa-node', TWO, [{ cpu: [h([0, 1], true)] }]).admit, false);
    assert.deepEqual(merge('single-numa-node', TWO, [{ cpu: null }]), { nodes: undefined, preferred: true, admit: true });
  });

  void it('among non-preferred hints picks the size closest to the widest narrowest need', () => {
    const r = merge('best-effort', FOUR, [{ cpu: [h([0, 1], true), h([0, 1, 2], false)] }, { memory: [h([2, 3], true), h([1, 2, 3], false)] }]);
    assert.equal(r.preferred, false);
    assert.deepEqual(r.nodes, [1, 2]);
  });

  void it('with prefer-closest-numa-nodes prefers the nearer pair of the same size', () => {
    const hints: ProviderHints[] = [{ cpu: [h([0, 2], true), h([2, 3], true)] }];
    assert.deepEqual(merge('restricted', FOUR, hints).nodes, [0, 2], 'narrowest: lower node numbers');
    assert.deepEqual(merge('restricted', FOUR, hints, true).nodes, [2, 3], 'closest: nodes 2 and 3 are at distance 11');
  });

  void it('policy none admits without a hint', () => {
    assert.deepEqual(merge('none', TWO, [{ cpu: [] }]), { nodes: undefined, preferred: false, admit: true });
  });
});
