import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { CONTAINER_GC_PERIOD_ENV, IMAGE_GC_PERIOD_ENV, gcPeriods, periodFromEnv } from './periods.js';

void describe('the GC periods from the environment', () => {
  void it('are Go durations, the default when unset, and a failure naming the variable otherwise', () => {
    assert.equal(periodFromEnv({}, CONTAINER_GC_PERIOD_ENV, 60_000), 60_000);
    assert.equal(periodFromEnv({ [CONTAINER_GC_PERIOD_ENV]: '1.5s' }, CONTAINER_GC_PERIOD_ENV, 60_000), 1500);
    assert.throws(() => periodFromEnv({ [CONTAINER_GC_PERIOD_ENV]: '0s' }, CONTAINER_GC_PERIOD_ENV, 1),
      (err: unknown) => err instanceof OrchError && err.code === 'GC_INVALID_PERIOD' && err.subject === CONTAINER_GC_PERIOD_ENV);
    assert.throws(() => periodFromEnv({ [CONTAINER_GC_PERIOD_ENV]: 'soon' }, CONTAINER_GC_PERIOD_ENV, 1), /NODEAGENT_CONTAINER_GC_PERIOD|soon/);
  });

  void it('default to upstream\'s 1 and 5 minutes, each variable shortening its own', () => {
    assert.deepEqual(gcPeriods({}), { containerPeriodMs: 60_000, imagePeriodMs: 300_000 });
    assert.deepEqual(gcPeriods({ [IMAGE_GC_PERIOD_ENV]: '2s' }), { containerPeriodMs: 60_000, imagePeriodMs: 2_000 });
  });
});
