import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { formatTime } from '../../api/time.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../kuberuntime/index.js';
import { computePodStatus } from './compute.js';

const now = new Date('2026-11-22T03:00:00Z');
function pod(restartPolicy = 'Always', init: string[] = []): Pod {
  return {
    metadata: { uid: 'u', name: 'p', namespace: 'default' },
    spec: { restartPolicy, containers: [{ name: 'a', image: 'busybox' }, { name: 'b', image: 'busybox' }], initContainers: init.map((name) => ({ name, image: 'busybox' })) },
  };
}
function c(name: string, state: RuntimeContainerStatus['state'], extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  return {
    id: `${name}-${extra.restartCount ?? 0}`, name, state, createdAt: 1, startedAt: Date.parse('2026-11-22T02:59:00Z'), finishedAt: state === 'exited' ? Date.parse('2026-11-22T02:59:30Z') : 0,
    exitCode: 0, reason: '', message: '', image: 'busybox', imageRef: 'sha256:abc', restartCount: 0, hash: 'h', init: false, ...extra,
  };
}
function runtime(containers: RuntimeContainerStatus[]): RuntimePodStatus {
  return { uid: 'u', name: 'p', namespace: 'default', ips: ['10.88.0.5'], sandboxes: [{ id: 's', state: 'ready', createdAt: 1, attempt: 0, ips: ['10.88.0.5'], hostNetwork: false }], containers, timestamp: 0 };
}
const status = (p: Pod, r: RuntimePodStatus, errors: { container: string; reason: 'CrashLoopBackOff' | 'ErrImagePull'; message: string }[] = []) =>
  computePodStatus({ pod: p, runtime: r, syncErrors: errors, hostIPs: ['192.0.2.1'], previous: undefined, now });

void describe('pod status', () => {
  void it('is Pending with ContainerCreating before anything runs', () => {
    const s = status(pod(), runtime([]));
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(s.containerStatuses?.[0]?.state, { waiting: { reason: 'ContainerCreating' } });
    assert.equal(s.conditions?.find((x) => x.type === 'Ready')?.message, 'containers with unready status: [a b]');
  });

  void it('is Running and Ready when every container runs', () => {
    const s = status(pod(), runtime([c('a', 'running'), c('b', 'running')]));
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.88.0.5');
    assert.equal(s.hostIP, '192.0.2.1');
    assert.deepEqual(s.conditions?.map((x) => `${x.type}=${x.status}`), ['Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True']);
    assert.equal(s.hostIPs, undefined);
    const a = s.containerStatuses?.[0];
    assert.ok(a);
    assert.deepEqual([a.containerID, a.imageID, a.started], ['containerd://a-0', 'sha256:abc', true]);
  });

  void it('reports PodReadyToStartContainers and status.hostIPs only with their gates on, the condition following the sandbox', () => {
    const gated = (r: RuntimePodStatus, previous?: PodStatus, at = now) => computePodStatus({
      pod: pod(), runtime: r, syncErrors: [], hostIPs: ['192.0.2.1', '2001:db8::1'], previous, now: at, podReadyToStartContainers: true, podHostIPs: true,
    });
    const up = gated(runtime([c('a', 'running'), c('b', 'running')]));
    assert.deepEqual(up.conditions?.map((x) => `${x.type}=${x.status}`), ['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True']);
    assert.equal(up.hostIP, '192.0.2.1');
    assert.deepEqual(up.hostIPs, [{ ip: '192.0.2.1' }, { ip: '2001:db8::1' }]);
    const down = runtime([]);
    const later = new Date(now.getTime() + 60_000);
    const noSandbox = gated({ ...down, sandboxes: down.sandboxes.map((s) => ({ ...s, state: 'notready' as const })) }, up, later);
    const cond = noSandbox.conditions?.find((x) => x.type === 'PodReadyToStartContainers');
    assert.equal(cond?.status, 'False');
    assert.equal(cond.lastTransitionTime, formatTime(later.getTime()));
    assert.equal(noSandbox.conditions?.find((x) => x.type === 'PodScheduled')?.lastTransitionTime, formatTime(now.getTime()));
  });

  void it('reports ephemeral containers in ephemeralContainerStatuses, never ready, outside the phase and readiness', () => {
    const p = pod();
    p.spec = { ...p.spec, containers: p.spec?.containers ?? [], ephemeralContainers: [{ name: 'dbg', image: 'busybox' }, { name: 'dbg2', image: 'busybox' }] };
    const s = status(p, runtime([c('a', 'running'), c('b', 'running'), c('dbg', 'exited', { ephemeral: true, exitCode: 1 })]), [{ container: 'dbg2', reason: 'ErrImagePull', message: 'no such image' }]);
    assert.equal(s.phase, 'Running');
    assert.equal(s.conditions?.find((x) => x.type === 'Ready')?.status, 'True');
    assert.deepEqual(s.containerStatuses?.map((x) => x.name), ['a', 'b']);
    const [dbg, dbg2] = s.ephemeralContainerStatuses ?? [];
    assert.deepEqual([dbg?.name, dbg?.ready, dbg?.started, dbg?.state?.terminated?.exitCode, dbg?.containerID], ['dbg', false, undefined, 1, 'containerd://dbg-0']);
    assert.deepEqual(dbg2?.state, { waiting: { reason: 'ErrImagePull', message: 'no such image' } });
    assert.equal(status(pod(), runtime([c('a', 'running'), c('b', 'running')])).ephemeralContainerStatuses, undefined);
  });

  void it('is Failed with the reason the agent decided; a disruption adds the DisruptionTarget condition', () => {
    const failure = { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.', disruptionReason: 'TerminationByNodeagent' };
    const s = computePodStatus({ pod: pod(), runtime: runtime([c('a', 'running'), c('b', 'running')]), syncErrors: [], hostIPs: [], previous: undefined, now, failure });
    assert.deepEqual([s.phase, s.reason, s.message], ['Failed', failure.reason, failure.message]);
    assert.deepEqual(s.conditions?.at(-1), { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByNodeagent', message: failure.message, lastTransitionTime: '2026-11-22T03:00:00Z' });
    const plain = computePodStatus({ pod: pod(), runtime: runtime([]), syncErrors: [], hostIPs: [], previous: undefined, now, failure: { reason: 'DeadlineExceeded', message: 'm' } });
    assert.equal(plain.conditions?.some((x) => x.type === 'DisruptionTarget'), false);
  });

  void it('shows CrashLoopBackOff with the last termination', () => {
    const s = status(pod(), runtime([c('a', 'exited', { exitCode: 2, restartCount: 3 }), c('b', 'running')]), [{ container: 'a', reason: 'CrashLoopBackOff', message: 'back-off 40s' }]);
    const a = s.containerStatuses?.[0];
    assert.ok(a);
    assert.deepEqual(a.state, { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } });
    assert.deepEqual([a.lastState?.terminated?.exitCode, a.lastState?.terminated?.reason, a.restartCount], [2, 'Error', 3]);
    assert.equal(s.phase, 'Running');
  });

  void it('decides terminal phases by the restart policy', () => {
    const done = runtime([c('a', 'exited'), c('b', 'exited', { exitCode: 1 })]);
    assert.equal(status(pod('Never'), done).phase, 'Failed');
    assert.equal(status(pod('OnFailure'), done).phase, 'Running');
    assert.equal(status(pod('Always'), done).phase, 'Running');
    const ok = runtime([c('a', 'exited'), c('b', 'exited')]);
    const s = status(pod('OnFailure'), ok);
    assert.equal(s.phase, 'Succeeded');
    assert.equal(s.conditions?.find((x) => x.type === 'Ready')?.reason, 'PodCompleted');
  });

  void it('waits for init containers, failing the pod when one fails under Never', () => {
    const p = pod('Always', ['i1', 'i2']);
    let s = status(p, runtime([c('i1', 'exited', { init: true }), c('i2', 'running', { init: true })]));
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(s.containerStatuses?.[0]?.state, { waiting: { reason: 'PodInitializing' } });
    assert.equal(s.conditions?.find((x) => x.type === 'Initialized')?.message, 'containers with incomplete status: [i2]');
    s = status(pod('Never', ['i1']), runtime([c('i1', 'exited', { init: true, exitCode: 1 })]));
    assert.equal(s.phase, 'Failed');
  });

  void it('keeps transition times of unchanged conditions', () => {
    const first = status(pod(), runtime([c('a', 'running'), c('b', 'running')]));
    const later = computePodStatus({ pod: pod(), runtime: runtime([c('a', 'running'), c('b', 'running')]), syncErrors: [], hostIPs: [], previous: first, now: new Date('2026-11-22T04:00:00Z') });
    assert.equal(later.conditions?.[2]?.lastTransitionTime, '2026-11-22T03:00:00Z');
    assert.equal(later.startTime, '2026-11-22T03:00:00Z');
  });
});
