import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import type { PodRuntimeManager, RuntimePodStatus } from '../kuberuntime/index.js';
import { FakeLogger } from '../logging/testing.js';
import { createStatusManager } from '../status/index.js';
import { createPodSyncer, DEADLINE_EXCEEDED_REASON, PODSYNC_NETWORK_NOT_READY } from './index.js';

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

  void it('records FailedSync when the runtime cannot be read, NetworkNotReady off the host network, FailedKillPod when the kill fails', async () => {
    const clock = new FakeClock();
    const events: string[] = [];
    let readFails = false;
    let network: string | undefined = 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:x';
    const base = emptyRuntime(clock);
    const runtime: PodRuntimeManager = {
      ...base,
      getPodStatus: (uid, name, namespace) => (readFails ? Promise.reject(new Error('connection refused'))
        : Promise.resolve({ uid, name, namespace, ips: [], sandboxes: [], containers: [{ id: 'c1', name: 'c', state: 'running' } as RuntimePodStatus['containers'][number]], timestamp: clock.now() })),
      killPod: () => Promise.reject(new Error('stop timed out')),
    };
    const syncer = createPodSyncer({
      runtime,
      cgroups: { ensure: () => Promise.resolve('/pod'), remove: () => Promise.resolve() },
      volumes: { preparePodVolumes: () => Promise.resolve(new Map()), cleanupPodVolumes: () => Promise.resolve() },
      status: createStatusManager(), logger: new FakeLogger(), hostIPs: () => ['10.0.0.1'], isDesired: () => true, qosClass: () => 'BestEffort', clock,
      onEvent: (e) => events.push(`${e.reason}: ${e.message}`),
      networkError: () => Promise.resolve(network),
    });
    const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    await assert.rejects(syncer.syncPod(pod, 'create'), { code: PODSYNC_NETWORK_NOT_READY });
    assert.deepEqual(events, [`NetworkNotReady: network is not ready: ${network}`]);
    await syncer.syncPod({ ...pod, spec: { ...pod.spec, containers: pod.spec?.containers ?? [], hostNetwork: true } }, 'sync');
    assert.equal(events.length, 1, 'a host-network pod does not wait for the pod network');
    network = undefined;
    readFails = true;
    await assert.rejects(syncer.syncPod(pod, 'sync'), /connection refused/);
    assert.equal(events[1], 'FailedSync: error determining status: connection refused');
    readFails = false;
    await assert.rejects(syncer.syncTerminatingPod(pod, 2), /stop timed out/);
    assert.equal(events[2], 'FailedKillPod: error killing pod: stop timed out');
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

void describe('the pod sync after an agent restart', () => {
  void it('keeps the start time and the transition times of the status the API server holds', async () => {
    const clock = new FakeClock();
    clock.set(Date.parse('2026-11-22T05:00:00Z'));
    const status = createStatusManager();
    const syncer = createPodSyncer({
      runtime: emptyRuntime(clock),
      cgroups: { ensure: () => Promise.resolve('/pod'), remove: () => Promise.resolve() },
      volumes: { preparePodVolumes: () => Promise.resolve(new Map()), cleanupPodVolumes: () => Promise.resolve() },
      status, logger: new FakeLogger(), hostIPs: () => ['10.0.0.1'], isDesired: () => true, qosClass: () => 'BestEffort', clock,
      statusGates: { podReadyToStartContainers: true, podHostIPs: true },
    });
    const before = '2026-11-22T03:00:00Z';
    const held = {
      phase: 'Pending', startTime: before,
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type, status: type === 'Initialized' || type === 'PodScheduled' ? 'True' : 'False', lastTransitionTime: before,
      })),
    };
    const pod: NodePod = { metadata: { uid: 'u1', name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: held };
    await syncer.syncPod(pod, 'create');
    const computed = status.getPodStatus('u1');
    assert.ok(computed !== undefined);
    assert.equal(computed.startTime, before);
    assert.deepEqual(computed.conditions?.map((c) => c.lastTransitionTime), [before, before, before, before, before]);
  });
});
