import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HealthChecks } from './index.js';

void describe('health checks', () => {
  void it('keeps checks in order and reports the first failing one', () => {
    const problems = new Map<string, string>();
    const checks = new HealthChecks([{ name: 'ping', check: () => undefined }]);
    checks.add({ name: 'loop', check: () => problems.get('loop') });
    checks.add({ name: 'other', check: () => problems.get('other') });
    assert.deepEqual(checks.all().map((c) => c.name), ['ping', 'loop', 'other']);
    assert.equal(checks.firstProblem(), undefined);
    problems.set('other', 'other broke');
    assert.equal(checks.firstProblem(), 'other broke');
    problems.set('loop', 'stalled');
    assert.equal(checks.firstProblem(), 'stalled');
  });
});
