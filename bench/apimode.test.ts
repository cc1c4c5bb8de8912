import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiModeRows, type ApiModeResult } from './apimode.js';

const steps: ApiModeResult['sequential']['steps'] = { scheduled: [30], 'seen by the agent': [1], sandbox: [200], started: [400], 'status in the API server': [60] };
const usage = (rssMiB: number, cpuPercent: number): { rssMiB: number; cpuPercent: number } => ({ rssMiB, cpuPercent });

void test('apiModeRows gives each build its own burst and idle rows, read from its own column', () => {
  const result: ApiModeResult = {
    agentBins: ['/a/bin/nodeagent', '/b/bin/nodeagent'],
    bursts: [{ pods: 20, rounds: [{ rawMs: 1000, agentMs: [1500, 1100] }], cpuMsPerPod: [[30], [12]] }],
    idle: { pods: 20, seconds: 15, builds: [{ agent: usage(90, 1.5), containerd: usage(0, 2) }, { agent: usage(80, 0.75), containerd: usage(0, 2.5) }] },
    sequential: { raw: [300], createToStarted: [600], steps },
  };
  const rows = apiModeRows(result);
  const burst = rows.filter((r) => r.measure.includes('20 pods created at once'));
  assert.equal(burst.length, 2);
  assert.match(burst[0]?.measure ?? '', /\/a\/bin\/nodeagent/);
  assert.match(burst[0]?.ours ?? '', /^1\.50× .*; 30 ms$/);
  assert.match(burst[1]?.measure ?? '', /\/b\/bin\/nodeagent/);
  assert.match(burst[1]?.ours ?? '', /^1\.10× .*; 12 ms$/);
  const idle = rows.filter((r) => r.measure.includes('idle'));
  assert.deepEqual(idle.map((r) => r.ours), ['90.0 MiB / 1.50 %', '80.0 MiB / 0.75 %']);
  assert.equal(idle[1]?.baseline, 'containerd 2.50 %');
});

void test('apiModeRows of one build names no build', () => {
  const result: ApiModeResult = {
    agentBins: ['/a/bin/nodeagent'],
    bursts: [{ pods: 110, rounds: [{ rawMs: 1000, agentMs: [2000] }], cpuMsPerPod: [[33]] }],
    idle: { pods: 110, seconds: 60, builds: [{ agent: usage(97, 3.45), containerd: usage(0, 3.7) }] },
    sequential: { raw: [300], createToStarted: [600], steps },
  };
  const rows = apiModeRows(result);
  assert.equal(rows.length, 4);
  assert.ok(rows.every((r) => !r.measure.includes('/a/bin')));
  assert.equal(rows[0]?.ours.startsWith('2.00×'), true);
});
