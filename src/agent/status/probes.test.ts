import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeContainerStatus, RuntimePodStatus } from '../kuberuntime/index.js';
import { computePodStatus, type StatusInput } from './compute.js';

const now = new Date('2026-11-22T03:00:00Z');
function c(name: string, state: RuntimeContainerStatus['state'], extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  return {
    id: `${name}-id`, name, state, createdAt: 1, startedAt: Date.parse('2026-11-22T02:59:00Z'), finishedAt: state === 'exited' ? Date.parse('2026-11-22T02:59:30Z') : 0,
    exitCode: 0, reason: '', message: '', image: 'busybox', imageRef: 'sha256:abc', restartCount: 0, hash: 'h', init: false, ...extra,
  };
}
function runtime(containers: RuntimeContainerStatus[]): RuntimePodStatus {
  return { uid: 'u', name: 'p', namespace: 'default', ips: ['10.88.0.5'], sandboxes: [{ id: 's', state: 'ready', createdAt: 1, attempt: 0, ips: ['10.88.0.5'], hostNetwork: false }], containers, timestamp: 0 };
}
const sidecarPod: Pod = {
  metadata: { uid: 'u', name: 'p', namespace: 'default' },
  spec: { restartPolicy: 'Never', initContainers: [{ name: 'proxy', restartPolicy: 'Always' }, { name: 'setup' }], containers: [{ name: 'app' }] },
};
const status = (pod: Pod, containers: RuntimeContainerStatus[], extra: Partial<StatusInput> = {}) =>
  computePodStatus({ pod, runtime: runtime(containers), syncErrors: [], hostIPs: [], previous: undefined, now, ...extra });
const cond = (s: ReturnType<typeof status>, type: string) => s.conditions?.find((x) => x.type === type)?.status;

void describe('pod status with probes, sidecars and agent failures', () => {
  const plain: Pod = { metadata: { uid: 'u', name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'app' }] } };

  void it('readiness and startup from the prober decide ready and started', () => {
    let s = status(plain, [c('app', 'running')], { readiness: new Map([['app', false]]), started: new Map([['app', false]]) });
    assert.deepEqual([s.containerStatuses?.[0]?.ready, s.containerStatuses?.[0]?.started, cond(s, 'Ready'), cond(s, 'ContainersReady')], [false, false, 'False', 'False']);
    s = status(plain, [c('app', 'running')], { readiness: new Map([['app', true]]), started: new Map([['app', true]]) });
    assert.deepEqual([s.containerStatuses?.[0]?.ready, s.containerStatuses?.[0]?.started, cond(s, 'Ready')], [true, true, 'True']);
  });

  void it('a failure decided by the agent makes the pod Failed with its reason and message', () => {
    const s = status(plain, [c('app', 'running')], { failure: { reason: 'DeadlineExceeded', message: 'too long' } });
    assert.deepEqual([s.phase, s.reason, s.message, cond(s, 'Ready')], ['Failed', 'DeadlineExceeded', 'too long', 'False']);
  });

  void it('without the gate a restartable init container is an ordinary init container', () => {
    const s = status(sidecarPod, [c('proxy', 'running', { init: true })]);
    assert.deepEqual([s.phase, cond(s, 'Initialized')], ['Pending', 'False']);
  });

  void it('with the gate: a started sidecar initializes, joins readiness, and an exited one does not count', () => {
    const gate = { sidecarContainers: true };
    let s = status(sidecarPod, [c('proxy', 'running', { init: true })], { ...gate, started: new Map([['proxy', false]]) });
    assert.deepEqual([s.phase, cond(s, 'Initialized')], ['Pending', 'False']);
    s = status(sidecarPod, [c('proxy', 'running', { init: true }), c('setup', 'exited', { init: true }), c('app', 'running')], { ...gate, readiness: new Map([['proxy', false]]) });
    assert.deepEqual([s.phase, cond(s, 'Initialized'), cond(s, 'ContainersReady')], ['Running', 'True', 'False']);
    assert.equal(s.conditions?.find((x) => x.type === 'Ready')?.message, 'containers with unready status: [proxy]');
    assert.equal(s.initContainerStatuses?.[1]?.ready, true, 'a completed init container is ready');
    s = status(sidecarPod, [c('proxy', 'exited', { init: true, exitCode: 137 }), c('setup', 'exited', { init: true }), c('app', 'exited')], gate);
    assert.equal(s.phase, 'Succeeded');
  });
});
