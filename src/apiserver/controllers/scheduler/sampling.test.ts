import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { feasibleNodesToFind } from './sampling.js';

void describe('feasible nodes to find (upstream numFeasibleNodesToFind, adaptive percentage)', () => {
  void it('filters a small cluster whole, then 50 % less a point per 125 nodes, at least 5 % and 100 nodes', () => {
    const cases: [number, number][] = [
      [0, 0], [1, 1], [99, 99], [100, 100], [200, 100], [250, 120], [1000, 420], [3000, 780], [5000, 500], [6000, 300], [100_000, 5000],
    ];
    for (const [all, expected] of cases) assert.equal(feasibleNodesToFind(all), expected, `${all} nodes`);
  });
});
