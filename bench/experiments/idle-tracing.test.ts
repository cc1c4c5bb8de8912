import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIdleTracing, type TracingRound } from './idle-tracing.js';

void describe('idle tracing summary', () => {
  void it('gives each case its CPU and RSS means and ranges, and its difference from tracing off', () => {
    const rounds: TracingRound[] = [
      { agents: [{ cpu: 1.0, rssMiB: 70 }, { cpu: 1.1, rssMiB: 75 }, { cpu: 1.6, rssMiB: 80 }], containerd: 0.5, steal: 0 },
      { agents: [{ cpu: 1.2, rssMiB: 72 }, { cpu: 1.1, rssMiB: 77 }, { cpu: 1.8, rssMiB: 82 }], containerd: 0.7, steal: 1.5 },
    ];
    assert.deepEqual(formatIdleTracing(rounds, 42), [
      'tracing off: mean 1.10 % of a core (1.00–1.20); RSS 71.0 MiB (70.0–72.0)',
      'tracing on, sampling 0: mean 1.10 % of a core (1.10–1.10); RSS 76.0 MiB (75.0–77.0); vs off +0.00 points',
      'tracing on, every span sampled: mean 1.70 % of a core (1.60–1.80); RSS 81.0 MiB (80.0–82.0); vs off +0.60 points',
      'containerd beside them: mean 0.60 %; steal 0.00–1.50 %; spans received 42',
    ]);
  });
});
