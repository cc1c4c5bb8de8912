import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIdlePair, type IdlePairOptions, type RoundResult } from './idle-pair.js';

void describe('idle pair summary', () => {
  void it('names each configuration by build and flags, with its CPU and RSS means and ranges, and the per-round CPU difference B − A', () => {
    const o: IdlePairOptions = { a: { bin: '/a/bin/nodeagent' }, b: { bin: '/a/bin/nodeagent', nodeFlags: ['--x', '--y'] }, pods: 110, rounds: 2, windowSeconds: 40, settleSeconds: 20 };
    const rounds: RoundResult[] = [
      { a: { cpu: 1.2, rssMiB: 78.2 }, b: { cpu: 0.9, rssMiB: 80.4 }, containerd: 0.6, steal: 0 },
      { a: { cpu: 1.0, rssMiB: 77.8 }, b: { cpu: 0.9, rssMiB: 81.6 }, containerd: 0.6, steal: 2.5 },
    ];
    assert.deepEqual(formatIdlePair(o, rounds), [
      'A /a/bin/nodeagent: mean 1.10 % of a core (1.00–1.20); RSS 78.0 MiB (77.8–78.2)',
      'B /a/bin/nodeagent [--x --y]: mean 0.90 % of a core (0.90–0.90); RSS 81.0 MiB (80.4–81.6)',
      'B − A per round: -0.30, -0.10; mean -0.20 points',
      'containerd beside them: mean 0.60 %; steal 0.00–2.50 %',
    ]);
  });
});
