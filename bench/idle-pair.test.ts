import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIdlePair, type IdlePairOptions, type RoundResult } from './idle-pair.js';

void describe('idle pair summary', () => {
  void it('gives each configuration its flags, CPU and RSS means and ranges, and the per-round CPU difference B − A', () => {
    const o: IdlePairOptions = { a: ['--x'], b: ['--x', '--y'], pods: 110, rounds: 2, windowSeconds: 40, settleSeconds: 20 };
    const rounds: RoundResult[] = [
      { agent: { a: 1.2, b: 0.9 }, rssMiB: { a: 78.2, b: 80.4 }, containerd: { a: 0.5, b: 0.7 }, stealPercent: 0, aOn: 0 },
      { agent: { a: 1.0, b: 0.9 }, rssMiB: { a: 77.8, b: 81.6 }, containerd: { a: 0.6, b: 0.6 }, stealPercent: 2.5, aOn: 1 },
    ];
    assert.deepEqual(formatIdlePair(o, rounds), [
      'A [--x]: mean 1.10 % of a core (1.00–1.20); RSS 78.0 MiB (77.8–78.2)',
      'B [--x --y]: mean 0.90 % of a core (0.90–0.90); RSS 81.0 MiB (80.4–81.6)',
      'B − A per round: -0.30, -0.10; mean -0.20 points',
      'containerd beside them: mean 0.60 %; steal 0.00–2.50 %',
    ]);
  });
});
