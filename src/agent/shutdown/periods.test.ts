import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodePod } from '../../api/pod/index.js';
import { groupByPriority, periodRequested, shutdownPeriods, SYSTEM_CRITICAL_PRIORITY } from './periods.js';

const pod = (name: string, priority?: number): NodePod => ({ metadata: { uid: name, name, namespace: 'default' }, spec: { containers: [], ...(priority === undefined ? {} : { priority }) } });

void describe('shutdown periods', () => {
  void it('are off without a period', () => {
    assert.deepEqual(shutdownPeriods({ shutdownGracePeriod: 0, shutdownGracePeriodCriticalPods: 0, shutdownGracePeriodByPodPriority: [] }), []);
  });

  void it('split shutdownGracePeriod between regular and critical pods', () => {
    const periods = shutdownPeriods({ shutdownGracePeriod: 30e9, shutdownGracePeriodCriticalPods: 10e9, shutdownGracePeriodByPodPriority: [] });
    assert.deepEqual(periods, [{ priority: 0, shutdownGracePeriodSeconds: 20 }, { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: 10 }]);
    assert.equal(periodRequested(periods), 30);
  });

  void it('sort shutdownGracePeriodByPodPriority by priority', () => {
    const periods = shutdownPeriods({
      shutdownGracePeriod: 0, shutdownGracePeriodCriticalPods: 0,
      shutdownGracePeriodByPodPriority: [{ priority: 100000, shutdownGracePeriodSeconds: 5 }, { priority: 0, shutdownGracePeriodSeconds: 20 }, { priority: 1000, shutdownGracePeriodSeconds: 10 }],
    });
    assert.deepEqual(periods.map((p) => p.priority), [0, 1000, 100000]);
    assert.equal(periodRequested(periods), 35);
  });

  void it('put each pod in the group of the highest priority not above its own (below all: the lowest)', () => {
    const periods = [{ priority: 0, shutdownGracePeriodSeconds: 20 }, { priority: 1000, shutdownGracePeriodSeconds: 10 }, { priority: 100000, shutdownGracePeriodSeconds: 5 }];
    const groups = groupByPriority(periods, [pod('none'), pod('neg', -5), pod('edge', 1000), pod('mid', 99999), pod('top', 2e9)]);
    assert.deepEqual(groups.map((g) => g.pods.map((p) => p.metadata.name)), [['none', 'neg'], ['edge', 'mid'], ['top']]);
  });
});
