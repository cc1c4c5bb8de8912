import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import type { PodRuntimeManager, RuntimePodStatus } from '../kuberuntime/types.js';
import { FakeLogger } from '../logging/testing.js';
import { createStatusManager } from '../status/index.js';
import { createPodSyncer, DEADLINE_EXCEEDED_REASON } from './index.js';

/** A runtime that holds nothing and makes nothing: the sync's own decisions are what is tested. */
const emptyRuntime = (clock: FakeClock): PodRuntimeManager => ({
  getPodStatus: (uid, name, namespace): Promise<RuntimePodStatus> =>
    Promise.resolve({ uid, name, namespace, ips: [], sandboxes: [], containers: [], timestamp: clock.now() }),
  syncPod: () => Promise.resolve({ errors: [] }),
  killPod: () => Promise.resolve(),
  removePod: () => Promise.resolve(),
  listPods: () => Promise.resolve([]),
});

void describe('the pod sync', () => {
  void it('syncs again when the active deadline falls due, and fails the pod once the clock passed it', async () => {
    const clock = new FakeClock();
    const status = createStatusManager();
    const events: string[] = [];
    const syncer = createPodSyncer({
      runtime: emptyRuntime(clock),
      cgroups: { ensure: () => Promise.resolve('/pod'), remove: () => Promise.resolve() },
      volumes: { preparePodVolumes: () => Promise.resolve(new Map()), cleanupPodVolumes: () => Promise.resolve() },
      status, logger: new FakeLogger(), hostIPs: () => ['10.0.0.1'], isDesired: () => true, qosClass: () => 'BestEffort', clock,
      onEvent: (e) => events.push(e.reason),
    });
    const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { activeDeadlineSeconds: 30, containers: [{ name: 'c', image: 'busybox' }] } };
    assert.deepEqual(await syncer.syncPod(pod, 'create'), { requeueAfterMs: 30_000 });
    await clock.advance(10_000);
    assert.deepEqual(await syncer.syncPod(pod, 'sync'), { requeueAfterMs: 20_000 });
    await clock.advance(20_000);
    assert.deepEqual(await syncer.syncPod(pod, 'sync'), { terminal: true });
    assert.equal(status.getPodStatus('u1')?.phase, 'Failed');
    assert.equal(status.getPodStatus('u1')?.reason, DEADLINE_EXCEEDED_REASON);
    assert.deepEqual(events, [DEADLINE_EXCEEDED_REASON]);
  });

  void it('publishes the failure a kill carries (an eviction) with its condition, and releases the pod\'s volumes once terminated', async () => {
    const clock = new FakeClock();
    const status = createStatusManager();
    const cleaned: string[] = [];
    const syncer = createPodSyncer({
      runtime: emptyRuntime(clock),
      cgroups: { ensure: () => Promise.resolve('/pod'), remove: () => Promise.resolve() },
      volumes: { preparePodVolumes: () => Promise.resolve(new Map()), cleanupPodVolumes: (uid) => { cleaned.push(uid); return Promise.resolve(); } },
      status, logger: new FakeLogger(), hostIPs: () => ['10.0.0.1'], isDesired: () => true, qosClass: () => 'BestEffort', clock,
    });
    const pod: NodePod = { metadata: { uid: 'u2', name: 'hog', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    assert.deepEqual(await syncer.syncPod(pod, 'create'), {});
    const message = 'The node was low on resource: memory. ';
    await syncer.syncTerminatingPod(pod, 1, { reason: 'Evicted', message, disruptionReason: 'TerminationByNodeagent' });
    const s = status.getPodStatus('u2');
    assert.deepEqual([s?.phase, s?.reason, s?.message], ['Failed', 'Evicted', message]);
    assert.deepEqual(s?.conditions?.find((c) => c.type === 'DisruptionTarget'), {
      type: 'DisruptionTarget', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'TerminationByNodeagent', message,
    });
    await syncer.syncTerminatedPod(pod);
    assert.equal(status.getPodStatus('u2')?.reason, 'Evicted', 'the last status stays while the pod is wanted');
    assert.deepEqual(cleaned, ['u2'], 'its volumes go although its source still wants it');
  });
});
