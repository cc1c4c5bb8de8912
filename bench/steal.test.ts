import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCpuTimes, stealPercent } from './steal.js';

void describe('machine steal time', () => {
  void it('reads the cpu line and takes steal as a share of all CPU time between two samples', () => {
    const a = parseCpuTimes('cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 50 0 25 400 5 0 2 18 0 0\n');
    const b = parseCpuTimes('cpu  200 0 100 1500 10 0 5 185 7 0\n');
    assert.deepEqual(a, { steal: 35, total: 1000 });
    assert.equal(b.total, 2000);
    assert.equal(stealPercent(a, b), 15);
    assert.equal(stealPercent(a, a), 0);
  });

  void it('names /proc/stat when the line is not what it expects', () => {
    assert.throws(() => parseCpuTimes('intr 1 2 3\n'), /\/proc\/stat: the first line is not the cpu line/);
    assert.throws(() => parseCpuTimes('cpu 1 2 x 4 5 6 7 8\n'), /\/proc\/stat: cannot read the cpu line/);
  });
});
