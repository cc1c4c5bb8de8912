import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldErrors } from '../../status/index.js';
import { podDefinition, qosClass, summarize } from './index.js';

const now = new Date('2024-05-01T12:00:00Z');
type Obj = Record<string, unknown>;
const pod = (spec: Obj, status: Obj, meta: Obj = {}): Obj => ({ metadata: { name: 'p', ...meta }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec }, status });
const running = { running: { startedAt: '2024-05-01T11:00:00Z' } };

void describe('pod printer', () => {
  void it('shows the phase, ready containers and restarts with the age of the last one', () => {
    assert.deepEqual(summarize(pod({}, { phase: 'Pending' }), now), { ready: '0/1', reason: 'Pending', restarts: '0' });
    const restarted = { name: 'c', ready: true, restartCount: 3, state: running, lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T11:55:00Z' } } };
    assert.deepEqual(summarize(pod({}, { phase: 'Running', containerStatuses: [restarted] }), now), { ready: '1/1', reason: 'Running', restarts: '3 (5m ago)' });
  });

  void it('prefers the reasons of waiting and terminated containers', () => {
    const waiting = { name: 'c', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } } };
    assert.equal(summarize(pod({}, { phase: 'Running', containerStatuses: [waiting] }), now).reason, 'CrashLoopBackOff');
    const killed = { name: 'c', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, signal: 9 } } };
    assert.equal(summarize(pod({}, { phase: 'Failed', containerStatuses: [killed] }), now).reason, 'Signal:9');
    const done = { name: 'c', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    assert.equal(summarize(pod({}, { phase: 'Succeeded', containerStatuses: [done] }), now).reason, 'Completed');
  });

  void it('shows init progress, failed init containers and ready sidecars', () => {
    const spec = { initContainers: [{ name: 'i1', image: 'x' }, { name: 'i2', image: 'x' }] };
    const first = { name: 'i1', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    const second = { name: 'i2', ready: false, restartCount: 0, state: running };
    assert.equal(summarize(pod(spec, { phase: 'Pending', initContainerStatuses: [first, second] }), now).reason, 'Init:1/2');
    const failing = { ...second, state: { waiting: { reason: 'CrashLoopBackOff' } } };
    assert.equal(summarize(pod(spec, { phase: 'Pending', initContainerStatuses: [first, failing] }), now).reason, 'Init:CrashLoopBackOff');
    const sidecarSpec = { initContainers: [{ name: 'side', image: 'x', restartPolicy: 'Always' }] };
    const sidecar = { name: 'side', ready: true, started: true, restartCount: 0, state: running };
    const main = { name: 'c', ready: true, restartCount: 0, state: running };
    assert.deepEqual(summarize(pod(sidecarSpec, { phase: 'Running', initContainerStatuses: [sidecar], containerStatuses: [main] }), now).ready, '2/2');
  });

  void it('shows Terminating once deletion was requested, unless the pod is terminal', () => {
    assert.equal(summarize(pod({}, { phase: 'Running' }, { deletionTimestamp: '2024-05-01T12:00:30Z' }), now).reason, 'Terminating');
    assert.equal(summarize(pod({}, { phase: 'Succeeded' }, { deletionTimestamp: '2024-05-01T12:00:30Z' }), now).reason, 'Succeeded');
  });
});

void describe('pod strategy', () => {
  void it('computes the QoS class from cpu and memory requests and limits', () => {
    const spec = (resources: Obj): Obj => ({ containers: [{ name: 'c', image: 'x', resources }] });
    assert.equal(qosClass(spec({})), 'BestEffort');
    assert.equal(qosClass(spec({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1024Mi' } })), 'Guaranteed');
    assert.equal(qosClass(spec({ requests: { cpu: '100m' } })), 'Burstable');
    assert.equal(qosClass(spec({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } })), 'Burstable');
  });

  void it('gives bound, running pods their grace period and others none', () => {
    const grace = (p: Obj, requested: number | undefined): number | undefined => podDefinition.strategy.gracePeriod?.(p, requested);
    const bound = pod({ nodeName: 'n1', terminationGracePeriodSeconds: 45 }, { phase: 'Running' });
    assert.equal(grace(bound, undefined), 45);
    assert.equal(grace(bound, 5), 5);
    assert.equal(grace(bound, 0), 0);
    assert.equal(grace(pod({ nodeName: 'n1' }, { phase: 'Running' }), undefined), 30);
    assert.equal(grace(pod({ nodeName: 'n1', terminationGracePeriodSeconds: -1 }, {}), undefined), 1);
    assert.equal(grace(pod({}, { phase: 'Running' }), 30), 0, 'not bound');
    assert.equal(grace(pod({ nodeName: 'n1' }, { phase: 'Failed' }), 30), 0, 'terminal');
  });

  void it('allows image and activeDeadlineSeconds changes only', () => {
    const ctx = { user: { name: 'u', uid: '', groups: [] }, now };
    const old = pod({ nodeName: 'n1', activeDeadlineSeconds: 100 }, {});
    const check = (spec: Obj): string[] => {
      const errors = new FieldErrors();
      const next = pod({ nodeName: 'n1', activeDeadlineSeconds: 100, ...spec }, {});
      podDefinition.strategy.prepareForUpdate?.(next, old, ctx);
      podDefinition.strategy.prepareForUpdate?.(old, old, ctx);
      podDefinition.strategy.validateUpdate(next, old, errors, ctx);
      return errors.list.map((e) => e.field);
    };
    assert.deepEqual(check({ containers: [{ name: 'c', image: 'y' }] }), []);
    assert.deepEqual(check({ activeDeadlineSeconds: 50 }), []);
    assert.deepEqual(check({ activeDeadlineSeconds: 200 }), ['spec.activeDeadlineSeconds']);
    assert.deepEqual(check({ hostNetwork: true }), ['spec']);
  });
});
