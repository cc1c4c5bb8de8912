import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PodStatus } from 'kubernetes-types/core/v1.js';

import { FakeClock } from '../../../api/fake-clock.js';
import { CONFIG_SEEN_ANNOTATION, type NodePod } from '../../../api/pod/index.js';
import { recordPodStarts } from './agent-metrics.js';

void describe('recordPodStarts', () => {
  void it('observes once per pod the time from first seen to Running, on the clock', () => {
    const clock = new FakeClock(Date.parse('2026-01-02T03:04:15Z'));
    const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop', annotations: { [CONFIG_SEEN_ANNOTATION]: '2026-01-02T03:04:05Z' } } };
    let listener: ((uid: string, status: PodStatus) => void) | undefined;
    const observed: number[] = [];
    recordPodStarts({ onChange: (l) => { listener = l; return () => undefined; } }, { desiredPods: () => [pod] }, (s) => observed.push(s), clock);
    listener?.('u1', { phase: 'Pending' });
    listener?.('u1', { phase: 'Running' });
    listener?.('u1', { phase: 'Running' });
    assert.deepEqual(observed, [10]);
  });
});
