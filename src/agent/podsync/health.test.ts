import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeDeadlineLeftMs } from './deadline.js';

void describe('active deadline', () => {
  const pod = (seconds?: number) => ({ spec: { containers: [], ...(seconds === undefined ? {} : { activeDeadlineSeconds: seconds }) } });
  void it('is the time left from the start time; undefined without a deadline or a start', () => {
    const now = new Date('2026-01-01T00:00:10Z');
    assert.equal(activeDeadlineLeftMs(pod(30), '2026-01-01T00:00:00Z', now), 20_000);
    assert.equal(activeDeadlineLeftMs(pod(5), '2026-01-01T00:00:00Z', now), -5000);
    assert.equal(activeDeadlineLeftMs(pod(), '2026-01-01T00:00:00Z', now), undefined);
    assert.equal(activeDeadlineLeftMs(pod(5), undefined, now), undefined);
  });
});
